// Stage 4 - warp shuffle: float4 loads, several loads in flight, a reduction
// through registers instead of a shared-memory tree, and A read past the L1.
//
// Changes from stage 3:
//  * Reduction. __shfl_down_sync lets a thread read a register of another
//    thread in its warp, so a warp adds its 32 partial sums in 5 steps with no
//    shared memory and no barrier. Only one value per warp goes through shared
//    memory, and one __syncthreads() remains (stage 3 had log2(blockDim.x) + 1).
//    The full mask 0xffffffff promises that all 32 lanes take part: every warp
//    must be complete, so blockDim.x is a multiple of 32 (checked before launch).
//  * Loads in flight. Each trip round the loop issues LOADS independent float4
//    loads of A (and of B) before using any of them, into separate
//    accumulators, so one thread keeps LOADS memory requests travelling at once
//    and fewer warps are needed to cover memory latency.
//  * A past the L1. Each byte of A is used once; each byte of B is used by
//    every block. A plain load keeps A's lines in the SM's L1 cache, where they
//    push out the lines of B that the other blocks on the SM are about to read.
//    __ldcg ("cache global") loads A through the L2 only, so the L1 keeps B and
//    fewer of B's loads travel to the L2. On the H200 this was worth about 1% at
//    the headline shape (tools/explore/h200-round3.txt); B's loads stay plain.
//
// Registers decide occupancy here: at 2 loads in flight the kernel needs 32
// registers, so 2048 threads fit on an SM; at 4 it needs 40 and 1536 fit.
// Fewer resident blocks means more waves of blocks, and a last wave that can
// be nearly empty (the block-size sweep shows it).
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;  // lane 0 holds the warp's total
}

template <int LOADS>
__global__ void gemv_warp_shuffle(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, long long K) {
    const float4* a4 = reinterpret_cast<const float4*>(A + (long long)blockIdx.x * K);
    const float4* b4 = reinterpret_cast<const float4*>(B);
    const long long K4 = K / 4;  // K % 4 == 0 and 16-byte alignment, checked before launch
    const long long stride = blockDim.x;

    float acc[LOADS] = {};
    long long i = threadIdx.x;
    for (; i + (LOADS - 1) * stride < K4; i += LOADS * stride) {
        float4 a[LOADS], b[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {  // issue every load first ...
            a[u] = __ldcg(a4 + i + u * stride);  // used once: bypass the L1
            b[u] = b4[i + u * stride];           // used by every block: keep it cached
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u)  // ... then use them
            acc[u] += a[u].x * b[u].x + a[u].y * b[u].y + a[u].z * b[u].z + a[u].w * b[u].w;
    }
    for (; i < K4; i += stride) {  // what is left when K4 is not a multiple of LOADS * stride
        const float4 a = __ldcg(a4 + i), b = b4[i];
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

// `variant` is LOADS, the number of float4 loads each thread keeps in flight.
extern "C" int launch_warp_shuffle(const float* A, const float* B, float* C, long long M,
                                   long long K, int block, int variant, cudaStream_t stream) {
    const unsigned grid = (unsigned)M;
    switch (variant) {
        case 1: gemv_warp_shuffle<1><<<grid, block, 0, stream>>>(A, B, C, K); break;
        case 2: gemv_warp_shuffle<2><<<grid, block, 0, stream>>>(A, B, C, K); break;
        case 4: gemv_warp_shuffle<4><<<grid, block, 0, stream>>>(A, B, C, K); break;
        case 8: gemv_warp_shuffle<8><<<grid, block, 0, stream>>>(A, B, C, K); break;
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
