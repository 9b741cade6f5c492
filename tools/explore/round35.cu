// Exploration round 35 (issue 9, not part of gemvlab; written in session 17, not yet run): row
// tiles with one trip of U loads into a tile sized to its rows, as gemvlab's row_tiles (its
// load_tile, tile_span and sum_row, included), with __launch_bounds__(128, MINB): at U = 5 the
// kernel takes 40 registers, so 12 blocks of 128 threads fit an SM; MINB = 16 makes ptxas fit 32
// registers (16 blocks, 5 loads each in flight: a third more bytes in flight per SM) at the cost of
// spills (28 bytes at U = 5, nvcc 13.0, sm_90; printed by round35.py from the build). K = 33 to 40
// (U = 5) hold the two row-tile shapes of session 17's record that miss 0.91 of the read ceiling.
//
// variant: G + 128 * U + 4096 * MINB. (No MINB = 0 here: __launch_bounds__(128) alone lets ptxas
// use more registers than gemvlab's row_tiles, 55 against 40 at U = 5; the rule is gemvlab's own.)
#include "row_tiles.cu"

template <int G, int U, int MINB>
__global__ void __launch_bounds__(128, MINB)
round35_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B, float* __restrict__ C,
              long long M, long long K) {
    extern __shared__ __align__(16) float tile[];
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    const int groups = blockDim.x / G;
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, groups);
    load_tile<U>(tile, s);
    __syncthreads();
    sum_row<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G, C);
}

static int round35(const float* A, const float* B, float* C, const LaunchArgs* p, cudaStream_t stream, bool launch) {
    const long long M = p->M, K = p->K, lda = p->lda;
    const int v = p->variant, G = v % 128;
    if (p->block != 128 || G < 1 || G > 2) return -1;
    const long long rows = 128 / G, floats = (rows - 1) * lda + K;
    if (K > MAX_K || floats > TILE_FLOATS) return -1;
    const unsigned grid = (unsigned)((M + rows - 1) / rows);
    const size_t bytes = (size_t)((floats + 4 + 3) / 4) * 16;
    int blocks = 0;
    switch (v) {
#define T35(g, u, m)                                                                                   \
    case g + 128 * u + 4096 * m:                                                                       \
        if (launch) round35_tiles<g, u, m><<<grid, 128, bytes, stream>>>(A, lda, B, C, M, K);          \
        else cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, round35_tiles<g, u, m>, 128, bytes); \
        break;
#define T35_G(u, m) T35(1, u, m) T35(2, u, m)
        T35_G(5, 14) T35_G(5, 16) T35_G(6, 12) T35_G(6, 16) T35_G(7, 12) T35_G(7, 16) T35_G(8, 12) T35_G(8, 16)
#undef T35_G
#undef T35
        default: return -1;
    }
    return launch ? (int)cudaGetLastError() : blocks;
}

extern "C" int launch_round35_tiles(const float* A, const float* B, float* C, float* partials,
                                    const LaunchArgs* p, cudaStream_t stream) {
    (void)partials;
    const int r = round35(A, B, C, p, stream, true);
    return r < 0 ? (int)cudaErrorInvalidValue : r;
}

extern "C" int round35_blocks_per_sm(const LaunchArgs* p) { return round35(nullptr, nullptr, nullptr, p, 0, false); }
