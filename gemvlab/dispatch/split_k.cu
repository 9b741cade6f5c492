// Dispatcher kernel: split-K. Each block sums one stretch of K for one row (or for ROWS rows that
// share each load of B); a second kernel adds each row's stretches in a fixed order.
//
// Why: one block per row needs many rows. M = 16 rows make 16 blocks and leave most of the GPU's
// SMs idle; cutting each row into `splits` stretches makes M * splits blocks, enough for every SM
// however few the rows. With splits = 1 and ROWS = 1 it is one block per row, stage 4's design,
// writing C directly. ROWS > 1 is stage 5's idea inside a split: where a few rows share a B too
// large to stay in the L2 for all of their blocks, one block loads each float4 of B once for all.
// The dispatcher (gemvlab/dispatch/rule.py) chooses splits and ROWS.
//
// Invariants: rows may start anywhere (any_alignment.cuh); offsets into A are 64-bit; block b
// takes stretch b / groups of row group b % groups, so consecutive blocks share a stretch of B
// (meant to run close together in time, if blocks start in index order); no float atomics:
// partials[r * splits + s] are added in one fixed order, so the same inputs give the same bits on
// every run.
#include <atomic>

#include "any_alignment.cuh"
#include "launch_args.cuh"

__device__ __forceinline__ float warp_total(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;  // every lane holds the warp's total
}

// The sums of v[0..ROWS) over the block (blockDim.x a multiple of 32), in thread 0: each warp
// adds its own, then warp 0 adds the warps' totals, one row at a time, with one barrier.
template <int ROWS>
__device__ __forceinline__ void block_totals(float (&v)[ROWS]) {
    __shared__ float warp_partial[ROWS][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        v[r] = warp_total(v[r]);
        if (lane == 0) warp_partial[r][warp] = v[r];
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const float x = (warp == 0 && lane < blockDim.x / 32) ? warp_partial[r][lane] : 0.0f;
        if (warp == 0) v[r] = warp_total(x);
    }
}

// Block b works on stretch s = b / groups of the ROWS rows g * ROWS ... of group g = b % groups.
template <int LOADS, bool B_VEC, int ROWS>
__global__ void gemv_split_k(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                             float* __restrict__ out, long long M, long long K, long long chunk,
                             int splits) {
    const long long groups = (M + ROWS - 1) / ROWS;
    const long long g = blockIdx.x % groups, s = blockIdx.x / groups;  // 64-bit: r0 * lda and s * chunk pass 2^31
    const long long r0 = g * ROWS, k0 = s * chunk;
    const int rows = (int)min((long long)ROWS, M - r0);
    const long long n = min(chunk, K - k0);  // the last stretch may be shorter (or empty)
    float v[ROWS] = {};
    if (n > 0 && ROWS == 1)  // one row
        v[0] = dot_stretch<LOADS, B_VEC>(A + r0 * lda + k0, B + k0, n, threadIdx.x, blockDim.x);
    else if (n > 0)
        dot_rows<ROWS, LOADS, B_VEC>(A + r0 * lda + k0, lda, rows, B + k0, n, threadIdx.x, blockDim.x, v);
    block_totals<ROWS>(v);
    if (threadIdx.x == 0)
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            if (r < rows) out[splits == 1 ? r0 + r : (r0 + r) * splits + s] = v[r];
}

// One warp per row: lane l adds partials l, l + 32, ... in order, then the warp's shuffle tree
// adds the 32 lane sums: the same order on every run.
//
// On sm_90 and later it is a programmatic dependent launch: the GPU may start it once split_k's
// last block has exited, before split_k's grid is complete, which saves part of the gap between
// the two grids (docs/design/kernels.md); cudaGridDependencySynchronize waits until split_k's
// writes are visible. The partials are read with __ldcg, not the read-only path: they are written
// by a grid whose writes are not yet visible when this one starts.
__global__ void gemv_split_k_reduce(const float* __restrict__ partials, float* __restrict__ C, long long M,
                                    int splits) {
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();  // split_k's partials are written and visible past here
#endif
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    float v = 0.0f;
    if (row < M)
        for (int s = lane; s < splits; s += 32) v += __ldcg(partials + row * splits + s);
    v = warp_total(v);  // every lane takes part, also past the last row (full mask)
    if (row < M && lane == 0) C[row] = v;
}

// Programmatic dependent launch needs compute capability 9.0 (Hopper) or later, and a reduce
// compiled for it: built from PTX for an older architecture, the reduce has no wait (the
// #if above), so it must not be launched early. Asked once per device; a failed query is not
// kept, and the launch is then a plain one.
static bool dependent_launch_supported() {
    static std::atomic<signed char> known[64];  // 0: not asked yet, 1: yes, -1: no
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return false;
    signed char k = known[device].load(std::memory_order_relaxed);
    if (k == 0) {
        int major = 0;
        cudaFuncAttributes reduce = {};
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
            cudaFuncGetAttributes(&reduce, gemv_split_k_reduce) != cudaSuccess) {
            (void)cudaGetLastError();  // clear the failed query's error
            return false;
        }
        k = major >= 9 && reduce.ptxVersion >= 90 ? 1 : -1;
        known[device].store(k, std::memory_order_relaxed);
    }
    return k > 0;
}

// variant: GEMV_VARIANT(LOADS, B_VEC, ROWS). With splits > 1, `partials` holds M * splits floats
// and the reduce runs after; with splits == 1 the blocks write C and no reduce runs.
extern "C" int launch_split_k(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                              cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits, block = p->block;
    const int rows = GEMV_ARG(p->variant, 2), b_vec = GEMV_ARG(p->variant, 1);
    if (rows < 1 || splits < 1 || block < 32 || block % 32) return (int)cudaErrorInvalidValue;
    // dot_rows_shuffled indexes a stretch with 32-bit numbers (the rule's stretches of several
    // rows hold at most a quarter of the L2's bytes, far fewer floats than this)
    if (rows > 1 && !b_vec && min(chunk, K) > (1LL << 31) - 4096) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + rows - 1) / rows * splits);
    float* out = splits == 1 ? C : partials;
    switch (p->variant) {
#define GEMV_SPLIT(loads, bvec, rows_)                                                                    \
    case GEMV_VARIANT(loads, bvec, rows_):                                                                \
        gemv_split_k<loads, bvec, rows_><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); \
        break;
        // the instantiations: gemvlab.dispatch.kernels.SPLIT_K_COMPILED
        GEMV_SPLIT(2, false, 1) GEMV_SPLIT(2, true, 1) GEMV_SPLIT(1, true, 2) GEMV_SPLIT(1, false, 4)
#undef GEMV_SPLIT
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    const int reduce_block = GEMV_REDUCE_BLOCK;  // one warp per row
    const unsigned reduce_grid = (unsigned)((M * 32 + reduce_block - 1) / reduce_block);
    if (!dependent_launch_supported())
        gemv_split_k_reduce<<<reduce_grid, reduce_block, 0, stream>>>(partials, C, M, splits);
    else {
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(reduce_grid);
        config.blockDim = dim3(reduce_block);
        config.stream = stream;
        cudaLaunchAttribute dependent[1];
        dependent[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        dependent[0].val.programmaticStreamSerializationAllowed = 1;
        config.attrs = dependent;
        config.numAttrs = 1;
        cudaError_t e = cudaLaunchKernelEx(&config, gemv_split_k_reduce, (const float*)partials, C, M, splits);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();  // not left for the next call's check to find
            return (int)e;
        }
    }
    return (int)cudaGetLastError();
}
