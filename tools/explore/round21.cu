// Exploration round 21 (issue 9, not part of gemvlab): row_tiles' sum with fewer instructions.
//
// Round 20's counters (round20/counters.txt, ncu) put row_tiles near the SMs' issue limit: at
// 2,000,000 x 45, 67.2 M warp instructions in 93 us, 538 per warp, about 0.7 per cycle per
// scheduler. In the sum, gemvlab's loop wraps the column at every step (k += G; if (k >= K) k -=
// K: an add, a compare and a select per float, and an address computed from k), because with an
// even row stride a row starts at column row % K. SEG sums the same columns in the same order as
// two plain runs, from the start column to the row's end and then from its beginning, each
// unrolled with the addresses as offsets: the same products added to the same accumulators in
// the same order, so the same bits. DYN: the tile in dynamic shared memory, sized to its rows
// (round 19).
// variant: G + 64 * DYN (+ 128 for gemvlab's sum, as a control in the same build).
#include "round20.cu"

template <int G>
__device__ __forceinline__ void sum_rows_seg(const float* tile, const float* Bs, const TileSpan& s, int lda, int K,
                                             float* __restrict__ C) {
    const int row = threadIdx.x / G, lane = threadIdx.x % G;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < s.rows) {
        const float* a = tile + s.off + row * lda;
        const int count = (K - lane + G - 1) / G;  // this lane's columns, as in sum_rows
        const int first = lane + (lda % 2 == 0 ? row % K : 0);  // before wrapping
        const int m1 = first < K ? min(count, (K - first + G - 1) / G) : 0;  // steps before the wrap
        const float* a1 = a + first;
        const float* b1 = Bs + first;
#pragma unroll 4
        for (int m = 0; m < m1; ++m) {
            const float p = a1[m * G] * b1[m * G];
            if (m % 2) s1 += p; else s0 += p;
        }
        if (m1 < count) {
            // the rest, from column first + m1 * G - K on; step m1 + j goes to the accumulator
            // of its parity, as in sum_rows: swap them when m1 is odd (s0 + s1 is the same sum)
            if (m1 % 2) { const float t = s0; s0 = s1; s1 = t; }
            const int k2 = first + m1 * G - K;
            const float* a2 = a + k2;
            const float* b2 = Bs + k2;
#pragma unroll 4
            for (int j = 0; j < count - m1; ++j) {
                const float p = a2[j * G] * b2[j * G];
                if (j % 2) s1 += p; else s0 += p;
            }
        }
    }
    float sum = s0 + s1;
    for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (row < s.rows && lane == 0) C[s.r0 + row] = sum;
}

template <int G, bool DYN, bool SEG>
__global__ void z3_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                             float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float tile_static[DYN ? 4 : TILE_FLOATS + 4];
    extern __shared__ __align__(16) float tile_dynamic[];
    float* tile = DYN ? tile_dynamic : tile_static;
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, blockDim.x / G);
    load_tile(tile, s);
    __syncthreads();
    if (SEG)
        sum_rows_seg<G>(tile, Bs, s, (int)lda, (int)K, C);
    else
        sum_rows<G>(tile, Bs, s, (int)lda, (int)K, C);
}

extern "C" int launch_round21_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64;
    const bool dyn = p->variant & 64, seg = !(p->variant & 128);
    if (G < 1 || block < 32 || block % 32 || block < G || K > MAX_K) return (int)cudaErrorInvalidValue;
    if ((block / G - 1) * lda + K > (dyn ? MAX_TILE_20 : TILE_FLOATS)) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + block / G - 1) / (block / G));
    const size_t smem = dyn ? tile_bytes(p, G) : 0;
    switch (G + 64 * dyn + 128 * !seg) {
#define T(g, d, sg) \
    case g + 64 * d + 128 * !sg: z3_row_tiles<g, d, sg><<<grid, block, smem, stream>>>(A, lda, B, C, M, K); break;
        T(1, 0, 1) T(1, 1, 1) T(2, 0, 1) T(2, 1, 1) T(4, 0, 1) T(1, 0, 0) T(2, 0, 0)
#undef T
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
