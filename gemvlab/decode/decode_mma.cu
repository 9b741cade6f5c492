// Decode kernel on tensor cores: C = W B for bf16 or fp16 W (N x K) and 1 to 16 vectors B (K x n),
// summed in fp32 by mma.sync (sm_80 and later).
//
// Why: a decode step reads all of W for a handful of vectors, so its time is W's bytes over the
// memory's bandwidth, and a second to fourth vector should cost almost nothing. On CUDA cores each
// vector adds a multiply-add per weight; at 16 vectors that is 16 FLOP per byte of bf16 W, about an
// H200's CUDA-core ridge (14 to 17 FLOP per byte), before counting each weight's conversion to
// float. One mma.sync.m16n8k16 multiplies a 16 x 16 tile of W by a 16 x 8 tile of B: 2,048
// multiply-adds in one warp instruction, with no conversion of W to float.
//
// The layout trick: a dot product does not care in which order it meets its K terms, only that each
// element of W meets the element of B at the same k. So each lane loads 16 contiguous bytes (8
// elements) of its rows and of its vector, and hands them to the mma as the elements the fragment
// layout puts in that lane. Lane (g = lane / 4, t = lane % 4) loads elements k .. k + 7, with
// k = base + 32 u + 8 t, of W's rows g and g + 8 and of vector g (and g + 8 when n > 8): the first
// mma takes elements 0-3 of each, the second 4-7. In the PTX ISA's m16n8k16 layout, A's column c and
// B's row c sit in lanes with the same t (lane t holds columns and rows 2t, 2t+1, 2t+8, 2t+9), and
// every such lane loads them from the same k, so both are relabelled alike and every product still
// pairs W and B at the same k. This holds only because load_trip, load_w, load_x and trip_checked all
// compute a lane's k as the same expression, base + 32 u + 8 t, with base the same across the warp. Per
// load instruction, four lanes read 64 contiguous bytes of a row: two whole 32-byte sectors where rows
// start 32-byte aligned, three otherwise; over a trip they read 64 U contiguous bytes.
//
// Per block: a tile of ROWS rows. Per warp: U 16-byte loads per row per trip (4 or 8), and which of the
// next trip's loads are in flight (STAGES, below); the warps of a block take the tile's trips in turn
// (warp w: trips w, w + warps, ...; the partial trip goes to whichever warp's turn it is) and add their
// sums in shared memory in a fixed order. Rows past N and vectors past n are not written.
// ROWS is one constant for the whole build: gemv builds 16 (gemvlab.decode.kernels.MMA_ROWS). At 8, A's
// rows 8-15 are zeros, so each mma does half useful work and N rows make twice the blocks; only the
// tuning script builds that copy, to time shapes whose 16-row tiles leave SMs idle.
//
// Invariants: every lane of a warp runs every mma (the trip count is the same for the whole warp);
// offsets are 64-bit; the order of additions is fixed, so the same inputs give the same bits.
#include "elements.cuh"

#ifndef GEMV_MMA_ROWS
#error "GEMV_MMA_ROWS comes from gemvlab (gemvlab.decode.kernels.DEFINES): build through gemvlab"
#endif
constexpr int ROWS = GEMV_MMA_ROWS;  // rows of W per tile (one block's): lane (g, t) holds rows g and, at 16, g + 8
static_assert(ROWS == 8 || ROWS == 16, "a tile is the m16n8k16 mma's 16 rows, or its first 8");

// Row g + 8's 16 bytes at k: loaded at 16-row tiles, zeros at 8.
template <int CODE, bool ALIGNED>
__device__ __forceinline__ uint4 load_hi(const typename Elem<CODE>::T* p, long long left) {
    if constexpr (ROWS == 8) return make_uint4(0, 0, 0, 0);
    else if constexpr (ALIGNED) return load16<CODE, true, true>(p, 1);
    else return load16_tail<CODE>(p, left, 1);
}

