// Stage 4 - warp shuffle: float4 loads, several loads in flight, a reduction
// through registers instead of a shared-memory tree, and A read past the L1.
//
// Changes from stage 3 (notebook 03 measures them one at a time, each on top of the
// ones before: LOADS = 1 with
// A_PAST_L1 = false is stage 3 with the new reduction (and this file's loop, which at one
// load per trip issues the same loads of A); LOADS = 2 adds loads in
// flight; A_PAST_L1 = true, the stage itself, adds the cache hint):
//  * Reduction. __shfl_down_sync lets a thread read a register of another
//    thread in its warp, so a warp adds its 32 partial sums in 5 steps with no
//    shared memory and no barrier. Only one value per warp goes through shared
//    memory, and one __syncthreads() remains (stage 3 has log2(blockDim.x) + 1).
//    The full mask 0xffffffff promises that all 32 lanes take part: every warp
//    must be complete, so blockDim.x is a multiple of 32 (checked before launch).
//  * Loads in flight. Each trip round the loop has LOADS independent float4
//    loads of A (and of B), written before any of them is used, into separate
//    accumulators, so that one thread can keep several loads of A travelling
//    at once and fewer warps are needed for the same bytes in flight. How many
//    the compiled code really issues before its first use is ptxas's choice:
//    2 of A for LOADS = 2, 4 and 8 (notebook 03 counts them in the SASS).
//  * A past the L1. Each byte of A is used once; each byte of B is used by
//    every block. A load with the default caching (here LDG.E.128.CONSTANT,
//    the read-only path) caches A's lines in the SM's L1, where they can
//    push out lines of B that other blocks on the SM will read. __ldcg ("cache
//    global", LDG.E.128.STRONG.GPU) loads A without caching it in the L1 (the load still passes
//    through it). At the headline shape the L1 hit rate over all sectors rose
//    from 41% to 44% (A's lines are never reused, so the hits are B's); in time
//    it took 2.8% less at 32 threads, 1.6% at 64 and 2.0% at 128, each beyond
//    the quartiles and beyond the 0.79% by which ratios moved between two
//    timings in the same record, and tied at 256 (0.3% less, quartiles
//    overlapping) (one record; the record before it, tools/explore/final17,
//    measured 3.2, 1.3, 1.8 and 1.7% less). Where rows are few it did not pay:
//    at 16 rows it took 0.9 and 1.1% more (256 and 1024 threads), just beyond
//    that drift, and at 128 rows it tied (0.6% more, within the drift, and the
//    same) (notebook 03).
//    That the hit rate is the cause of the gain is the intent, not shown: the
//    counters show the two side by side. Under Nsight Compute, one launch each
//    at 256 threads, __ldcg took 1.1% less time: one launch each, no verdict.
//    B's loads keep the default caching (the compiler reads B through the
//    read-only path, LDG.E.128.CONSTANT).
//
// Registers set how many blocks fit on an SM: at LOADS = 2 the kernel needs 32
// registers, so 2048 threads fit; at LOADS = 4 it needs 40, and registers are
// handed out per warp in each quarter of the SM (16,384 per quarter, 1,280 per
// warp: 12 warps), so 48 warps, 1536 threads, fit (for blocks of 64 to 512
// threads: at 32 threads the 32-block limit and at 1024 whole blocks leave 32
// warps; notebook 03's occupancy table). Fewer resident blocks means
// more waves of blocks, and a last wave that can be nearly empty: notebook 03
// computes both for each block size.
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;  // lane 0 holds the warp's total
}

template <bool A_PAST_L1>
__device__ __forceinline__ float4 load_a(const float4* p) {
    return A_PAST_L1 ? __ldcg(p) : *p;  // __ldcg: cached in the L2, not the L1
}

template <int LOADS, bool A_PAST_L1>
__global__ void gemv_warp_shuffle(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, long long K) {
    const float4* a4 = reinterpret_cast<const float4*>(A + (long long)blockIdx.x * K);
    const float4* b4 = reinterpret_cast<const float4*>(B);
    const long long K4 = K / 4;  // K % 4 == 0 and 16-byte alignment, checked before launch
    const long long stride = blockDim.x;

    float acc[LOADS] = {};
    long long i = threadIdx.x;
#pragma unroll 1  // no unrolling beyond the LOADS written below
    for (; i + (LOADS - 1) * stride < K4; i += LOADS * stride) {
        float4 a[LOADS], b[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {  // issue every load first ...
            a[u] = load_a<A_PAST_L1>(a4 + i + u * stride);  // used once
            b[u] = b4[i + u * stride];                       // used by every block: keep it cached
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u)  // ... then use them
            acc[u] += a[u].x * b[u].x + a[u].y * b[u].y + a[u].z * b[u].z + a[u].w * b[u].w;
    }
#pragma unroll 1
    for (; i < K4; i += stride) {  // what is left when K4 is not a multiple of LOADS * stride
        const float4 a = load_a<A_PAST_L1>(a4 + i), b = b4[i];
        acc[0] += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
    float sum = 0.0f;
#pragma unroll
    for (int u = 0; u < LOADS; ++u) sum += acc[u];

    // Reduce: within each warp by shuffles, then across warps through shared memory.
    __shared__ float warp_partial[32];  // at most 1024 / 32 warps per block
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    sum = warp_sum(sum);
    if (lane == 0) warp_partial[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < blockDim.x / 32 ? warp_partial[lane] : 0.0f;
        sum = warp_sum(sum);
        if (lane == 0) C[blockIdx.x] = sum;
    }
}

template <bool A_PAST_L1>
int launch(const float* A, const float* B, float* C, long long M, long long K, int block, int loads,
           cudaStream_t stream) {
    const unsigned grid = (unsigned)M;
    switch (loads) {
        case 1: gemv_warp_shuffle<1, A_PAST_L1><<<grid, block, 0, stream>>>(A, B, C, K); break;
        case 2: gemv_warp_shuffle<2, A_PAST_L1><<<grid, block, 0, stream>>>(A, B, C, K); break;
        case 4: gemv_warp_shuffle<4, A_PAST_L1><<<grid, block, 0, stream>>>(A, B, C, K); break;
        case 8: gemv_warp_shuffle<8, A_PAST_L1><<<grid, block, 0, stream>>>(A, B, C, K); break;
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

// Stage 4. `variant` is LOADS, the float4 loads of A per thread per trip in the source (ptxas
// issues 2 of them before the first use for LOADS = 2, 4 and 8: see above).
extern "C" int launch_warp_shuffle(const float* A, const float* B, float* C, long long M,
                                   long long K, int block, int variant, cudaStream_t stream) {
    return launch<true>(A, B, C, M, K, block, variant, stream);
}

// Stage 4 with A loaded with the default caching (LDG.E.128.CONSTANT, through the L1): the steps
// between stage 3 and stage 4.
extern "C" int launch_warp_shuffle_through_l1(const float* A, const float* B, float* C, long long M,
                                              long long K, int block, int variant, cudaStream_t stream) {
    return launch<false>(A, B, C, M, K, block, variant, stream);
}
