// Exercise 2 (notebook 02): add a block's partial sums as a tree in shared memory.
//
// One block per row, as in stage 2: thread t reads elements t, t + blockDim.x, ... of its row
// (coalesced) and stores its partial sum in partial[t]. The TODO is the tree that adds the block's
// blockDim.x partial sums into partial[0]. blockDim.x is a power of two.
//
// try_kernel: reference coalesced, block 256, shape 2048 x 65536, mark 1.1
#include <cuda_runtime.h>

__global__ void gemv_exercise(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              long long K) {
    extern __shared__ float partial[];  // blockDim.x floats, sized by the launch
    const float* a = A + (long long)blockIdx.x * K;
    float sum = 0.0f;
    for (long long k = threadIdx.x; k < K; k += blockDim.x) sum += a[k] * B[k];
    partial[threadIdx.x] = sum;
    __syncthreads();
    // TODO: for s = blockDim.x / 2, then s / 2, ... down to 1: threads t < s add partial[t + s] to
    // partial[t]. Every thread must reach a __syncthreads() after each level.
    if (threadIdx.x == 0) C[blockIdx.x] = partial[0];
}

extern "C" int launch_exercise(const float* A, const float* B, float* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    (void)variant;
    gemv_exercise<<<(unsigned)M, block, block * sizeof(float), stream>>>(A, B, C, K);
    return (int)cudaGetLastError();
}
