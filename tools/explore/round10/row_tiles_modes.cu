// Dispatcher kernel: row tiles, for rows so short that even a few lanes per row load them
// poorly.
//
// rows_per_warp gives each row G lanes, and a warp's load instruction then covers 32 / G rows,
// G float4s of each, from as many places in memory; where a row is not a whole number of
// float4s (K = 50: 200 bytes), every row also has a scalar head or tail, and B, not aligned
// where the rows are, is read as scalars. On the H200, M = 4,000,000 rows of K = 50 ran at 0.77
// of the read ceiling that way (gemvlab/recorded/h200.json of 2026-11-30).
//
// Consecutive rows are one contiguous stretch of A when the row stride is K (or a little more).
// So a block reads the stretch holding its rows, blockDim.x / G of them, as the read ceiling
// does: every thread loads float4s of one flat array, up to 4 loads written before any is used,
// each warp's load 512 contiguous bytes; it stores them to shared memory, and after a barrier G
// lanes sum each row from there, reading B through the L1 (K floats, which every block reads).
// The sums are added in one fixed order: the same bits on every run.
//
// The stretch may start anywhere: its 0 to 3 floats before the first 16-byte boundary and the
// 0 to 3 after the last whole float4 are loaded as scalars. The float at span[j] goes to
// tile[off + j], where off is span's offset in floats from a 16-byte boundary, so the body's
// float4s land 16-byte aligned in shared memory too. Floats between rows (a row stride above K)
// are loaded with the rest and not used: the dispatcher takes this kernel only where they are
// few.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "launch_args.cuh"

constexpr int TILE_FLOATS = 4096;  // 16 KB of shared memory per tile; the rule keeps a tile's rows within it

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

// The tile through registers: up to 4 float4 loads per thread per trip written before any is
// used, then stored to shared memory.
__device__ __forceinline__ void load_tile(float* tile, const TileSpan& s) {
    const int t = threadIdx.x;
    float4* tile4 = reinterpret_cast<float4*>(tile + s.off + s.head);  // off + head is 0 or 4: aligned
    const float4* span4 = reinterpret_cast<const float4*>(s.span + s.head);
    const float h = t < s.head ? __ldcg(s.span + t) : 0.0f;
    const float e = s.tail + t < s.n ? __ldcg(s.span + s.tail + t) : 0.0f;
    for (long long i0 = t; i0 < s.n4; i0 += 4 * (long long)blockDim.x) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            v[u] = i < s.n4 ? __ldcg(span4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            if (i < s.n4) tile4[i] = v[u];
        }
    }
    if (t < s.head) tile[s.off + t] = h;
    if (s.tail + t < s.n) tile[s.off + s.tail + t] = e;
}

// The tile with asynchronous copies (cp.async): global memory to shared memory without
// registers, so a thread can have all of its share of a tile in flight while it sums another.
__device__ __forceinline__ void copy_tile_async(float* tile, const TileSpan& s) {
    const int t = threadIdx.x;
    float4* tile4 = reinterpret_cast<float4*>(tile + s.off + s.head);
    const float4* span4 = reinterpret_cast<const float4*>(s.span + s.head);
    for (long long i = t; i < s.n4; i += blockDim.x) __pipeline_memcpy_async(tile4 + i, span4 + i, 16);
    if (t < s.head) __pipeline_memcpy_async(tile + s.off + t, s.span + t, 4);
    if (s.tail + t < s.n) __pipeline_memcpy_async(tile + s.off + s.tail + t, s.span + s.tail + t, 4);
}

// G lanes per row sum the tile's rows from shared memory into C, in one fixed order per row.
// MODE 0 (round 8's): B through the L1, 64-bit indices, one accumulator.
template <int G>
__device__ __forceinline__ void sum_rows_plain(const float* tile, const TileSpan& s, long long lda, long long K,
                                               const float* __restrict__ B, float* __restrict__ C) {
    const int row = threadIdx.x / G, lane = threadIdx.x % G;
    float sum = 0.0f;
    if (row < s.rows) {
        const float* a = tile + s.off + row * lda;
        for (long long k = lane; k < K; k += G) sum += a[k] * __ldg(B + k);
    }
    // xor shuffles stay inside aligned groups of G lanes; every lane takes part (full mask)
    for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (row < s.rows && lane == 0) C[s.r0 + row] = sum;
}

