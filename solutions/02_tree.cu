// Exercise 2 (notebook 02): a tree that works for any block size. A solution.
//
// Stage 2's tree halves the block at each level, so it needs a power of two: with 384 threads the
// value in slot 2 is never added. Here the block has 384 threads. Fix the tree: first fold the
// threads above the largest power of two p <= blockDim.x onto the first ones (thread t < blockDim.x
// - p adds partial[t + p]), with a barrier, then run the usual tree over p.
//
// try_kernel: reference coalesced, block 384, reference_block 256, shape 2048 x 65536, mark 1.35
#include <cuda_runtime.h>

__global__ void gemv_exercise(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              long long K) {
    extern __shared__ float partial[];  // blockDim.x floats, sized by the launch
    const float* a = A + (long long)blockIdx.x * K;
    float sum = 0.0f;
    for (long long k = threadIdx.x; k < K; k += blockDim.x) sum += a[k] * B[k];
    partial[threadIdx.x] = sum;
    __syncthreads();
    unsigned p = 1;
    while (2 * p <= blockDim.x) p *= 2;  // the largest power of two <= blockDim.x
    if (threadIdx.x < blockDim.x - p) partial[threadIdx.x] += partial[threadIdx.x + p];
    __syncthreads();
    for (unsigned s = p / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) C[blockIdx.x] = partial[0];
}

extern "C" int launch_exercise(const float* A, const float* B, float* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    (void)variant;
    gemv_exercise<<<(unsigned)M, block, block * sizeof(float), stream>>>(A, B, C, K);
    return (int)cudaGetLastError();
}
