// Decode kernel on CUDA cores: C = W B for float32, fp16 or bf16 W (N x K) and 1 to 16 vectors B
// (K x n), each weight converted to float once and multiplied by every vector, in fp32.
//
// Why: float32 weights have no native tensor-core path that keeps fp32's precision (tf32 keeps 10
// of float32's 23 stored mantissa bits; three tf32 mma per product come close to fp32, not exactly
// it), and GPUs before sm_80 have no m16n8k16 mma.sync (decode_mma's) for bf16 or fp16; this
// kernel serves both. A warp takes R rows (core_rows below); each lane reads
// 16 bytes of each row per step (4 floats or 8 halves: 512 contiguous bytes per row per warp),
// then the same elements of each vector, which every row of the warp reuses from registers: the
// warp reads B once per R rows, from the L1 and L2.
//
// Invariants: offsets are 64-bit; the warp adds its lanes' sums with xor shuffles, whose every
// step adds the same two numbers on both lanes, so all lanes end with the same bits; the order of
// additions is fixed, so the same inputs give the same bits.
#include "elements.cuh"

// One step of a warp, 16 bytes per row at k: W's elements converted once, each multiplied by the same
// elements of every vector. R: the warp's rows; NV: the vectors; VEC: 16-byte loads (else one
// element at a time); TAIL: the row's last, partial step (elements past K are zeros).
template <int CODE, int NV, int R, bool VEC, bool TAIL>
__device__ __forceinline__ void step(float (&acc)[R][NV], const typename Elem<CODE>::T* const (&w)[R],
                                        const typename Elem<CODE>::T* const (&x)[NV], long long k, long long K,
                                        long long ldb) {
    constexpr int E = 16 / sizeof(typename Elem<CODE>::Raw);
    float wv[R][E];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        Pack16<CODE> p;
        p.v = TAIL ? load16_tail<CODE>(w[r] + k, K - k, 1) : load16<CODE, VEC, true>(w[r] + k, 1);
#pragma unroll
        for (int e = 0; e < E; ++e) wv[r][e] = to_float(p.e[e]);
    }
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        Pack16<CODE> q;
        q.v = TAIL ? load16_tail<CODE>(x[j] + k * ldb, K - k, ldb) : load16<CODE, VEC, false>(x[j] + k * ldb, ldb);
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const float xv = to_float(q.e[e]);
#pragma unroll
            for (int r = 0; r < R; ++r) acc[r][j] = fmaf(wv[r][e], xv, acc[r][j]);
        }
    }
}

// Rows per warp for NV vectors: few vectors, few rows (more warps for the same rows); many
// vectors, more rows, so that each load of B serves more of W (B's loads come from the L1). The
// kernel's R and the launcher's grid both come from it.
#ifndef GEMV_CORE_ROWS
#error "GEMV_CORE_ROWS comes from gemvlab (gemvlab.decode.kernels.DEFINES): build through gemvlab"
#endif
__host__ __device__ constexpr int core_rows(int nv) { return nv <= GEMV_CORE_FEW_VECTORS ? GEMV_CORE_ROWS_FEW : GEMV_CORE_ROWS; }

// CODE: 0 float32, 1 fp16, 2 bf16. NV: vectors compiled for (n <= NV). The load path is a.vec, the
// same for every thread: 3 where W's rows and B's vectors all start 16-byte aligned and B's vectors
// are contiguous (ldb == 1), else 0.
template <int CODE, int NV>
__global__ void gemv_decode_cores(const typename Elem<CODE>::T* __restrict__ W, const typename Elem<CODE>::T* __restrict__ X,
                                  typename Elem<CODE>::T* __restrict__ C, const LaunchArgs a) {
    using T = typename Elem<CODE>::T;
    constexpr int R = core_rows(NV), E = 16 / sizeof(typename Elem<CODE>::Raw);
    const int lane = threadIdx.x & 31;
    const long long N = a.M, K = a.K;
    const long long row0 = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * R;
    // Rows past N read row N - 1, and vectors past n read vector n - 1: their sums are never
    // written, so no step checks a row or a vector.
    const T* w[R];
#pragma unroll
    for (int r = 0; r < R; ++r) w[r] = W + min(row0 + r, N - 1) * a.lda;
    const T* x[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) x[j] = X + (long long)min(j, a.n - 1) * a.ldv;
    float acc[R][NV] = {};
    long long k = (long long)E * lane;
    if (a.vec == 3) {
        for (; k + E <= K; k += 32LL * E) step<CODE, NV, R, true, false>(acc, w, x, k, K, a.ldb);
        if (k < K) step<CODE, NV, R, true, true>(acc, w, x, k, K, a.ldb);  // the row's last elements
    } else {  // not all aligned: every load element by element, and checked
        for (; k < K; k += 32LL * E) step<CODE, NV, R, false, true>(acc, w, x, k, K, a.ldb);
    }
#pragma unroll
    for (int j = 0; j < NV; ++j)
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], offset);
    // Every lane holds every sum; lane i % 32 writes sum i (row r, vector j; i = r NV + j).
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < NV; ++j)
            if ((r * NV + j) % 32 == lane && row0 + r < N && j < a.n)
                C[(row0 + r) * a.ldc + j * a.ldcv] = from_float<T>(acc[r][j]);
}

// variant: GEMV_VARIANT(CODE, NV, 0). block: a multiple of 32, at most 1024; grid: one block per
// block / 32 * core_rows(NV) rows.
extern "C" int launch_decode_cores(const void* W, const void* X, void* C, void* partials, const LaunchArgs* p,
                                   cudaStream_t stream) {
    (void)partials;
    const int block = p->block, variant = p->variant;
    const int NV = GEMV_ARG(variant, 1);
    if (block < 32 || block > 1024 || block % 32 || p->n < 1 || p->n > NV || (p->vec != 0 && p->vec != 3) ||
        (p->vec == 3 && p->ldb != 1))
        return (int)cudaErrorInvalidValue;
    const long long rows = (long long)(block / 32) * core_rows(NV);
    const long long grid = (p->M + rows - 1) / rows;
    if (grid > 2147483647LL) return (int)cudaErrorInvalidValue;
    switch (variant) {
#define GEMV_CORES(code, nv)                                                                               \
    case GEMV_VARIANT(code, nv, 0):                                                                        \
        gemv_decode_cores<code, nv><<<(unsigned)grid, block, 0, stream>>>(                            \
            (const Elem<code>::T*)W, (const Elem<code>::T*)X, (Elem<code>::T*)C, *p);                     \
        break;
        // the instantiations: gemvlab.decode.kernels.CORES_COMPILED
        GEMV_CORES(0, 2) GEMV_CORES(0, 4) GEMV_CORES(0, 8) GEMV_CORES(0, 16)
        GEMV_CORES(1, 1) GEMV_CORES(1, 2) GEMV_CORES(1, 4) GEMV_CORES(1, 8) GEMV_CORES(1, 16)
        GEMV_CORES(2, 1) GEMV_CORES(2, 2) GEMV_CORES(2, 4) GEMV_CORES(2, 8) GEMV_CORES(2, 16)
#undef GEMV_CORES
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
