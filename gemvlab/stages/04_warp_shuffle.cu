// Stage 4 - warp shuffle: float4 loads, several loads in flight, a reduction through registers
// instead of a shared-memory tree, and A read past the L1.
//
// Changes from stage 3 (notebook 03 takes them one at a time):
//  * Reduction: __shfl_down_sync reads a register of another lane of the warp, so a warp adds its
//    32 sums in 5 steps, with no shared memory and no barrier; one value per warp goes through
//    shared memory, behind one __syncthreads(). The full mask 0xffffffff promises that all 32
//    lanes take part, so blockDim.x is a multiple of 32 (checked before launch).
//  * Loads in flight: each trip has LOADS independent float4 loads of A (and of B) written before
//    any is used, so one thread keeps several loads travelling at once. How many the compiled code
//    issues before the first use is ptxas's choice (notebook 03 counts them in the SASS).
//  * A past the L1: each byte of A is used once, each byte of B by every block. __ldcg ("cache
//    global") loads A without keeping its lines in the L1; the intent is more L1 hits on B.
// Registers set how many blocks fit on an SM: more LOADS can mean more registers, and so fewer
// resident warps (the resource report shows it).
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
        for (int u = 0; u < LOADS; ++u) {  // every load written first (ptxas issues two of A before the first use) ...
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

// Stage 4. `variant` is LOADS, the float4 loads of A per thread per trip in the source.
extern "C" int launch_warp_shuffle(const float* A, const float* B, float* C, long long M,
                                   long long K, int block, int variant, cudaStream_t stream) {
    return launch<true>(A, B, C, M, K, block, variant, stream);
}

// Stage 4 with A read like B, through the read-only path (LDG.E.128.CONSTANT, cached in the L1):
// the steps between stage 3 and stage 4.
extern "C" int launch_warp_shuffle_through_l1(const float* A, const float* B, float* C, long long M,
                                              long long K, int block, int variant, cudaStream_t stream) {
    return launch<false>(A, B, C, M, K, block, variant, stream);
}
