// Dispatcher kernel: several rows per warp, G lanes per row, for rows too short to keep a block busy.
//
// Why: one block per row spends a whole block, its start, its reduction through shared memory and
// its end, on each row; at K = 128 a row is 32 float4s, less than one load per thread of a block.
// Here a group of G lanes (G a power of two, 4 to 32) takes one row: a warp holds 32 / G rows, each
// lane writes GEMV_ROWS_LOADS independent float4 loads per trip, and the group adds its G sums with
// log2(G) shuffles, with no shared memory and no barrier. The dispatcher picks G from K and from
// how much data there is (gemvlab/dispatch/rule.py).
//
// Invariants: rows may start anywhere (any_alignment.cuh: a scalar head and tail per row); offsets
// into A are 64-bit; every lane of a warp runs the shuffles (rows past M add zeros), as the full
// mask promises; the order of additions is fixed, so the same inputs give the same bits.
#include "any_alignment.cuh"
#include "launch_args.cuh"

template <int G, bool B_VEC>
__global__ void gemv_rows_per_warp(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                                   float* __restrict__ C, long long M, long long K) {
    const int lane = threadIdx.x % G;  // this thread's place in its row's group
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / G;
    float v = 0.0f;
    if (row < M) v = dot_stretch<GEMV_ROWS_LOADS, B_VEC>(A + row * lda, B, K, lane, G);
    // Add the group's G sums: xor shuffles stay inside aligned groups of G lanes. Every lane
    // of the warp executes them (rows past M add zeros), as the full mask promises.
    for (int offset = G / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (row < M && lane == 0) C[row] = v;
}

// variant: GEMV_VARIANT(G, B_VEC, 0). block: a multiple of 32.
extern "C" int launch_rows_per_warp(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, variant = p->variant;
    const int G = GEMV_ARG(variant, 0);
    if (G < 1 || block < 32 || block % 32 || block < G) return (int)cudaErrorInvalidValue;
    const long long groups_per_block = block / G;
    const unsigned grid = (unsigned)((M + groups_per_block - 1) / groups_per_block);
    switch (variant) {
#define GEMV_G(g, bvec)                                                                   \
    case GEMV_VARIANT(g, bvec, 0):                                                        \
        gemv_rows_per_warp<g, bvec><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break;
        // the instantiations: gemvlab.dispatch.kernels.ROWS_PER_WARP_COMPILED
        GEMV_G(4, false) GEMV_G(4, true) GEMV_G(8, false) GEMV_G(8, true)
        GEMV_G(16, false) GEMV_G(16, true) GEMV_G(32, false) GEMV_G(32, true)
#undef GEMV_G
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
