// Exploration round 16 (issue 9, not part of gemvlab): what split_k's second kernel, the reduce,
// costs, and two ways to hide it. gemvlab's split_k (gemvlab/cuda/split_k.cu, included below)
// writes each stretch's sum to `partials`, then a second launch adds each row's partials.
//   MODE 0: the first kernel only (C is not written: a bound for timing, not a gemv);
//   MODE 1: the reduce launched as a programmatic dependent launch (PDL, sm_90): it may be
//           scheduled before the first kernel ends and waits in cudaGridDependencySynchronize;
//   MODE 2: fused: each block counts its stretch done (an integer atomicAdd per row group, after
//           a __threadfence), and the block that counts last adds the group's partials in a
//           fixed order; it resets the counter for the next call. No second launch, and the
//           sums are added in the same order whichever block is last: deterministic.
//   MODE 3: MODE 1, with the first kernel's blocks triggering the dependent launch at their start.
// variant: gemvlab's split_k variant (16 * ROWS + 2 * LOADS + B_VEC) + 256 * MODE. In MODE 2,
// `partials` holds M * splits floats followed by ceil(M / ROWS) zeroed 32-bit counters.
#include "split_k.cu"

template <int ROWS>
__device__ __forceinline__ void add_partials(const float* __restrict__ partials, float* __restrict__ C,
                                             long long r0, int rows, int splits) {
    // the whole block adds each row's partials: thread t takes t, t + blockDim, ... (4 loads in
    // flight), then the block's tree; the same order on every run
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        float v[1] = {0.0f};
        if (r < rows) {
            const float* p = partials + (r0 + r) * splits;
            float x[4] = {};
            int s = threadIdx.x;
            for (; s + 3 * (int)blockDim.x < splits; s += 4 * blockDim.x)
#pragma unroll
                for (int j = 0; j < 4; ++j) x[j] += __ldcg(p + s + j * blockDim.x);
            for (; s < splits; s += blockDim.x) x[0] += __ldcg(p + s);
            v[0] = (x[0] + x[1]) + (x[2] + x[3]);
        }
        block_totals<1>(v);
        if (threadIdx.x == 0 && r < rows) C[r0 + r] = v[0];
        __syncthreads();  // block_totals' shared memory is reused by the next row
    }
}

template <int LOADS, bool B_VEC, int ROWS, int EPI>
__global__ void x_split_k(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                          float* __restrict__ partials, float* __restrict__ C, long long M, long long K,
                          long long chunk, int splits) {
    if (EPI == 1) cudaTriggerProgrammaticLaunchCompletion();
    const long long groups = (M + ROWS - 1) / ROWS;
    const long long g = blockIdx.x % groups, s = blockIdx.x / groups;
    const long long r0 = g * ROWS, k0 = s * chunk;
    const int rows = (int)min((long long)ROWS, M - r0);
    const long long n = min(chunk, K - k0);
    float v[ROWS] = {};
    if (n > 0 && ROWS == 1)
        v[0] = dot_stretch<LOADS, B_VEC>(A + r0 * lda + k0, B + k0, n, threadIdx.x, blockDim.x);
    else if (n > 0)
        dot_rows<ROWS, LOADS, B_VEC>(A + r0 * lda + k0, lda, rows, B + k0, n, threadIdx.x, blockDim.x, v);
    block_totals<ROWS>(v);
    if (threadIdx.x == 0)
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            if (r < rows) partials[(r0 + r) * splits + s] = v[r];
    if (EPI != 2) return;
    unsigned* counters = reinterpret_cast<unsigned*>(partials + M * splits);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence();  // this block's partials are visible before it counts itself done
        last = atomicAdd(counters + g, 1u) == (unsigned)splits - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    add_partials<ROWS>(partials, C, r0, rows, splits);
    if (threadIdx.x == 0) counters[g] = 0;  // ready for the next call
}

__global__ void pdl_reduce(const float* __restrict__ partials, float* __restrict__ C, long long M, int splits) {
    cudaGridDependencySynchronize();  // the first kernel's writes are visible from here on
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    float v = 0.0f;
    if (row < M)
        for (int s = lane; s < splits; s += 32) v += partials[row * splits + s];
    v = warp_total(v);
    if (row < M && lane == 0) C[row] = v;
}

extern "C" int launch_round16(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                              cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits, block = p->block, mode = p->variant / 256, v = p->variant % 256;
    const int rows = v / 16;
    const unsigned grid = (unsigned)((M + rows - 1) / rows * splits);
    if (splits < 2) return (int)cudaErrorInvalidValue;
    const int epi = mode == 2 ? 2 : mode == 3 ? 1 : 0;
    switch (v * 4 + epi) {
#define X(loads, bvec, rows_, epi_)                                                                        \
    case (rows_ * 16 + loads * 2 + bvec) * 4 + epi_:                                                     \
        x_split_k<loads, bvec, rows_, epi_><<<grid, block, 0, stream>>>(A, lda, B, partials, C, M, K, chunk, \
                                                                        splits);                         \
        break;
#define XS(loads, bvec, rows_) X(loads, bvec, rows_, 0) X(loads, bvec, rows_, 1) X(loads, bvec, rows_, 2)
        XS(2, false, 1) XS(2, true, 1) XS(1, true, 2) XS(1, false, 4)
#undef XS
#undef X
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || mode == 0 || mode == 2) return (int)err;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)((M * 32 + 255) / 256));
    cfg.blockDim = dim3(256);
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return (int)cudaLaunchKernelEx(&cfg, pdl_reduce, (const float*)partials, C, M, splits);
}
