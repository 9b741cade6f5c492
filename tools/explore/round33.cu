// Exploration round 33 (issue 9, not part of gemvlab): what in round 32's fastest row tiles
// (tools/explore/round32/round32.txt: "hoist + U=n dyn", 5 to 10% less time than the rule at K =
// 17, 19 and 24) made the difference. gemvlab's row_tiles (cuda/row_tiles.cu, included for
// TileSpan, tile_span and sum_row) with four switches:
//
// * DYN: the tile in dynamic shared memory sized to the rows it holds (K = 17: 2,176 floats), not
//   a static 4,096-float array, so that more blocks fit an SM's shared memory.
// * HOIST: B loaded into a register before the tile's loads, stored to shared memory after.
// * U: loads per thread per trip (4 in row_tiles), as many as make the tile one trip.
// * SYNC: a __syncwarp between the loads and their stores to shared memory. Without it ptxas
//   (nvcc 13.0, sm_90) puts some stores between the loads in every variant with HOIST or U > 4:
//   a store waits for its load, so the loads after it go out a memory latency late (the SASS
//   order, LDG.E.128 and STS.128, is printed by round33.py from the build). Round 19 timed DYN and
//   a late B load without it and found them slower at most shapes.
//
// variant: G + 64 * (R - 1) + 128 * U + 2048 * HOIST + 4096 * DYN + 8192 * SYNC.
#include "row_tiles.cu"

template <int U, bool SYNC>
__device__ __forceinline__ void load_tile_33(float* tile, const TileSpan& s) {
    const int t = threadIdx.x;
    float4* tile4 = reinterpret_cast<float4*>(tile + s.off + s.head);
    const float4* span4 = reinterpret_cast<const float4*>(s.span + s.head);
    const float h = t < s.head ? __ldcg(s.span + t) : 0.0f;
    const float e = s.tail + t < s.n ? __ldcg(s.span + s.tail + t) : 0.0f;
    for (long long i0 = t; i0 < s.n4; i0 += U * (long long)blockDim.x) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            v[u] = i < s.n4 ? __ldcg(span4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        if (SYNC) __syncwarp();
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            if (i < s.n4) tile4[i] = v[u];
        }
    }
    if (t < s.head) tile[s.off + t] = h;
    if (s.tail + t < s.n) tile[s.off + s.tail + t] = e;
}

template <int G, int R, int U, bool HOIST, bool DYN, bool SYNC>
__global__ void round33_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                              float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float static_tile[DYN ? 4 : TILE_FLOATS + 4];
    extern __shared__ __align__(16) float dyn_tile[];
    float* tile = DYN ? dyn_tile : static_tile;
    __shared__ float Bs[MAX_K];
    float b = 0.0f;
    if (HOIST) {
        if (threadIdx.x < K) b = B[threadIdx.x];  // the launcher checks block >= K
    } else {
        for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    }
    const int groups = blockDim.x / G;
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, groups * R);
    load_tile_33<U, SYNC>(tile, s);
    if (HOIST && threadIdx.x < K) Bs[threadIdx.x] = b;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) sum_row<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G + r * groups, C);
}

// Runs the variant's kernel (launch) or returns its resident blocks per SM (occupancy, from the
// CUDA occupancy API with the launch's dynamic shared memory).
static int round33(const float* A, const float* B, float* C, const LaunchArgs* p, cudaStream_t stream,
                   bool launch) {
    const long long M = p->M, K = p->K, lda = p->lda;
    const int v = p->variant, block = p->block;
    const int G = v % 64, hoist = v / 2048 % 2, dyn = v / 4096 % 2, R = v / 64 % 2 + 1;
    if (G < 1 || block < 32 || block % 32 || block < G || (hoist && block < K)) return -1;
    const long long rows_per_tile = (long long)block / G * R;
    const long long floats = (rows_per_tile - 1) * lda + K;
    if (K > MAX_K || floats > TILE_FLOATS) return -1;
    const unsigned grid = (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    const size_t bytes = dyn ? (size_t)((floats + 4 + 3) / 4 * 16) : 0;
    int blocks = 0;
    switch (v) {
#define T33(g, r, u, h, d, s)                                                                            \
    case g + 64 * (r - 1) + 128 * u + 2048 * h + 4096 * d + 8192 * s:                                  \
        if (launch) round33_tiles<g, r, u, h, d, s><<<grid, block, bytes, stream>>>(A, lda, B, C, M, K); \
        else cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, round33_tiles<g, r, u, h, d, s>, block, bytes); \
        break;
#define T33_U(g, r, h, d, s) T33(g, r, 4, h, d, s) T33(g, r, 5, h, d, s) T33(g, r, 6, h, d, s) T33(g, r, 7, h, d, s) T33(g, r, 8, h, d, s)
#define T33_G(h, d, s) T33_U(1, 1, h, d, s) T33_U(2, 1, h, d, s) T33_U(1, 2, h, d, s)
        T33_G(0, 0, 1) T33_G(0, 1, 1) T33_G(1, 1, 1) T33_G(1, 1, 0) T33_G(0, 1, 0)
#undef T33_G
#undef T33_U
#undef T33
        default: return -1;
    }
    return launch ? (int)cudaGetLastError() : blocks;
}

extern "C" int launch_round33_tiles(const float* A, const float* B, float* C, float* partials,
                                    const LaunchArgs* p, cudaStream_t stream) {
    (void)partials;
    const int r = round33(A, B, C, p, stream, true);
    return r < 0 ? (int)cudaErrorInvalidValue : r;
}

extern "C" int round33_blocks_per_sm(const LaunchArgs* p) { return round33(nullptr, nullptr, nullptr, p, 0, false); }
