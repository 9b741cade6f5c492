// Stage 5 - multirow: ROWS rows per block, each load of B used ROWS times.
//
// Change from stage 4: a block computes ROWS neighbouring rows. Each trip a thread loads one float4
// of B and the float4s at the same column of its ROWS rows of A, so every load of B serves ROWS
// rows. The ROWS loads of A are written before any use, but ptxas issues only row 0's before the
// first multiply (the SASS of multirow<2> and <4>). A is read past the L1 (__ldcg), as in stage 4.
//
// When it pays: where rows are short (fewer, fuller blocks). The cost: ROWS accumulators and ROWS
// float4s live in registers; as ROWS grows, fewer blocks fit on an SM, and past the register limit
// the compiler spills to local memory (the resource report shows it).
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum_rows(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

template <int ROWS>
__global__ void gemv_multirow(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, long long M, long long K) {
    const long long row0 = (long long)blockIdx.x * ROWS;
    const long long left = M - row0;
    const int rows = left < ROWS ? (int)left : ROWS;  // the last block may get fewer
    const long long K4 = K / 4;  // K % 4 == 0 and 16-byte alignment, checked before launch
    const float4* a4 = reinterpret_cast<const float4*>(A + row0 * K);  // 64-bit offset
    const float4* b4 = reinterpret_cast<const float4*>(B);

    float acc[ROWS] = {};
    for (long long i = threadIdx.x; i < K4; i += blockDim.x) {
        const float4 b = b4[i];  // loaded once, used ROWS times
        float4 a[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r)  // rows past M re-read the last
            a[r] = __ldcg(a4 + min(r, rows - 1) * K4 + i);
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            acc[r] += a[r].x * b.x + a[r].y * b.y + a[r].z * b.z + a[r].w * b.w;
    }

    // Reduce each row: shuffles within each warp, then the warps' partial sums
    // through shared memory, one warp finishing each row.
    __shared__ float warp_partial[ROWS][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[r] = warp_sum_rows(acc[r]);  // lane 0: this warp's sums
    if (warps == 1) {  // a one-warp block (short rows) is done: no shared memory, no barrier
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            if (lane == 0 && r < rows) C[row0 + r] = acc[r];
        return;
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
        if (lane == 0) warp_partial[r][warp] = acc[r];
    __syncthreads();
    for (int r = warp; r < rows; r += warps) {
        float s = lane < warps ? warp_partial[r][lane] : 0.0f;
        s = warp_sum_rows(s);
        if (lane == 0) C[row0 + r] = s;
    }
}

// `variant` is ROWS, the rows each block computes.
extern "C" int launch_multirow(const float* A, const float* B, float* C, long long M,
                               long long K, int block, int variant, cudaStream_t stream) {
    if (variant < 1) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + variant - 1) / variant);
    switch (variant) {
        case 1: gemv_multirow<1><<<grid, block, 0, stream>>>(A, B, C, M, K); break;
        case 2: gemv_multirow<2><<<grid, block, 0, stream>>>(A, B, C, M, K); break;
        case 4: gemv_multirow<4><<<grid, block, 0, stream>>>(A, B, C, M, K); break;
        case 8: gemv_multirow<8><<<grid, block, 0, stream>>>(A, B, C, M, K); break;
        case 16: gemv_multirow<16><<<grid, block, 0, stream>>>(A, B, C, M, K); break;
        case 32: gemv_multirow<32><<<grid, block, 0, stream>>>(A, B, C, M, K); break;
        case 64: gemv_multirow<64><<<grid, block, 0, stream>>>(A, B, C, M, K); break;  // spills
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
