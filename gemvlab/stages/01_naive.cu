// Stage 1 - naive: one thread per row.
//
// Thread `row` walks its row of A from the first element to the last and keeps a running sum.
// It is correct, simple, and slow for reasons notebook 01 measures:
//  * at each step the 32 threads of a warp read 32 different rows, K floats apart, so one load
//    instruction touches 32 separate cache lines;
//  * M = 2048 rows make only 2048 threads, 64 warps, for a GPU that holds thousands: few bytes
//    are in flight, and large blocks crowd those warps onto a few SMs;
//  * it adds K float32 terms one after another, so rounding error grows with K.
#include <cuda_runtime.h>

__global__ void gemv_naive(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, long long M, long long K) {
    const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* a = A + row * K;  // 64-bit: row * K passes 2^31 - 1 once A is over 8 GiB
    float sum = 0.0f;
    for (long long k = 0; k < K; ++k) sum += a[k] * B[k];
    C[row] = sum;
}

// Called from Python (gemvlab.stages.launch) with device pointers checked there. `variant` is
// unused here; every stage's launcher has the same signature.
extern "C" int launch_naive(const float* A, const float* B, float* C, long long M,
                            long long K, int block, int variant, cudaStream_t stream) {
    (void)variant;
    const long long grid = (M + block - 1) / block;
    gemv_naive<<<(unsigned)grid, block, 0, stream>>>(A, B, C, M, K);
    return (int)cudaGetLastError();  // a bad launch configuration shows here, at once
}
