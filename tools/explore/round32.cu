// Exploration round 32 (issue 9, not part of gemvlab): gemvlab's row_tiles (cuda/row_tiles.cu,
// included below for TileSpan, tile_span and sum_row) with three changes that can be taken one
// at a time:
//
// * HOIST: B is loaded into a register before the tile's loads and stored to shared memory after
//   them. In row_tiles as it is, the SASS (sm_90, nvcc 13.0) has the threads t < K load B[t] and
//   store it to shared memory, which waits for the load, before they issue any load of the tile:
//   their warps (the first two of 128 threads at K > 32) start the tile one B latency late.
// * U: loads per thread per trip (row_tiles: 4). Where a tile is 4.9 float4s per thread (K = 39,
//   two lanes per row, 64 rows at 128 threads), 4 per trip make a second trip under a quarter full
//   that waits for the first; U = 5 issues them all at once.
// * DYN: the tile in dynamic shared memory sized to the rows it holds, not 4,096 floats: at K = 39,
//   2,496 floats, so more blocks fit an SM (the limit is then the threads, 16 blocks of 128).
#include "row_tiles.cu"

template <int U>
__device__ __forceinline__ void load_tile_u(float* tile, const TileSpan& s) {
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
        __syncwarp();  // ptxas otherwise puts stores, which wait for their loads, between the loads (see the top)
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            if (i < s.n4) tile4[i] = v[u];
        }
    }
    if (t < s.head) tile[s.off + t] = h;
    if (s.tail + t < s.n) tile[s.off + s.tail + t] = e;
}

template <int G, int R, int U, bool HOIST, bool DYN>
__global__ void round32_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
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
    load_tile_u<U>(tile, s);
    if (HOIST && threadIdx.x < K) Bs[threadIdx.x] = b;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) sum_row<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G + r * groups, C);
}

// variant: G + 64 * (R - 1) + 128 * U + 2048 * HOIST + 4096 * DYN, with G = 1 or 2, R = 1 or 2
// (with G = 1), U = 4 to 8. block: a multiple of 32, at least K with HOIST.
extern "C" int launch_round32_tiles(const float* A, const float* B, float* C, float* partials,
                                    const LaunchArgs* p, cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int v = p->variant, block = p->block;
    const int G = v % 64, R = v / 64 % 2 + 1, hoist = v / 2048 % 2, dyn = v / 4096 % 2;
    if (G < 1 || block < 32 || block % 32 || block < G || (hoist && block < K)) return (int)cudaErrorInvalidValue;
    const long long rows_per_tile = (long long)block / G * R;
    const long long floats = (rows_per_tile - 1) * lda + K;
    if (K > MAX_K || floats > TILE_FLOATS) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    const size_t bytes = dyn ? (size_t)((floats + 4 + 3) / 4 * 16) : 0;
    switch (v) {
#define T32(g, r, u, h, d)                                                                      \
    case g + 64 * (r - 1) + 128 * u + 2048 * h + 4096 * d:                                        \
        round32_tiles<g, r, u, h, d><<<grid, block, bytes, stream>>>(A, lda, B, C, M, K); break;
#define T32_ALL_U(g, r, h, d) T32(g, r, 4, h, d) T32(g, r, 5, h, d) T32(g, r, 6, h, d) T32(g, r, 7, h, d) T32(g, r, 8, h, d)
        T32(1, 1, 4, 0, 0) T32(2, 1, 4, 0, 0) T32(1, 2, 4, 0, 0)
        T32_ALL_U(1, 1, 1, 0) T32_ALL_U(2, 1, 1, 0) T32_ALL_U(1, 2, 1, 0)
        T32_ALL_U(1, 1, 1, 1) T32_ALL_U(2, 1, 1, 1) T32_ALL_U(1, 2, 1, 1)
#undef T32_ALL_U
#undef T32
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
