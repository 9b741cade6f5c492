// Dispatcher kernel: row tiles, for many rows of at most GEMV_TILE_MAX_K floats.
//
// Why: a few lanes per row read short rows poorly: a warp's load covers many rows, a few float4s
// of each, and rows that are not whole float4s add scalar heads and tails. But consecutive rows
// are one contiguous stretch of A when the row stride is K (or a little more). So a block loads
// the stretch holding its rows as one flat array into shared memory (the tile), as the read
// ceiling reads A: every warp's load is 512 contiguous bytes, U loads per thread written before
// any is used. After a barrier, G lanes sum each of R rows per group from the tile, with B copied
// to shared memory too.
//
// Invariants: the tile's rows fit GEMV_TILE_FLOATS floats (the launcher refuses more); the stretch
// may start anywhere (its first floats up to a 16-byte boundary and its last after the final whole
// float4 are loaded as scalars, and span[j] lands at tile[off + j] so the body stays aligned);
// floats between rows are loaded and not used (the rule allows few); offsets into A are 64-bit; a
// row's sum is added in one fixed order, so the same inputs give the same bits on every run.
#include <cuda_runtime.h>

#include "launch_args.cuh"

constexpr int TILE_FLOATS = GEMV_TILE_FLOATS;  // the static tile's floats (U == 4); the rule keeps a tile's rows within it
constexpr int MAX_K = GEMV_TILE_MAX_K;          // B's room in shared memory; the rule sends only rows this short

// Where tile t's rows lie: rows r0 .. r0 + rows - 1, the span of A from the first row's first
// float to the last row's last (n floats), and how it is cut: a head of `head` floats up to a
// 16-byte boundary, n4 float4s, a tail from `tail` on. off: the span's offset in floats from a
// 16-byte boundary; span[j] goes to tile[off + j], so the body lands 16-byte aligned.
struct TileSpan {
    long long r0, n, n4, tail;
    int rows, off, head;
    const float* span;
};

__device__ __forceinline__ TileSpan tile_span(const float* A, long long lda, long long M, long long K,
                                              long long t, int rows_per_tile) {
    TileSpan s;
    s.r0 = t * rows_per_tile;
    s.rows = (int)min((long long)rows_per_tile, M - s.r0);
    s.span = A + s.r0 * lda;
    s.n = (s.rows - 1) * lda + K;
    s.off = (int)((reinterpret_cast<size_t>(s.span) & 15) / 4);
    s.head = (int)min((long long)((4 - s.off) & 3), s.n);
    s.n4 = (s.n - s.head) / 4;
    s.tail = s.head + 4 * s.n4;
    return s;
}

// The tile through registers: U float4 loads per thread per trip written before any is used,
// then stored to shared memory. U = 4: each thread runs its own trips. U > 4 (the dispatcher picks
// as many as make the tile one trip): the trips are counted per warp, so that every lane reaches
// the __syncwarp between the loads and the stores, which keeps ptxas (nvcc 13.0, sm_90) from
// moving stores in between the loads: a store waits for its load, and the loads after it would
// go out one memory latency late.
template <int U>
__device__ __forceinline__ void load_tile(float* tile, const TileSpan& s) {
    const int t = threadIdx.x;
    float4* tile4 = reinterpret_cast<float4*>(tile + s.off + s.head);  // off + head is 0 or 4 (aligned) where n4 > 0
    const float4* span4 = reinterpret_cast<const float4*>(s.span + s.head);
    const float h = t < s.head ? __ldcg(s.span + t) : 0.0f;
    const float e = s.tail + t < s.n ? __ldcg(s.span + s.tail + t) : 0.0f;
    const long long first = U == 4 ? t : t - t % 32;  // U > 4: the warp's first lane decides the trips
    for (long long f0 = first; f0 < s.n4; f0 += U * (long long)blockDim.x) {
        const long long i0 = f0 + (t - first);
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            v[u] = i < s.n4 ? __ldcg(span4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        if (U > 4) __syncwarp();
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            if (i < s.n4) tile4[i] = v[u];
        }
    }
    if (t < s.head) tile[s.off + t] = h;
    if (s.tail + t < s.n) tile[s.off + s.tail + t] = e;
}

