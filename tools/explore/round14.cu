// Exploration round 14 (issue 9, not part of gemvlab; results in round14/round14.txt).
// gemvlab/cuda/row_tiles.cu with the start column
// of each row's sum as a template argument ROT, to time what tools/explore/round13/bank-passes.txt
// only counted:
//   ROT 0: every row starts at column 0 (no rotation);
//   ROT 1: row r starts at r % K where the row stride is even (gemvlab's row_tiles);
//   ROT 2: row r starts at (r * c) % K, c the least step that makes (stride + c) / G odd.
// variant: G + 64 * ROT.
#include <cuda_runtime.h>

#include "launch_args.cuh"

constexpr int TILE_FLOATS = 4096;  // 16 KB of shared memory per tile; the rule keeps a tile's rows within it
constexpr int MAX_K = 64;          // B's room in shared memory; the rule sends only rows this short

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

// G lanes per row sum the tile's rows into C: B from shared memory (Bs, K floats), 32-bit
// indices, two accumulators. With an even row stride, row r starts at column r % K and wraps
// (see the top of this file). Any order is fixed per row: the same bits on every run.
template <int G, int ROT>
__device__ __forceinline__ void sum_rows(const float* tile, const float* Bs, const TileSpan& s, int lda, int K,
                                         float* __restrict__ C) {
    const int row = threadIdx.x / G, lane = threadIdx.x % G;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < s.rows) {
        const float* a = tile + s.off + row * lda;
        const int count = (K - lane + G - 1) / G;  // this lane's columns: lane, lane + G, ...
        int c = 0;  // ROT 2's step
        while ((lda + c) % G != 0 || ((lda + c) / G) % 2 == 0) ++c;
        int k = lane + (ROT == 0 ? 0 : ROT == 1 ? (lda % 2 == 0 ? row % K : 0) : (row * c) % K);
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

template <int G, int ROT>
__global__ void gemv_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                               float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float tile[TILE_FLOATS + 4];
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, blockDim.x / G);
    load_tile(tile, s);
    __syncthreads();
    sum_rows<G, ROT>(tile, Bs, s, (int)lda, (int)K, C);
}

extern "C" int launch_round14(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                              cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64;
    if (K > MAX_K || (block / G - 1) * lda + K > TILE_FLOATS) return (int)cudaErrorInvalidValue;
    const long long rows_per_tile = block / G;
    const unsigned grid = (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    switch (p->variant) {
#define R14(g, rot) \
    case g + 64 * rot: gemv_row_tiles<g, rot><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break;
        R14(1, 0) R14(1, 1) R14(1, 2) R14(2, 0) R14(2, 1) R14(2, 2) R14(4, 0) R14(4, 1) R14(4, 2)
#undef R14
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
