// Dispatcher kernel: split-K. Each block sums one stretch of one row; a second kernel adds
// the stretches of each row in a fixed order.
//
// One block per row (stages 2 to 5) needs many rows: M = 16 rows make 16 blocks, so at most 16
// of the H200's 132 SMs have work; M = 1 leaves at least 131 idle (stage 4 took 4.0 ms at M = 1,
// K = 2^26, where the read ceiling is 0.06 ms). Splitting K into SPLITS stretches makes
// M * SPLITS blocks, so there are blocks for every SM however few rows there are. The
// dispatcher (gemvlab/dispatch.py) picks SPLITS from the SM count for about four waves of
// blocks, with stretches of at least 8,192 floats (so rows under 16,384 floats are not split,
// and long but few rows may get fewer than four waves): with 8 blocks resident per SM on 132
// SMs, M = 16 and K = 2^24 get 264 stretches per row, 4224 blocks. Where A is small enough for
// one trip of every resident thread, the stretches are shorter: one trip per thread. With SPLITS = 1 this is one block per row, stage 4's design, writing C directly;
// either way it takes rows that start anywhere (any_alignment.cuh).
//
// Block b works on stretch s = b / M of row r = b % M: groups of M consecutive blocks share a
// stretch, so the blocks resident at one moment (1056 on the H200) cover a window of about
// 1056 / M stretches of B (17 MB at M = 16, K = 2^24), which the L2 can hold for all the rows
// sharing it even when B (K floats) is larger than the L2 itself (the intent; not measured with
// counters here).
//
// Deterministic: no float atomics. Each stretch's sum goes to partials[r * SPLITS + s]; the
// reduce kernel adds a row's partials in one fixed order, so the same inputs give the same
// bits on every run (floating-point addition is not associative: atomics, whose order
// changes from run to run, would not).
#include "any_alignment.cuh"

__device__ __forceinline__ float warp_total(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;  // every lane holds the warp's total
}

// The sum of v over the block (blockDim.x a multiple of 32), in thread 0.
__device__ __forceinline__ float block_total(float v) {
    __shared__ float warp_partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_total(v);
    if (lane == 0) warp_partial[warp] = v;
    __syncthreads();
    v = (warp == 0 && lane < blockDim.x / 32) ? warp_partial[lane] : 0.0f;
    if (warp == 0) v = warp_total(v);
    return v;
}

template <int LOADS, bool B_VEC>
__global__ void gemv_split_k(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                             float* __restrict__ out, long long M, long long K, long long chunk,
                             int splits) {
    const long long r = blockIdx.x % M, s = blockIdx.x / M;  // 64-bit: M * splits < 2^31
    const long long k0 = s * chunk;
    const long long n = min(chunk, K - k0);  // the last stretch may be shorter (or empty)
    float v = 0.0f;
    if (n > 0) v = dot_stretch<LOADS, B_VEC>(A + r * lda + k0, B + k0, n, threadIdx.x, blockDim.x);
    v = block_total(v);
    if (threadIdx.x == 0) out[splits == 1 ? r : r * splits + s] = v;
}

// One warp per row: lane l adds partials l, l + 32, ... in order, then the warp's shuffle tree
// adds the 32 lane sums: the same order on every run.
__global__ void gemv_split_k_reduce(const float* __restrict__ partials, float* __restrict__ C, long long M,
                                    int splits) {
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    float v = 0.0f;
    if (row < M)
        for (int s = lane; s < splits; s += 32) v += partials[row * splits + s];
    v = warp_total(v);  // every lane takes part, also past the last row (full mask)
    if (row < M && lane == 0) C[row] = v;
}

// variant: LOADS * 2 + B_VEC (LOADS in 2, 4). With splits > 1, `partials` holds M * splits
// floats and the reduce runs after; with splits == 1 the blocks write C and no reduce runs.
extern "C" int launch_split_k(const float* A, long long lda, const float* B, float* C, float* partials,
                              long long M, long long K, long long chunk, int splits, int block, int variant,
                              cudaStream_t stream) {
    const unsigned grid = (unsigned)(M * splits);
    float* out = splits == 1 ? C : partials;
    switch (variant) {
        case 4: gemv_split_k<2, false><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        case 5: gemv_split_k<2, true><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        case 8: gemv_split_k<4, false><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        case 9: gemv_split_k<4, true><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    const int reduce_block = 256;  // 8 rows per block
    const unsigned reduce_grid = (unsigned)((M * 32 + reduce_block - 1) / reduce_block);
    gemv_split_k_reduce<<<reduce_grid, reduce_block, 0, stream>>>(partials, C, M, splits);
    return (int)cudaGetLastError();
}
