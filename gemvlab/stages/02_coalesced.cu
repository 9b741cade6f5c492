// Stage 2 - coalesced: one block per row.
//
// Change from stage 1: all threads of a block share one row. Thread t reads elements t,
// t + blockDim.x, t + 2 * blockDim.x, ... so at each step the 32 threads of a warp read 32
// neighbouring floats, 128 contiguous bytes: one load instruction, few cache lines (coalesced).
// There are now M blocks, so many more warps can be resident than stage 1's M / 32.
//
// Each thread ends with a partial sum; the block adds them in shared memory as a tree: half the
// threads add the other half's values, then half of those, ... The tree's rules:
//  * the shared array holds blockDim.x floats: it is sized at launch (the third launch parameter);
//  * blockDim.x is a power of two, or the halving skips elements (checked before launch);
//  * a __syncthreads() between levels, or a thread reads a value not written yet.
#include <cuda_runtime.h>

__global__ void gemv_coalesced(const float* __restrict__ A, const float* __restrict__ B,
                               float* __restrict__ C, long long K) {
    extern __shared__ float partial[];  // blockDim.x floats, sized by the launch
    const float* a = A + (long long)blockIdx.x * K;  // 64-bit row offset
    float sum = 0.0f;
    for (long long k = threadIdx.x; k < K; k += blockDim.x) sum += a[k] * B[k];

    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) C[blockIdx.x] = partial[0];
}

extern "C" int launch_coalesced(const float* A, const float* B, float* C, long long M,
                                long long K, int block, int variant, cudaStream_t stream) {
    (void)variant;
    const size_t shared_bytes = block * sizeof(float);
    gemv_coalesced<<<(unsigned)M, block, shared_bytes, stream>>>(A, B, C, K);
    return (int)cudaGetLastError();
}