// acc += A (16 x 16, four registers of two elements) times B (16 x 8, two registers), in fp32.
template <int CODE>
__device__ __forceinline__ void mma16816(float acc[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                         unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (CODE == 2) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
#else
    __trap();  // no m16n8k16 mma.sync before sm_80: the rule picks decode_cores there
#endif
}

// The two mma.sync of one load: rows g and g + 8 (lo, hi) times vector g of n-tile nt (v).
template <int CODE>
__device__ __forceinline__ void mma_pair(float acc[4], uint4 lo, uint4 hi, uint4 v) {
    mma16816<CODE>(acc, lo.x, hi.x, lo.y, hi.y, v.x, v.y);  // elements 0-3
    mma16816<CODE>(acc, lo.z, hi.z, lo.w, hi.w, v.z, v.w);  // elements 4-7
}

// One trip of a warp over its tile, in two halves. load_trip issues its U 16-byte loads per row and
// per vector, at k = base + 32 u + 8 t; mma_trip runs the mma.sync that consume them. Even and odd u
// add into separate sums (acc[0], acc[1]): two chains of dependent mma.sync per n-tile.
template <int CODE, int NT, int U>
__device__ __forceinline__ void load_trip(uint4 (&wr)[2][U], uint4 (&xr)[NT][U], const typename Elem<CODE>::T* const (&w)[2],
                                          const typename Elem<CODE>::T* const (&x)[NT], long long base, int t) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long k = base + 32 * u + 8 * t;
        wr[0][u] = load16<CODE, true, true>(w[0] + k, 1);
        wr[1][u] = load_hi<CODE, true>(w[1] + k, 0);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) xr[nt][u] = load16<CODE, true, false>(x[nt] + k, 1);
    }
}

// load_trip's two halves, W's rows and B's vectors, for STAGES = 3, which issues them at different
// times. load_trip keeps them interleaved per u, so STAGES 1 and 2 keep their own code (ptxas may still
// reorder the loads within a trip).
template <int CODE, int U>
__device__ __forceinline__ void load_w(uint4 (&wr)[2][U], const typename Elem<CODE>::T* const (&w)[2], long long base, int t) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long k = base + 32 * u + 8 * t;
        wr[0][u] = load16<CODE, true, true>(w[0] + k, 1);
        wr[1][u] = load_hi<CODE, true>(w[1] + k, 0);
    }
}

template <int CODE, int NT, int U>
__device__ __forceinline__ void load_x(uint4 (&xr)[NT][U], const typename Elem<CODE>::T* const (&x)[NT], long long base, int t) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) xr[nt][u] = load16<CODE, true, false>(x[nt] + base + 32 * u + 8 * t, 1);
}

template <int CODE, int NT, int U>
__device__ __forceinline__ void mma_trip(float (&acc)[2][NT][4], const uint4 (&wr)[2][U], const uint4 (&xr)[NT][U]) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) mma_pair<CODE>(acc[u & 1][nt], wr[0][u], wr[1][u], xr[nt][u]);
}

// A trip element by element, one u at a time (few registers): for the row's last, partial trip,
// where elements past K load as zeros, and for the whole of K where W's rows are not 16-byte aligned
// (vec 0: unaligned or strided vectors with aligned W are copied by the caller and run vec 3).
template <int CODE, int NT, int U>
__device__ __forceinline__ void trip_checked(float (&acc)[2][NT][4], const typename Elem<CODE>::T* const (&w)[2],
                                             const typename Elem<CODE>::T* const (&x)[NT], long long base,
                                             long long K, long long ldb, int t) {
#pragma unroll 1
    for (int u = 0; u < U; ++u) {
        const long long k = base + 32 * u + 8 * t;
        const uint4 lo = load16_tail<CODE>(w[0] + k, K - k, 1), hi = load_hi<CODE, false>(w[1] + k, K - k);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) mma_pair<CODE>(acc[u & 1][nt], lo, hi, load16_tail<CODE>(x[nt] + k * ldb, K - k, ldb));
    }
}

