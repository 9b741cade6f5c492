// Exploration round 27 (issue 9, not part of gemvlab): gemvlab's row_tiles with the row's sum
// written as straight runs of columns.
//
// gemvlab's sum_row (cuda/row_tiles.cu) steps k += G and wraps k at K on every column, for the
// rotation at even row strides; at odd strides k never wraps, but the check is still there. In
// its SASS (sm_90, nvcc 13.0), G = 2, the loop unrolled by 4 takes 45 instructions for 4 columns:
// 8 LDS and 4 FFMA, the rest index arithmetic (ISETP, SEL, IADD, IMAD per column). Round 20's
// counters at 2,000,000 x 45 gave about 0.7 warp instructions per cycle per scheduler: if issue
// is what limits those shapes, fewer instructions per column should show.
//
// Here the same columns, in the same order, with the same two accumulators (so the same bits), are
// summed as two straight runs: from the start column to the row's end, then, where the rotation
// wrapped, from the wrapped column on. No wrap check per column.
#include "row_tiles.cu"

template <int G>
__device__ __forceinline__ void sum_row_runs(const float* tile, const float* Bs, const TileSpan& s, int lda, int K,
                                             int row, float* __restrict__ C) {
    const int lane = threadIdx.x % G;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < s.rows) {
        const float* a = tile + s.off + row * lda;
        const int count = (K - lane + G - 1) / G;
        int k = lane + (lda % 2 == 0 ? row % K : 0);
        if (k >= K) k -= K;
        int m = 0;
        // first run: k up to the row's end
        const int first = min(count, (K - k + G - 1) / G);
#pragma unroll 4
        for (; m < first; ++m, k += G) {
            const float p = a[k] * Bs[k];
            if (m % 2) s1 += p; else s0 += p;
        }
        k -= K;
#pragma unroll 4
        for (; m < count; ++m, k += G) {
            const float p = a[k] * Bs[k];
            if (m % 2) s1 += p; else s0 += p;
        }
    }
    float sum = s0 + s1;
    for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (row < s.rows && lane == 0) C[s.r0 + row] = sum;
}

template <int G, int R>
__global__ void gemv_row_tiles_runs(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                                    float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float tile[TILE_FLOATS + 4];
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    const int groups = blockDim.x / G;
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, groups * R);
    load_tile(tile, s);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) sum_row_runs<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G + r * groups, C);
}

// Same arguments and checks as launch_row_tiles.
extern "C" int launch_round27_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64, R = p->variant / 64 + 1;
    if (G < 1 || block < 32 || block % 32 || block < G) return (int)cudaErrorInvalidValue;
    const long long rows_per_tile = (long long)block / G * R;
    if (K > MAX_K || (rows_per_tile - 1) * lda + K > TILE_FLOATS) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    switch (p->variant) {
#define GEMV_TILE(g, r) \
    case g + 64 * (r - 1): gemv_row_tiles_runs<g, r><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break;
        GEMV_TILE(1, 1) GEMV_TILE(2, 1) GEMV_TILE(4, 1) GEMV_TILE(8, 1) GEMV_TILE(16, 1) GEMV_TILE(32, 1)
        GEMV_TILE(1, 2)
#undef GEMV_TILE
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
