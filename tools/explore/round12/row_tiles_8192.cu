// Dispatcher kernel: row tiles, for rows of at most 64 floats, which even a few lanes per row
// load poorly.
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
// each warp's load 512 contiguous bytes; it stores them to shared memory (the tile), and after a
// barrier G lanes sum each row from there, with B copied to shared memory too. The sums are
// added in one fixed order: the same bits on every run.
//
// The stretch may start anywhere: its 0 to 3 floats before the first 16-byte boundary and the
// 0 to 3 after the last whole float4 are loaded as scalars. The float at span[j] goes to
// tile[off + j], where off is span's offset in floats from a 16-byte boundary, so the body's
// float4s land 16-byte aligned in shared memory too. Floats between rows (a row stride above K)
// are loaded with the rest and not used: the dispatcher takes this kernel only where they are
// few.
//
// The sum is written for the shared-memory banks (32, each 4 bytes wide: floats i and i + 32
// share one). Where the row stride is even, lanes reading the same column of different rows
// would hit few banks (at a stride of 64 floats and one lane per row, a warp's 32 lanes all hit
// one bank, which serves them one after another); so row r starts its sum at column r % K and
// wraps, which puts those lanes an odd stride apart. Three changes together (B in shared memory instead of read through the L1,
// 32-bit indices, two accumulators, and that rotation) made the kernel take 23% less time at
// 10,000,000 x 8, 4% at 4,000,000 x 50, and 76% at 4,000,000 x 32, where the stride is 32
// (tools/explore/round10/round10.txt, MODE 1 against MODE 0; the changes were not timed apart).
// Loading the next tile with cp.async while summing this one (a persistent grid, MODE 2 there)
// was slower at 6 of the 8 shapes with millions of rows, and 0.6% and 1.8% faster at K = 17, 33.
#include <cuda_runtime.h>

#include "launch_args.cuh"

constexpr int TILE_FLOATS = 8192;  // 16 KB of shared memory per block; the rule keeps a block's rows within it
constexpr int MAX_K = 64;          // B's room in shared memory; the rule sends only rows this short

template <int G>
__global__ void gemv_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                               float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float tile[TILE_FLOATS + 4];
    __shared__ float Bs[MAX_K];
    const int t = threadIdx.x;
    for (int k = t; k < K; k += blockDim.x) Bs[k] = B[k];
    // the tile: rows r0 .. r0 + rows - 1, one contiguous span of A (n floats)
    const int rows_per_tile = blockDim.x / G;
    const long long r0 = (long long)blockIdx.x * rows_per_tile;
    const int rows = (int)min((long long)rows_per_tile, M - r0);
    const float* span = A + r0 * lda;
    const int n = (int)((rows - 1) * lda + K);  // <= TILE_FLOATS
    const int off = (int)((reinterpret_cast<size_t>(span) & 15) / 4);
    const int head = min((4 - off) & 3, n);
    const int n4 = (n - head) / 4, tail = head + 4 * n4;
    float4* tile4 = reinterpret_cast<float4*>(tile + off + head);  // off + head is 0 or 4: aligned
    const float4* span4 = reinterpret_cast<const float4*>(span + head);
    // the edges' loads first (at most 3 floats each), then the body's, 4 per thread per trip
    const float h = t < head ? __ldcg(span + t) : 0.0f;
    const float e = tail + t < n ? __ldcg(span + tail + t) : 0.0f;
    for (int i0 = t; i0 < n4; i0 += 4 * blockDim.x) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int i = i0 + u * blockDim.x;
            v[u] = i < n4 ? __ldcg(span4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int i = i0 + u * blockDim.x;
            if (i < n4) tile4[i] = v[u];
        }
    }
    if (t < head) tile[off + t] = h;
    if (tail + t < n) tile[off + tail + t] = e;
    __syncthreads();
    // G lanes per row: lane l takes columns l, l + G, ... counted from the row's start column
    const int row = t / G, lane = t % G, k_count = (int)K;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < rows) {
        const float* a = tile + off + row * (int)lda;
        const int count = (k_count - lane + G - 1) / G;
        int k = lane + (lda % 2 == 0 ? row % k_count : 0);
        if (k >= k_count) k -= k_count;
#pragma unroll 4
        for (int m = 0; m < count; ++m) {
            const float p = a[k] * Bs[k];
            if (m % 2) s1 += p; else s0 += p;
            k += G;
            if (k >= k_count) k -= k_count;
        }
    }
    float sum = s0 + s1;
    // xor shuffles stay inside aligned groups of G lanes; every lane takes part (full mask)
    for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (row < rows && lane == 0) C[r0 + row] = sum;
}

// variant: G, lanes per row (1, 2, 4, ... 32). block: a multiple of 32, with
// (block / G - 1) * lda + K <= TILE_FLOATS and K <= MAX_K, which the dispatcher checks
// (gemvlab/dispatch.py, tile_fits); the launcher refuses a longer K.
extern "C" int launch_row_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant;
    if (K > MAX_K || (block / G - 1) * lda + K > TILE_FLOATS) return (int)cudaErrorInvalidValue;
    const long long rows_per_tile = block / G;
    const unsigned grid = (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    switch (G) {
#define GEMV_TILE(g) \
    case g: gemv_row_tiles<g><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break;
        GEMV_TILE(1) GEMV_TILE(2) GEMV_TILE(4) GEMV_TILE(8) GEMV_TILE(16) GEMV_TILE(32)
#undef GEMV_TILE
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
