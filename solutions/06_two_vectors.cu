// Exercise 6 (notebook 06): a bf16 decode GEMV on CUDA cores, each read of W serving two vectors. A solution.
//
// One warp per row of W (bf16, K elements, K % 8 == 0, W and X 16-byte aligned, as try_kernel's
// fresh tensors are): lane l reads 16 bytes (8 elements) at
// k = 8 l, 8 l + 256, ..., converts each pair of elements to a float2, and multiplies them by the same
// elements of each vector, summing in fp32; the warp then adds its 32 sums. X holds two vectors, one
// after another (x0 at X, x1 at X + K); C is (M, 2), row by row.
//
// try_kernel: reference gemv, block 256, shape 14336 x 4096, mark 1.25, dtype bfloat16, vectors 2
#include <cuda_bf16.h>

// acc + the dot product of 8 bf16 elements of w and of x, in fp32.
__device__ __forceinline__ float dot8(uint4 w, uint4 x, float acc) {
    const __nv_bfloat162* wp = reinterpret_cast<const __nv_bfloat162*>(&w);
    const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float2 a = __bfloat1622float2(wp[i]), b = __bfloat1622float2(xp[i]);
        acc = fmaf(a.x, b.x, fmaf(a.y, b.y, acc));
    }
    return acc;
}

__global__ void gemv_exercise(const __nv_bfloat16* __restrict__ W, const __nv_bfloat16* __restrict__ X,
                              __nv_bfloat16* __restrict__ C, long long M, long long K) {
    const int lane = threadIdx.x % 32;
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (row >= M) return;  // the whole warp: one row per warp
    const uint4* w = reinterpret_cast<const uint4*>(W + row * K);
    const uint4* x0 = reinterpret_cast<const uint4*>(X);
    const uint4* x1 = reinterpret_cast<const uint4*>(X + K);
    float s0 = 0.0f, s1 = 0.0f;
#pragma unroll 4
    for (long long i = lane; i < K / 8; i += 32) {
        const uint4 wi = __ldcs(w + i);  // streaming load (evict first): W is read once
        s0 = dot8(wi, __ldg(x0 + i), s0);
        s1 = dot8(wi, __ldg(x1 + i), s1);  // the same 16 bytes of W, a second vector
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        s0 += __shfl_xor_sync(0xffffffffu, s0, offset);
        s1 += __shfl_xor_sync(0xffffffffu, s1, offset);
    }
    if (lane == 0) {
        C[row * 2 + 0] = __float2bfloat16_rn(s0);
        C[row * 2 + 1] = __float2bfloat16_rn(s1);
    }
}

extern "C" int launch_exercise(const void* A, const void* B, void* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    (void)variant;
    if (block < 32 || block > 1024 || block % 32 || K % 8) return (int)cudaErrorInvalidValue;
    const long long rows_per_block = block / 32;
    gemv_exercise<<<(unsigned)((M + rows_per_block - 1) / rows_per_block), block, 0, stream>>>(
        (const __nv_bfloat16*)A, (const __nv_bfloat16*)B, (__nv_bfloat16*)C, M, K);
    return (int)cudaGetLastError();
}
