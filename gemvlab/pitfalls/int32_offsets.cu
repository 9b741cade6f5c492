// Pitfall: a row offset computed in 32-bit int.
//
// Stage 2 with `int` where the stages use `long long`. row * K is an int product: at M = 2048,
// K = 2^20 the largest, 2047 * 2^20, still fits below 2^31 - 1; add one row and row 2048 computes
// 2048 * 2^20 = 2^31, which does not fit in an int. Signed overflow is undefined behaviour in C++;
// where it wraps to -2^31 (the usual outcome), the block reads 8 GiB *before* A: a fault if
// nothing is mapped there, silently wrong numbers if something is.
#include <cuda_runtime.h>

__global__ void gemv_int32_offsets(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, int K) {
    extern __shared__ float partial[];
    const int row = blockIdx.x;
    const float* a = A + row * K;  // BUG: int * int overflows once row * K >= 2^31
    float sum = 0.0f;
    for (int k = threadIdx.x; k < K; k += blockDim.x) sum += a[k] * B[k];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) C[row] = partial[0];
}

extern "C" int launch_int32_offsets(const float* A, const float* B, float* C, long long M, long long K,
                                    int block, int variant, cudaStream_t stream) {
    (void)variant;
    gemv_int32_offsets<<<(unsigned)M, block, block * sizeof(float), stream>>>(A, B, C, (int)K);
    return (int)cudaGetLastError();
}