// G lanes sum the tile's row `row` into C: B from shared memory (Bs, K floats), 32-bit indices,
// two accumulators. Shared memory has 32 banks of 4 bytes, each serving one address per pass; with
// one lane per row, a warp's lanes read the same column of 32 rows, which at a row stride of 32 all
// fall in one bank. So with an even row stride, the tile's row r starts at column r % K and wraps,
// which spreads the lanes over more banks. Any order is fixed per row: the same bits on every run.
template <int G>
__device__ __forceinline__ void sum_row(const float* tile, const float* Bs, const TileSpan& s, int lda, int K,
                                        int row, float* __restrict__ C) {
    const int lane = threadIdx.x % G;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < s.rows) {
        const float* a = tile + s.off + row * lda;
        const int count = (K - lane + G - 1) / G;  // how many columns: lane, lane + G, ... (rotated below)
        int k = lane + (lda % 2 == 0 ? row % K : 0);
        if (k >= K) k -= K;
#pragma unroll 4
        for (int m = 0; m < count; ++m) {
            const float p = a[k] * Bs[k];
            if (m % 2) s1 += p; else s0 += p;
            k += G;
            if (k >= K) k -= K;
        }
    }
    float sum = s0 + s1;
    for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (row < s.rows && lane == 0) C[s.r0 + row] = sum;
}

// Each group of G lanes sums R rows of the tile: rows g, g + groups, ... (groups = blockDim.x / G).
// R > 1 (rows of at most 8 floats): more of A per block in flight, from one trip of loads. U > 4:
// the tile is more than 4 float4s per thread, so it is loaded in one trip of U loads into dynamic
// shared memory sized to it (a second trip's loads would go out only after the first trip's stores).
template <int G, int R, int U>
__global__ void gemv_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                               float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float static_tile[U == 4 ? TILE_FLOATS + 4 : 4];
    extern __shared__ __align__(16) float sized_tile[];  // U > 4: the launcher sizes it to the tile
    float* tile = U == 4 ? static_tile : sized_tile;
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    const int groups = blockDim.x / G;
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, groups * R);
    load_tile<U>(tile, s);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) sum_row<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G + r * groups, C);
}

// variant: GEMV_VARIANT(G, R, U): G lanes per row, R rows per group of lanes, U float4 loads per
// thread per trip (more than 4: the tile in shared memory sized to it). block: a multiple of 32,
// with (block / G * R - 1) * lda + K <= TILE_FLOATS and K <= MAX_K, which the dispatcher checks
// (gemvlab/dispatch/plan.py, tile_fits); the launcher refuses a longer K or a larger tile.
extern "C" int launch_row_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = GEMV_ARG(p->variant, 0), R = GEMV_ARG(p->variant, 1), U = GEMV_ARG(p->variant, 2);
    if (G < 1 || block < 32 || block % 32 || block < G) return (int)cudaErrorInvalidValue;
    const long long rows_per_tile = (long long)block / G * R;
    const long long floats = (rows_per_tile - 1) * lda + K;
    if (K > MAX_K || floats > TILE_FLOATS) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    const size_t sized = U > 4 ? (size_t)((floats + 4 + 3) / 4) * 16 : 0;  // the span's offset (0 to 3) + floats
    switch (p->variant) {
#define GEMV_TILE(g, r, u)                                                                            \
    case GEMV_VARIANT(g, r, u):                                                                       \
        gemv_row_tiles<g, r, u><<<grid, block, sized, stream>>>(A, lda, B, C, M, K); break;
        // the instantiations: gemvlab.dispatch.kernels.ROW_TILES_COMPILED
        GEMV_TILE(1, 4, 4) GEMV_TILE(1, 4, 5) GEMV_TILE(1, 4, 6) GEMV_TILE(1, 4, 7) GEMV_TILE(1, 4, 8)
        GEMV_TILE(1, 1, 4) GEMV_TILE(1, 1, 5) GEMV_TILE(1, 1, 6) GEMV_TILE(1, 1, 7) GEMV_TILE(1, 1, 8)
        GEMV_TILE(1, 1, 9) GEMV_TILE(1, 1, 10) GEMV_TILE(1, 1, 11) GEMV_TILE(1, 1, 12)
        GEMV_TILE(2, 1, 7) GEMV_TILE(2, 1, 8)
#undef GEMV_TILE
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
