// Exploration round 29 (issue 9, not part of gemvlab): row tiles with a persistent grid, the next
// tile's loads in flight while the block sums the current one.
//
// gemvlab's row_tiles (cuda/row_tiles.cu) gives each block one tile: copy B to shared memory, load
// the tile (one trip of up to 4 float4 loads per thread, or two where the tile is larger), wait,
// store it, barrier, sum, retire. Across K from 8 to 64 the time tracks how full the block's trips
// are (tools/explore/round27: K = 17, 4.25 float4s per thread in two trips, 0.861 of the read
// ceiling; K = 29, 7.25 in two, 0.914; K = 13, 3.25 in one, 0.923), as if each block paid a fixed
// cost per trip and per block (launch, B, barrier, sum) with nothing of its own in flight
// meanwhile. Round 10's persistent grid (MODE 2) copied the next tile with cp.async into a second
// 16 KB buffer, at 128 threads: half the blocks per SM, and slower at 6 of 8 shapes.
//
// Here: one buffer, 256 threads, tiles cut to one trip (at most 16 floats per thread, so the
// next tile fits in 4 float4 registers per thread), and a grid of the resident blocks only, each
// looping over tiles t, t + gridDim.x, ...: store the tile held in registers to shared memory,
// barrier, issue the next tile's loads into the same registers, sum the current tile from shared
// memory while they travel, barrier. B is copied once per block.
//
// block: 256. p->chunk: rows per tile (the launcher checks that the tile is one trip and that the
// rows fit the groups). p->grid: the blocks launched (the resident ones). variant: below.
#include "row_tiles.cu"

constexpr int P_BLOCK = 256;

struct Held {
    float4 v[4];
    float h, e;
};

__device__ __forceinline__ void fetch(Held& r, const TileSpan& s) {
    const int t = threadIdx.x;
    const float4* span4 = reinterpret_cast<const float4*>(s.span + s.head);
    r.h = t < s.head ? __ldcg(s.span + t) : 0.0f;
    r.e = s.tail + t < s.n ? __ldcg(s.span + s.tail + t) : 0.0f;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        const int i = t + u * P_BLOCK;
        r.v[u] = i < s.n4 ? __ldcg(span4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}

__device__ __forceinline__ void put(float* tile, const Held& r, const TileSpan& s) {
    const int t = threadIdx.x;
    float4* tile4 = reinterpret_cast<float4*>(tile + s.off + s.head);
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        const int i = t + u * P_BLOCK;
        if (i < s.n4) tile4[i] = r.v[u];
    }
    if (t < s.head) tile[s.off + t] = r.h;
    if (s.tail + t < s.n) tile[s.off + s.tail + t] = r.e;
}

template <int G, int MIN_BLOCKS>
__global__ void __launch_bounds__(P_BLOCK, MIN_BLOCKS) gemv_row_tiles_persistent(
        const float* __restrict__ A, long long lda, const float* __restrict__ B, float* __restrict__ C,
        long long M, long long K, int rows_per_tile) {
    __shared__ __align__(16) float tile[TILE_FLOATS + 4];
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += P_BLOCK) Bs[k] = B[k];
    const long long count = (M + rows_per_tile - 1) / rows_per_tile;
    long long t = blockIdx.x;
    if (t >= count) return;
    Held held;
    TileSpan s = tile_span(A, lda, M, K, t, rows_per_tile);
    fetch(held, s);
    for (; t < count; t += gridDim.x) {
        __syncthreads();  // every thread is done summing the previous tile (and Bs is written)
        put(tile, held, s);
        __syncthreads();
        const long long next = t + gridDim.x;
        TileSpan s_next = s;
        if (next < count) {
            s_next = tile_span(A, lda, M, K, next, rows_per_tile);
            fetch(held, s_next);  // in flight while this tile is summed
        }
        sum_row<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G, C);
        s = s_next;
    }
}

#define ROUND29_KERNELS(X) X(1, 6) X(2, 6) X(4, 6) X(1, 8) X(2, 8) X(4, 8)

// variant: G + 16 * (MIN_BLOCKS == 8): G lanes per row, and whether __launch_bounds__ holds the
// kernel to 8 blocks of 256 threads per SM (32 registers) or to 6 (40 registers).
extern "C" int launch_round29_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda, rows = p->chunk;
    const int G = p->variant % 16;
    if (p->block != P_BLOCK || K > MAX_K || rows < 1 || rows > P_BLOCK / G) return (int)cudaErrorInvalidValue;
    if ((rows - 1) * lda + K + 3 > 16LL * P_BLOCK) return (int)cudaErrorInvalidValue;  // one trip, any offset
    const unsigned grid = (unsigned)p->grid;
    switch (p->variant) {
#define LAUNCH(g, b) \
    case g + 16 * (b == 8): \
        gemv_row_tiles_persistent<g, b><<<grid, P_BLOCK, 0, stream>>>(A, lda, B, C, M, K, (int)rows); break;
        ROUND29_KERNELS(LAUNCH)
#undef LAUNCH
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

extern "C" int round29_blocks_per_sm(int variant) {
    int n = -1;
    switch (variant) {
#define OCC(g, b) \
    case g + 16 * (b == 8): \
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, gemv_row_tiles_persistent<g, b>, P_BLOCK, 0); break;
        ROUND29_KERNELS(OCC)
#undef OCC
        default: break;
    }
    return n;
}
