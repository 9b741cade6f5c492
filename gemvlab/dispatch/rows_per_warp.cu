// Dispatcher kernel: several rows per warp, G lanes per row, for short rows.
//
// One block per row spends a whole block on each row. When a row is short that is waste: at
// K = 128 a row is 32 float4s, so a block of 64 threads (stage 4's best there) leaves half its
// threads with nothing to load, and each block starts, reduces through shared memory and ends
// for 512 bytes of work (stage 4 took 1.267 ms at M = 2^21, K = 128, where the read ceiling
// took 0.240 ms: notebook 04's shape table; a cost per block is the presumed cause, not measured
// apart). Here a group of G lanes (G = 1, 2, 4, ... 32, a power of
// two) takes one row: a warp holds 32 / G rows and a block of 64 threads (the dispatcher's size, ROWS_BLOCK) 64 / G, each lane
// writes up to 4 independent float4 loads per trip in the source (how many ptxas issues before
// their first use, notebook 05's build report says), and the group adds its G sums with log2(G)
// shuffles, without shared memory or a barrier. The dispatcher picks G from K and from how much
// data there is (gemvlab/dispatch.py, rows_lanes): when the whole matrix fits in one trip of the
// GPU's resident threads, as few trips per lane as G <= 32 allows (one up to K = 512, two at K =
// 1024); else at least 8 lanes (4 for rows under 96 floats), so that a group's load instruction
// covers 128 contiguous bytes of its row where the row allows, and otherwise G nearest K / 32,
// about 32 floats per lane (fewer where the minimum of 8 lanes holds: 16 at K = 128).
//
// Rows may start anywhere (any_alignment.cuh): K % 4 != 0 and views that start mid-row take
// the same path, with a scalar head and tail per row.
#include "any_alignment.cuh"
#include "launch_args.cuh"

template <int G, bool B_VEC>
__global__ void gemv_rows_per_warp(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                                   float* __restrict__ C, long long M, long long K) {
    const int lane = threadIdx.x % G;  // this thread's place in its row's group
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / G;
    float v = 0.0f;
    if (row < M) v = dot_stretch<4, B_VEC>(A + row * lda, B, K, lane, G);
    // Add the group's G sums: xor shuffles stay inside aligned groups of G lanes. Every lane
    // of the warp executes them (rows past M add zeros), as the full mask promises.
    for (int offset = G / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (row < M && lane == 0) C[row] = v;
}

// variant: G * 2 + B_VEC, G in 1, 2, 4, 8, 16, 32. block: a multiple of 32.
extern "C" int launch_rows_per_warp(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, variant = p->variant;
    if (variant < 2 || block < 32 || block % 32) return (int)cudaErrorInvalidValue;
    const long long groups_per_block = block / (variant / 2);
    const unsigned grid = (unsigned)((M + groups_per_block - 1) / groups_per_block);
    switch (variant) {
#define GEMV_G(g)                                                                                 \
    case 2 * g: gemv_rows_per_warp<g, false><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break; \
    case 2 * g + 1: gemv_rows_per_warp<g, true><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break;
        GEMV_G(1) GEMV_G(2) GEMV_G(4) GEMV_G(8) GEMV_G(16) GEMV_G(32)
#undef GEMV_G
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
