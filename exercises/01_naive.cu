// Exercise 1 (notebook 01): more bytes in flight per thread.
//
// Stage 1 gives each thread one row and one running sum. Its next floats lie in the same 32-byte
// sector, so a warp keeps about one sector per lane in flight (1 KiB). Here each thread sums its row as four
// quarters at once: element k of each quarter, in four running sums. The four loads of a step are
// independent, in four different sectors, so a warp can keep four times the bytes in flight.
// K is a multiple of 4 here. The TODO: the other three quarters.
//
// try_kernel: reference naive, block 32, shape 2048 x 65536, mark 0.85
#include <cuda_runtime.h>

__global__ void gemv_exercise(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              long long M, long long K) {
    const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* a = A + row * K;  // 64-bit offset
    const long long q = K / 4;  // one quarter of the row
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (long long k = 0; k < q; ++k) {
        s0 += a[k] * B[k];
        // TODO: the same step in the second, third and fourth quarters, into s1, s2 and s3
        //       (element k + q, k + 2 * q and k + 3 * q).
    }
    C[row] = (s0 + s1) + (s2 + s3);
}

extern "C" int launch_exercise(const float* A, const float* B, float* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    (void)variant;
    const long long grid = (M + block - 1) / block;
    gemv_exercise<<<(unsigned)grid, block, 0, stream>>>(A, B, C, M, K);
    return (int)cudaGetLastError();
}