// CODE: 1 fp16, 2 bf16. NT: n-tiles of 8 vectors (1 for n <= 8, 2 for n <= 16). U: 16-byte loads
// per row per lane per trip. STAGES: what is in flight while a trip's mma.sync run. 1: nothing (a
// trip's loads, then its mma.sync); 2: the next trip's loads of W and B; 3: the next trip's loads of
// W only, and this trip's loads of B are issued just before its mma.sync: no registers hold the
// next trip's B (128 registers at NT = 2, against 168). Every block reads all of B, so where
// several blocks share an SM those loads can hit in L1. The load path is a.vec, the same for every
// thread: 3 where W's rows and B's vectors all start 16-byte aligned and B's vectors are contiguous
// (ldb == 1), else 0.
template <int CODE, int NT, int U, int STAGES>
__global__ void gemv_decode_mma(const typename Elem<CODE>::T* __restrict__ W, const typename Elem<CODE>::T* __restrict__ X,
                                typename Elem<CODE>::T* __restrict__ C, const LaunchArgs a) {
    static_assert(STAGES >= 1 && STAGES <= 3, "STAGES is 1, 2 or 3");
    static_assert(NT == 1 || NT == 2, "one or two n-tiles of 8 vectors");
    using T = typename Elem<CODE>::T;
    constexpr long long STEP = 32LL * U;  // elements of K in one trip
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const long long N = a.M, K = a.K, row0 = (long long)blockIdx.x * ROWS;

    // Rows past N read row N - 1, and vectors past n read vector n - 1: their products land only
    // in elements of C past N or n, which are never written. So no trip checks a row or a vector.
    const T* w[2] = {W + min(row0 + g, N - 1) * a.lda, W + min(row0 + 8 + g, N - 1) * a.lda};
    const T* x[NT];  // vector 8 nt + g
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) x[nt] = X + (long long)min(8 * nt + g, a.n - 1) * a.ldv;

    float sums[2][NT][4] = {};
    long long base = STEP * warp;
    if (a.vec == 3) {
        const long long whole = K / STEP * STEP;  // K's elements in whole trips
        uint4 wr[2][U], xr[NT][U];
        if constexpr (STAGES == 1) {
            for (; base < whole; base += STEP * warps) {
                load_trip<CODE, NT, U>(wr, xr, w, x, base, t);
                mma_trip<CODE, NT, U>(sums, wr, xr);
            }
        } else if (STAGES == 2 && base < whole) {
            // STAGES == 2: the next trip's loads fly while this trip's mma.sync run. With one stage,
            // ptxas hoists only part of a trip's loads above its first mma.sync when NT = 2 (12 of 16
            // at U = 4 in CUDA 13.0's sm_90 SASS); here all of them are in flight. Cost: registers (128 at
            // NT = 1, 168 at NT = 2, no spills), so fewer warps fit on an SM.
            load_trip<CODE, NT, U>(wr, xr, w, x, base, t);
            for (base += STEP * warps; base < whole; base += STEP * warps) {
                uint4 wn[2][U], xn[NT][U];
                load_trip<CODE, NT, U>(wn, xn, w, x, base, t);
                mma_trip<CODE, NT, U>(sums, wr, xr);
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    wr[0][u] = wn[0][u], wr[1][u] = wn[1][u];
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) xr[nt][u] = xn[nt][u];
                }
            }
            mma_trip<CODE, NT, U>(sums, wr, xr);
        } else if (base < whole) {
            // STAGES == 3: as 2 for W; B waits for its trip.
            load_w<CODE, U>(wr, w, base, t);
            for (base += STEP * warps; base < whole; base += STEP * warps) {
                uint4 wn[2][U];
                load_w<CODE, U>(wn, w, base, t);
                load_x<CODE, NT, U>(xr, x, base - STEP * warps, t);
                mma_trip<CODE, NT, U>(sums, wr, xr);
#pragma unroll
                for (int u = 0; u < U; ++u) wr[0][u] = wn[0][u], wr[1][u] = wn[1][u];
            }
            load_x<CODE, NT, U>(xr, x, base - STEP * warps, t);
            mma_trip<CODE, NT, U>(sums, wr, xr);
        }
        if (base < K) trip_checked<CODE, NT, U>(sums, w, x, base, K, 1, t);  // the partial trip: this warp's turn
    } else {
        for (; base < K; base += STEP * warps) trip_checked<CODE, NT, U>(sums, w, x, base, K, a.ldb, t);
    }
    constexpr int PER_LANE = NT * 4;
    float acc[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) acc[i] = (&sums[0][0][0])[i] + (&sums[1][0][0])[i];

    if (warps > 1) {  // add the warps' sums in shared memory, warp 0 + warp 1 + ... in that order
        extern __shared__ float shared[];  // [warps][PER_LANE][32]
        float* mine = shared + (long long)warp * PER_LANE * 32 + lane;
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) mine[32 * i] = acc[i];
        __syncthreads();
        if (warp) return;
        for (int other = 1; other < warps; ++other)
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) acc[i] += shared[((long long)other * PER_LANE + i) * 32 + lane];
    }
    // Lane (g, t) holds rows g (acc[4 nt + 0, 1]) and g + 8 (acc[4 nt + 2, 3]), vectors 8 nt + 2 t + 0, 1.
