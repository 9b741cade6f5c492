// Exercise 1 (notebook 01): write the naive kernel.
//
// One thread per row: thread `row` adds A[row * K + k] * B[k] for k = 0 .. K - 1 and writes the
// sum to C[row]. There are two TODOs: the kernel's body, and the launcher's grid. Here M is not a
// multiple of the block size, so the last block has threads with no row.
//
// try_kernel: reference naive, block 32, shape 2053 x 65536, mark 1.15
#include <cuda_runtime.h>

__global__ void gemv_exercise(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              long long M, long long K) {
    // TODO: this thread's row, as a 64-bit number: (long long)blockIdx.x * blockDim.x + threadIdx.x.
    // TODO: threads past the last row return at once (if row >= M).
    // TODO: sum A[row * K + k] * B[k] for k from 0 to K - 1, then write the sum to C[row].
}

extern "C" int launch_exercise(const float* A, const float* B, float* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    (void)variant;
    const long long grid = M / block;  // TODO: enough blocks for every row, when M % block != 0 too
    gemv_exercise<<<(unsigned)grid, block, 0, stream>>>(A, B, C, M, K);
    return (int)cudaGetLastError();
}
