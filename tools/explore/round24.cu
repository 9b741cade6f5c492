// Exploration round 24 (issue 9, not part of gemvlab), part B: row_tiles with R rows per lane
// group. gemvlab's row_tiles gives each group of G lanes one row, so a block of 256 threads at K
// = 8 holds 256 rows: a 2,048-float tile, 2 float4 loads per thread, 8 blocks per SM (their
// threads), 64 KB of loads per SM at most; 10,000,000 x 8 ran at 0.75 of the read ceiling
// (round21/round21.txt). Here each group sums R rows (rows g, g + groups, ...), so the tile holds
// R times the rows for the same threads: more bytes loaded per block, and per SM. The tile is in
// dynamic shared memory, sized to its rows (up to MAX_TILE_20 floats, round20.cu).
// variant: G + 64 * R.
#include "round20.cu"

template <int G>
__device__ __forceinline__ void sum_one_row(const float* tile, const float* Bs, const TileSpan& s, int lda, int K,
                                            int row, float* __restrict__ C) {
    const int lane = threadIdx.x % G;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < s.rows) {  // gemvlab's sum_rows for one row
        const float* a = tile + s.off + row * lda;
        const int count = (K - lane + G - 1) / G;
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

template <int G, int R>
__global__ void z4_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                             float* __restrict__ C, long long M, long long K) {
    extern __shared__ __align__(16) float tile[];
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    const int groups = blockDim.x / G;
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, groups * R);
    load_tile(tile, s);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) sum_one_row<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G + r * groups, C);
}

static size_t tile_bytes_r(const LaunchArgs* p, int G, int R) {
    return (size_t)(((p->block / G * R - 1) * p->lda + p->K + 4) * 4);
}

extern "C" int launch_round24_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64, R = p->variant / 64;
    if (G < 1 || R < 1 || block < 32 || block % 32 || block < G || K > MAX_K) return (int)cudaErrorInvalidValue;
    const long long rows = (long long)block / G * R;
    if ((rows - 1) * lda + K > MAX_TILE_20) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + rows - 1) / rows);
    const size_t smem = tile_bytes_r(p, G, R);
    switch (p->variant) {
#define T(g, r) case g + 64 * r: z4_row_tiles<g, r><<<grid, block, smem, stream>>>(A, lda, B, C, M, K); break;
        T(1, 1) T(1, 2) T(1, 4) T(2, 1) T(2, 2) T(2, 4)
#undef T
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

extern "C" int round24_tiles_blocks_per_sm(const LaunchArgs* p) {
    const int G = p->variant % 64, R = p->variant / 64;
    const size_t smem = tile_bytes_r(p, G, R);
    int n = 0;
    cudaError_t e = cudaErrorInvalidValue;
    switch (p->variant) {
#define T(g, r) case g + 64 * r: e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, z4_row_tiles<g, r>, p->block, smem); break;
        T(1, 1) T(1, 2) T(1, 4) T(2, 1) T(2, 2) T(2, 4)
#undef T
    }
    return e == cudaSuccess ? n : -(int)e;
}
