// Exploration round 37 (issue 9, not part of gemvlab): gemvlab's row_tiles kernel itself
// (gemv_row_tiles<G, R, U>, included) at template arguments its launcher does not compile:
// * one lane per row at K = 33 to 48 (G = 1, R = 1), where a thread's row is K / 4 float4s, so one
//   trip takes U = 9 to 12 loads per thread (the rule: 2 lanes per row, U = 5 to 6);
// * at K = 8, one lane and R = 3 or 4 rows per thread (U = 6 or 8), for more bytes per block than
//   the rule's R = 2 (U = 4, 16 KB per block of 256 threads).
// Every case with U > 4 keeps the tile in shared memory sized to its rows, as gemvlab does.
//
// variant: G + 64 * (R - 1) + 256 * U.
#include "row_tiles.cu"

static int round37(const float* A, const float* B, float* C, const LaunchArgs* p, cudaStream_t stream, bool launch) {
    const long long M = p->M, K = p->K, lda = p->lda;
    const int v = p->variant, block = p->block, G = v % 64, R = v / 64 % 4 + 1;
    if (G < 1 || block < 32 || block % 32 || K > MAX_K) return -1;
    const long long rows = (long long)block / G * R, floats = (rows - 1) * lda + K;
    const unsigned grid = (unsigned)((M + rows - 1) / rows);
    const size_t bytes = (size_t)((floats + 4 + 3) / 4) * 16;
    if (bytes > 48 * 1024) return -1;
    int blocks = 0;
    switch (v) {
#define T37(g, r, u)                                                                                          \
    case g + 64 * (r - 1) + 256 * u:                                                                          \
        if (launch) gemv_row_tiles<g, r, u><<<grid, block, bytes, stream>>>(A, lda, B, C, M, K);              \
        else cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, gemv_row_tiles<g, r, u>, block, bytes);   \
        break;
        T37(1, 1, 9) T37(1, 1, 10) T37(1, 1, 11) T37(1, 1, 12) T37(1, 3, 6) T37(1, 4, 8)
#undef T37
        default: return -1;
    }
    return launch ? (int)cudaGetLastError() : blocks;
}

extern "C" int launch_round37_tiles(const float* A, const float* B, float* C, float* partials,
                                    const LaunchArgs* p, cudaStream_t stream) {
    (void)partials;
    const int r = round37(A, B, C, p, stream, true);
    return r < 0 ? (int)cudaErrorInvalidValue : r;
}

extern "C" int round37_blocks_per_sm(const LaunchArgs* p) { return round37(nullptr, nullptr, nullptr, p, 0, false); }
