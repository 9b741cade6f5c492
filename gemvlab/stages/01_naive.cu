// Stage 1 - naive: one thread per row.
//
// Thread `row` walks its row of A from the first element to the last and keeps a
// running sum. It is correct, simple, and slow for reasons you will measure:
//  * at any moment the 32 threads of a warp read 32 different rows, K floats
//    apart, so one load instruction touches 32 separate 32-byte sectors
//    (uncoalesced; stage 2 fixes this);
//  * M = 2048 rows make only 2048 threads, 64 warps, for a GPU with 132 SMs
//    that each hold up to 64 warps: few bytes are in flight. With 256 threads
//    per block or more, the warps crowd onto at most 8, 4 or 2 SMs (one block
//    per SM is assumed; where blocks land is not measured), which must each
//    handle 32 lines per load instruction: the block size moves the time 6.0x
//    (notebook 01 measures it, and models it with a per-SM rate of about one
//    line per clock, put in the L1 and fitted to that same sweep; which unit
//    sets it is not measured);
//  * it adds K float32 terms one after another, so rounding error grows with K
//    (1.5e-4 relative error at K = 2^20 on the H200, against under 1e-7 for
//    the later stages' trees: notebook 01 prints the serial sum's and a tree's
//    on the CPU, notebook 04 the stages').
#include <cuda_runtime.h>

__global__ void gemv_naive(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, long long M, long long K) {
    const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    // 64-bit: at the headline shape the largest index, M * K - 1, is exactly 2^31 - 1, the
    // largest int; one more row and an int would overflow (notebook 04).
    const float* a = A + row * K;
    float sum = 0.0f;
    for (long long k = 0; k < K; ++k) sum += a[k] * B[k];
    C[row] = sum;
}

// Called from Python (gemvlab.kernels) with device pointers that were checked
// there. `variant` is unused here; every stage's launcher has one signature.
extern "C" int launch_naive(const float* A, const float* B, float* C, long long M,
                            long long K, int block, int variant, cudaStream_t stream) {
    (void)variant;
    const long long grid = (M + block - 1) / block;
    gemv_naive<<<(unsigned)grid, block, 0, stream>>>(A, B, C, M, K);
    return (int)cudaGetLastError();  // a bad launch configuration shows here, at once
}
