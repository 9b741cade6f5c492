// Exercise 1 (notebook 01): write the naive kernel. A solution.
//
// try_kernel: reference naive, block 32, shape 2053 x 65536, mark 1.15
#include <cuda_runtime.h>

__global__ void gemv_exercise(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              long long M, long long K) {
    const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* a = A + row * K;
    float sum = 0.0f;
    for (long long k = 0; k < K; ++k) sum += a[k] * B[k];
    C[row] = sum;
}

extern "C" int launch_exercise(const float* A, const float* B, float* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    (void)variant;
    const long long grid = (M + block - 1) / block;  // round up: the last block covers the last rows
    gemv_exercise<<<(unsigned)grid, block, 0, stream>>>(A, B, C, M, K);
    return (int)cudaGetLastError();
}
