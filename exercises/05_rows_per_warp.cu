// Exercise 5 (notebook 05): G lanes per row, for rows too short to keep a block busy.
//
// A group of G lanes (G = `variant`, a power of two up to 32) takes one row: lane l of the group
// reads float4s l, l + G, ... of the row. The TODO is adding the group's G sums: xor shuffles with
// offsets G / 2, G / 4, ... 1 stay inside each aligned group of G lanes. Rows are K floats, K % 4 == 0.
//
// try_kernel: reference gemv, block 64, variant 8, shape 1000000 x 128, mark 1.3
#include <cuda_runtime.h>

__global__ void gemv_exercise(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              long long M, long long K, int G) {
    const int lane = threadIdx.x % G;  // this thread's place in its row's group
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / G;
    float v = 0.0f;
    if (row < M) {
        const float4* a4 = reinterpret_cast<const float4*>(A + row * K);
        const float4* b4 = reinterpret_cast<const float4*>(B);
        for (long long i = lane; i < K / 4; i += G) {
            const float4 a = __ldcg(a4 + i), b = b4[i];
            v += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
        }
    }
    // TODO: add the group's G sums with xor shuffles (__shfl_xor_sync), offset G / 2, halving down to 1;
    //       at each step a lane adds the v of lane (lane ^ offset), so every lane ends with the group's sum.
    // Every lane of the warp must run it (rows past M add zeros), as the full mask promises.
    if (row < M && lane == 0) C[row] = v;
}

extern "C" int launch_exercise(const float* A, const float* B, float* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    const int G = variant;
    if (G < 1 || G > 32 || (G & (G - 1)) || block % 32) return (int)cudaErrorInvalidValue;
    const long long rows_per_block = block / G;
    gemv_exercise<<<(unsigned)((M + rows_per_block - 1) / rows_per_block), block, 0, stream>>>(A, B, C, M, K, G);
    return (int)cudaGetLastError();
}
