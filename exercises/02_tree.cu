// Exercise 2 (notebook 02): a tree that works for any block size.
//
// Stage 2's tree halves the block at each level, so it needs a power of two: with 384 threads the
// value in slot 2 is never added. Here the block has 384 threads. Fix the tree: first fold the
// threads above the largest power of two p <= blockDim.x onto the first ones (thread t < blockDim.x
// - p adds partial[t + p]), with a barrier, then run the usual tree over p. The TODO marks where.
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
    // TODO: p, the largest power of two <= blockDim.x; threads t < blockDim.x - p add partial[t + p]
    // to partial[t]; then a __syncthreads(). The tree below must then start from p / 2.
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
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