#pragma unroll
    for (int h = 0; h < ROWS / 8; ++h) {
        const long long r = row0 + 8 * h + g;
        if (r >= N) continue;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int j = 8 * nt + 2 * t + i;
                if (j < a.n) C[r * a.ldc + j * a.ldcv] = from_float<T>(acc[4 * nt + 2 * h + i]);
            }
    }
}

// variant: GEMV_VARIANT4(CODE, NT, U, STAGES). block: a multiple of 32 threads, no more than the
// variant's registers let an SM hold (512 threads at 128 registers, 384 at 168; the
// rule checks occupancy, and a larger block fails to launch); grid: one block per ROWS rows. Shared
// memory: the warps' sums when there are several, [warps][NT * 4][32] floats as the kernel indexes them.
// The launcher checks what it can see (M >= 1, n, block, vec 3 reading B at ldb 1); the caller
// promises the rest of vec 3: W, X 16-byte aligned, lda and ldv multiples of 8.
extern "C" int launch_decode_mma(const void* W, const void* X, void* C, void* partials, const LaunchArgs* p,
                                 cudaStream_t stream) {
    (void)partials;
    const int block = p->block, variant = p->variant;
    const int NT = GEMV_ARG(variant, 1);
    if (p->M < 1 || block < 32 || block > 1024 || block % 32 || NT < 1 || p->n < 1 || p->n > 8 * NT ||
        (p->vec != 0 && p->vec != 3) || (p->vec == 3 && p->ldb != 1))  // vec 3's trips read B at ldb 1
        return (int)cudaErrorInvalidValue;
    const long long tiles = (p->M + ROWS - 1) / ROWS;
    if (tiles > 2147483647LL) return (int)cudaErrorInvalidValue;
    const size_t shared = block > 32 ? (size_t)(block / 32) * NT * 4 * 32 * sizeof(float) : 0;
    switch (variant) {
#define GEMV_MMA(code, nt, u, s)                                                                            \
    case GEMV_VARIANT4(code, nt, u, s):                                                                      \
        gemv_decode_mma<code, nt, u, s><<<(unsigned)tiles, block, shared, stream>>>(                           \
            (const Elem<code>::T*)W, (const Elem<code>::T*)X, (Elem<code>::T*)C, *p);                      \
        break;
        // the instantiations: gemvlab.decode.kernels.MMA_COMPILED
        GEMV_MMA(1, 1, 4, 1) GEMV_MMA(1, 1, 8, 1) GEMV_MMA(1, 1, 4, 2)
        GEMV_MMA(1, 2, 4, 1) GEMV_MMA(1, 2, 8, 1) GEMV_MMA(1, 2, 4, 2) GEMV_MMA(1, 2, 4, 3)
        GEMV_MMA(2, 1, 4, 1) GEMV_MMA(2, 1, 8, 1) GEMV_MMA(2, 1, 4, 2)
        GEMV_MMA(2, 2, 4, 1) GEMV_MMA(2, 2, 8, 1) GEMV_MMA(2, 2, 4, 2) GEMV_MMA(2, 2, 4, 3)
#undef GEMV_MMA
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
