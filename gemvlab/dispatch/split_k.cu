// Dispatcher kernel: split-K. Each block sums one stretch of one row (or of ROWS rows); a second
// kernel adds the stretches of each row in a fixed order.
//
// One block per row, or per few rows (stages 2 to 5), needs many rows: M = 16 rows make 16 blocks, so at most 16
// of the H200's 132 SMs have work; M = 1 leaves at least 131 idle (stage 4 took 4.049 ms at M = 1,
// K = 2^26, where the read ceiling took 0.064 ms: notebook 04's shape table). Splitting K into SPLITS stretches makes
// M * SPLITS blocks, so there are blocks for every SM however few rows there are. The
// dispatcher (gemvlab/dispatch.py) picks SPLITS from the SM count for about four waves of
// blocks, with stretches of at least 8,192 floats (so rows under 16,384 floats are not split,
// and long but few rows may get fewer than four waves): with 8 blocks resident per SM on 132
// SMs, M = 1 and K = 2^26 get 4224 stretches. One row per block with rows at different offsets
// from B (odd K) gets about twelve waves instead (UNEVEN_WAVES in dispatch.py: there 12 waves or
// more ran faster than 4 at 8 of 8 shapes timed, 32 to 500 rows). Rows that keep at least half of each SM's warp
// slots busy one block each, in fewer than about 2.7 waves, are split too where they need more
// than one wave and the last would be under 3/4 full, or where the rows start at different
// offsets from B (odd K, even in one wave): then for at least eight waves (FULL_LAST_WAVE and
// BUSY_SPLIT_WAVES in dispatch.py). Where A is small enough for one trip of every
// resident thread, the stretches are shorter: one trip per thread. With SPLITS = 1 this is one
// block per row, stage 4's design, writing C directly; either way it takes rows that start
// anywhere (any_alignment.cuh).
//
// ROWS > 1 is stage 5's idea in a split: the block sums the same stretch of ROWS rows and loads
// each float4 of B once for all of them (dot_rows; where the rows start at other offsets than
// B, it loads B's float4s aligned and shifts them into place for each row with warp shuffles).
// With one row per block, every row's block loads its stretch of B again. Where few rows share
// a stretch, their blocks are expected to land on different SMs, so B comes from the L2, up to
// as many bytes as A: at 3 x 50,000,001, one row per block read 1188 MB from the L2 into the
// SMs, two rows 977 MB and four rows 819 MB, for 800 MB of A and B
// (tools/explore/round15/counters.txt). With many rows per SM, B mostly hits in the L1 (at the
// headline shape 43% of all L1 sectors hit, notebook 04's counters for this kernel, and A's, about half of them, never do).
// The dispatcher takes several rows per block where it splits fewer than 128 rows and B is more
// than a quarter of the L2: 2 rows aligned like B, 4 rows otherwise, 1 load per row per trip
// (the measurements are beside SHARE_B_ROWS in gemvlab/dispatch.py).
//
// Block b works on stretch s = b / G of row group g = b % G (G = ceil(M / ROWS) groups): the G
// consecutive blocks of one stretch are expected to run at about the same time (blocks are
// expected to start in about their index order; not measured), so the blocks resident at one
// moment (1056 on the H200 with one row per block) cover a window of about 1056 / G stretches of
// B, which the L2 can hold for all the rows sharing it even when B (K floats) is larger than the
// L2 itself (the intent; not measured with counters here).
//
// Deterministic: no float atomics. Each stretch's sum goes to partials[r * SPLITS + s]; the
// reduce kernel adds a row's partials in one fixed order, so the same inputs give the same
// bits on every run (floating-point addition is not associative: atomics, whose order
// changes from run to run, would not).
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
    if (n > 0 && ROWS == 1)  // one row: dot_stretch, as before rows per block existed
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
// adds the 32 lane sums: the same order on every run. (A block of 256 threads per row was a tie
// or up to 2.6% slower, tools/explore/round11/round11.txt.)
//
// On sm_90 and later the launcher starts this kernel as a programmatic dependent launch. split_k
// does not trigger it early, so no reduce block runs beside a split_k block: the GPU may launch
// the reduce once split_k's last block has exited, before split_k's grid has completed and its
// writes are flushed, and the reduce waits here until they are visible. What it is meant to
// save is the gap between the two grids (not measured apart from the whole call). On the H200 (tools/explore/round16, round16.txt, each plan timed
// both ways in one run, round-robin) the whole call took less time at 5 of the 11 split shapes
// where A and B are at least 4 times the L2, beyond the quartiles and the 0.84% drift between two
// timings of that round's record (0.9 to 2.3%; e.g. 64 x 1,000,000, 66.75 against 68.32 us; 1 x 2^26,
// 128.80 against 130.05), tied
// at the other 6, and took 12 to 14% less at 1 x 2^20, 16 x 65,536 and 4 x 2^18 (16 x 65,536: 7.3
// against 8.5 us). With split_k's blocks triggering the reduce as they start it was no faster
// (round16's MODE 3). Without the reduce at all, the first kernel alone took 1.2 to 4.4% less than
// the whole call at 10 of those 11 shapes (a tie at the 11th); the dependent launch recovered part
// of that, and what is left was not split between the launch and the adding. A fused version,
// where the block that finishes a row's last stretch adds its partials (no second launch), was no
// better than the two plain launches: faster at 2 of the 11 (1.1 and 1.6%), slower at 2 (1.1 and
// 1.3%), tied at 7. The round's reduce read the partials with plain loads; this one reads them
// with __ldcg, which skips the L1 (not kept coherent with other SMs' writes); not timed separately.
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

// variant: ROWS * 16 + LOADS * 2 + B_VEC. With splits > 1, `partials` holds M * splits floats
// and the reduce runs after; with splits == 1 the blocks write C and no reduce runs.
extern "C" int launch_split_k(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                              cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits, block = p->block;
    const int rows = p->variant / 16;
    if (rows < 1 || splits < 1 || block < 32 || block % 32) return (int)cudaErrorInvalidValue;
    // dot_rows_shuffled indexes a stretch with 32-bit numbers (the rule's stretches of several
    // rows hold at most a quarter of the L2's bytes, far fewer floats than this)
    if (rows > 1 && p->variant % 2 == 0 && min(chunk, K) > (1LL << 31) - 4096) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + rows - 1) / rows * splits);
    float* out = splits == 1 ? C : partials;
    switch (p->variant) {
#define GEMV_SPLIT(loads, bvec, rows_)                                                                    \
    case rows_ * 16 + loads * 2 + bvec:                                                                   \
        gemv_split_k<loads, bvec, rows_><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); \
        break;
        GEMV_SPLIT(2, false, 1) GEMV_SPLIT(2, true, 1) GEMV_SPLIT(4, false, 1) GEMV_SPLIT(4, true, 1)
        GEMV_SPLIT(1, false, 2) GEMV_SPLIT(1, true, 2) GEMV_SPLIT(2, false, 2) GEMV_SPLIT(2, true, 2)
        GEMV_SPLIT(1, false, 4) GEMV_SPLIT(1, true, 4) GEMV_SPLIT(2, false, 4) GEMV_SPLIT(2, true, 4)
#undef GEMV_SPLIT
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    const int reduce_block = 256;  // 8 rows per block
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
