// Exploration round 20 (issue 9, not part of gemvlab): round 19's kernels (round19.cu) with
//   part A: the reduce started as gemvlab starts it (a programmatic dependent launch where
//           supported), so that the candidates compare with the rule's whole call;
//   part B: row tiles in dynamic shared memory larger than gemvlab's 4,096 floats (up to
//           MAX_TILE_20 floats, 48 KB), for blocks of more rows.
// variant as in round19.cu.
#include "round19.cu"

constexpr long long MAX_TILE_20 = 12 * 1024 - 4;

extern "C" int launch_round20_split(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits, block = p->block;
    if (block != 256) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)(M * splits);
    float* out = splits == 1 ? C : partials;
    switch (p->variant) {
#define Z(loads, mode) \
    case 16 * mode + 2 * loads: z_split_k<loads, mode, 1><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        Z(2, 0) Z(4, 0) Z(2, 2) Z(4, 2)
#undef Z
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    const unsigned reduce_grid = (unsigned)((M * 32 + 255) / 256);
    if (!dependent_launch_supported()) {
        gemv_split_k_reduce<<<reduce_grid, 256, 0, stream>>>(partials, C, M, splits);
        return (int)cudaGetLastError();
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(reduce_grid);
    config.blockDim = dim3(256);
    config.stream = stream;
    cudaLaunchAttribute dependent[1];
    dependent[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = dependent;
    config.numAttrs = 1;
    return (int)cudaLaunchKernelEx(&config, gemv_split_k_reduce, (const float*)partials, C, M, splits);
}

// Part B: dynamic tiles only (DYN = 1, BLATE = 0), of any size up to MAX_TILE_20 floats.
extern "C" int launch_round20_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64;
    if (p->variant != G + 64 || block < 32 || block % 32 || block < G) return (int)cudaErrorInvalidValue;
    if (K > MAX_K || (block / G - 1) * lda + K > MAX_TILE_20) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + block / G - 1) / (block / G));
    const size_t smem = tile_bytes(p, G);
    switch (G) {
        case 1: z_row_tiles<1, true, false><<<grid, block, smem, stream>>>(A, lda, B, C, M, K); break;
        case 2: z_row_tiles<2, true, false><<<grid, block, smem, stream>>>(A, lda, B, C, M, K); break;
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