// MODE 1 and 2: B from shared memory (Bs, K floats), 32-bit indices, two accumulators. With an
// even row stride, row r starts at column r % K and wraps: the rows of a warp reading their
// m-th float then hit banks an odd stride apart, instead of the same few (at K = 64 every row
// would start on bank 0). Any order is fixed per row, so the bits are the same on every run.
template <int G>
__device__ __forceinline__ void sum_rows_shared_b(const float* tile, const float* Bs, const TileSpan& s, int lda,
                                                  int K, float* __restrict__ C) {
    const int row = threadIdx.x / G, lane = threadIdx.x % G;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < s.rows) {
        const float* a = tile + s.off + row * lda;
        const int count = (K - lane + G - 1) / G;  // this lane's columns: lane, lane + G, ...
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

// MODE 0: a block per tile, loaded through registers, then summed (sum_rows_plain).
// MODE 1: the same with sum_rows_shared_b.
// MODE 2: a persistent grid: each block copies its next tile asynchronously into a second
//         buffer while it sums the current one (sum_rows_shared_b).
template <int G, int MODE>
__global__ void gemv_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                               float* __restrict__ C, long long M, long long K) {
    const int rows_per_tile = blockDim.x / G;
    __shared__ float Bs[64];  // the rule sends rows under 64 floats here (dispatch.TILE_K)
    if constexpr (MODE > 0) {
        for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    }
    if constexpr (MODE < 2) {
        __shared__ __align__(16) float tile[TILE_FLOATS + 4];
        const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, rows_per_tile);
        load_tile(tile, s);
        __syncthreads();
        if constexpr (MODE == 0) sum_rows_plain<G>(tile, s, lda, K, B, C);
        else sum_rows_shared_b<G>(tile, Bs, s, (int)lda, (int)K, C);
    } else {
        __shared__ __align__(16) float tiles[2][TILE_FLOATS + 4];
        const long long count = (M + rows_per_tile - 1) / rows_per_tile;
        long long t = blockIdx.x;
        if (t < count) copy_tile_async(tiles[0], tile_span(A, lda, M, K, t, rows_per_tile));
        __pipeline_commit();
        for (int i = 0; t < count; t += gridDim.x, i ^= 1) {
            const long long next = t + gridDim.x;
            if (next < count) copy_tile_async(tiles[i ^ 1], tile_span(A, lda, M, K, next, rows_per_tile));
            __pipeline_commit();       // a group every trip, empty or not, so that...
            __pipeline_wait_prior(1);  // ...all but the newest are done: this thread's copies of tile t
            __syncthreads();           // and everyone else's (and Bs, on the first trip)
            sum_rows_shared_b<G>(tiles[i], Bs, tile_span(A, lda, M, K, t, rows_per_tile), (int)lda, (int)K, C);
            __syncthreads();           // tiles[i] is read before the copy two trips on overwrites it
        }
    }
}

// variant: G + 64 * MODE (G, lanes per row: 1, 2, 4, ... 32). block: a multiple of 32;
// (block / G - 1) * lda + K <= TILE_FLOATS, which the dispatcher checks (gemvlab/dispatch.py,
// tile_fits). MODE 2 runs p->grid blocks (the resident ones, from the dispatcher).
extern "C" int launch_row_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64, mode = p->variant / 64;
    const long long rows_per_tile = block / G;
    const unsigned grid = mode == 2 ? (unsigned)p->grid : (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    if (mode > 0 && K > 64) return (int)cudaErrorInvalidValue;  // B would not fit in Bs
    switch (p->variant) {
#define GEMV_TILE(g, mode) \
    case g + 64 * mode: gemv_row_tiles<g, mode><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break;
#define GEMV_TILE_MODES(g) GEMV_TILE(g, 0) GEMV_TILE(g, 1) GEMV_TILE(g, 2)
        GEMV_TILE_MODES(1) GEMV_TILE_MODES(2) GEMV_TILE_MODES(4) GEMV_TILE_MODES(8) GEMV_TILE_MODES(16)
        GEMV_TILE_MODES(32)
#undef GEMV_TILE_MODES
#undef GEMV_TILE
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
