// Pitfall: a shared array sized for one block size, launched with another.
//
// This is stage 2 with one change: the shared array is declared with a fixed size of 256 floats
// instead of being sized at launch. With 256 threads it is right. Launched with 1024, threads
// 256..1023 write past the end of the array and of the block's shared memory; what such a write
// does depends on where it lands (compute-sanitizer names the thread and the address). Stage 2
// avoids it with `extern __shared__`, sized by the launch.
#include <cuda_runtime.h>

__global__ void gemv_smem_256(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, long long K) {
    __shared__ float partial[256];  // BUG: assumes blockDim.x <= 256
    const float* a = A + (long long)blockIdx.x * K;
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

extern "C" int launch_smem_256(const float* A, const float* B, float* C, long long M, long long K,
                               int block, int variant, cudaStream_t stream) {
    (void)variant;
    gemv_smem_256<<<(unsigned)M, block, 0, stream>>>(A, B, C, K);
    return (int)cudaGetLastError();
}
