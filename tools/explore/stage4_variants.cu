// Exploration only (not a stage): variants of stage 4 timed against stage 3 on the H200.
#include <cuda_runtime.h>

__device__ __forceinline__ float wsum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float4 ld_a(const float4* p, int mode) {
    if (mode == 0) return *p;
    if (mode == 1) return __ldcs(p);
    float4 v;  // mode 2: no L1 allocation, 256-byte L2 prefetch
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

template <int LOADS, int MODE>
__global__ void s4(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, long long K) {
    const float4* a4 = reinterpret_cast<const float4*>(A + (long long)blockIdx.x * K);
    const float4* b4 = reinterpret_cast<const float4*>(B);
    const long long K4 = K / 4, stride = blockDim.x;
    float acc[LOADS] = {};
    long long i = threadIdx.x;
    for (; i + (LOADS - 1) * stride < K4; i += LOADS * stride) {
        float4 a[LOADS], b[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) { a[u] = ld_a(a4 + i + u * stride, MODE); b[u] = b4[i + u * stride]; }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) acc[u] += a[u].x * b[u].x + a[u].y * b[u].y + a[u].z * b[u].z + a[u].w * b[u].w;
    }
    for (; i < K4; i += stride) { float4 a = ld_a(a4 + i, MODE), b = b4[i]; acc[0] += a.x*b.x + a.y*b.y + a.z*b.z + a.w*b.w; }
    float s = 0.f;
#pragma unroll
    for (int u = 0; u < LOADS; ++u) s += acc[u];
    __shared__ float wp[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    s = wsum(s);
    if (lane == 0) wp[warp] = s;
    __syncthreads();
    if (warp == 0) { s = lane < blockDim.x / 32 ? wp[lane] : 0.f; s = wsum(s); if (lane == 0) C[blockIdx.x] = s; }
}

extern "C" int launch_explore(const float* A, const float* B, float* C, long long M, long long K,
                              int block, int variant, cudaStream_t st) {
    const unsigned g = (unsigned)M;
    switch (variant) {  // variant = 10 * LOADS + MODE
        case 10: s4<1,0><<<g, block, 0, st>>>(A, B, C, K); break;
        case 11: s4<1,1><<<g, block, 0, st>>>(A, B, C, K); break;
        case 12: s4<1,2><<<g, block, 0, st>>>(A, B, C, K); break;
        case 40: s4<4,0><<<g, block, 0, st>>>(A, B, C, K); break;
        case 41: s4<4,1><<<g, block, 0, st>>>(A, B, C, K); break;
        case 42: s4<4,2><<<g, block, 0, st>>>(A, B, C, K); break;
        case 80: s4<8,0><<<g, block, 0, st>>>(A, B, C, K); break;
        case 81: s4<8,1><<<g, block, 0, st>>>(A, B, C, K); break;
        case 82: s4<8,2><<<g, block, 0, st>>>(A, B, C, K); break;
        default: return 1;
    }
    return (int)cudaGetLastError();
}
