// What both decode kernels (decode_mma.cu, decode_cores.cu) share: the three element types, their
// conversions to and from float, and one 16-byte load of a row's next elements.
//
// Invariants: a 16-byte load is issued only where the caller's template says every row is 16-byte
// aligned (gemvlab/decode/rule.py checks the addresses and strides) and all of its elements lie
// inside the row; in a row's last, partial piece each element inside the row is loaded alone and
// the rest are +0.0 (all-zero bits in all three types), so the tail adds nothing.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "launch_args.cuh"

// The element type of a dtype code (gemvlab.decode.kernels.DTYPE_CODES): the variant's first
// template argument. Raw is an unsigned integer of the same size, for moving bits unconverted.
template <int CODE> struct Elem;
template <> struct Elem<0> { using T = float;         using Raw = unsigned int; };
template <> struct Elem<1> { using T = __half;        using Raw = unsigned short; };
template <> struct Elem<2> { using T = __nv_bfloat16; using Raw = unsigned short; };

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// 16 bytes: 4 floats or 8 halves, as one uint4 or element by element.
template <int CODE> union Pack16 {
    uint4 v;
    typename Elem<CODE>::Raw raw[16 / sizeof(typename Elem<CODE>::Raw)];
    typename Elem<CODE>::T e[16 / sizeof(typename Elem<CODE>::Raw)];
};

// The 16 bytes' worth of elements at p, element i at p[i * stride]: one 16-byte load when VEC
// (stride is 1 and p is 16-byte aligned: the caller's promise), else one load per element. STREAM:
// the data is read once (W), so the L2 may evict it first (ld.global.cs); otherwise it is reused
// from the caches (B).
template <int CODE, bool VEC, bool STREAM>
__device__ __forceinline__ uint4 load16(const typename Elem<CODE>::T* p, long long stride) {
    using Raw = typename Elem<CODE>::Raw;
    constexpr int E = 16 / sizeof(Raw);
    Pack16<CODE> out;
    if (VEC) {
        const uint4* q = reinterpret_cast<const uint4*>(p);
        out.v = STREAM ? __ldcs(q) : __ldg(q);
        return out.v;
    }
    const Raw* r = reinterpret_cast<const Raw*>(p);
#pragma unroll
    for (int i = 0; i < E; ++i) out.raw[i] = STREAM ? __ldcs(r + i * stride) : __ldg(r + i * stride);
    return out.v;
}

// As load16, where only `valid` (may be zero or less) of the elements lie inside the row: those
// are loaded one by one and the rest are +0.0. For the last, partial piece of a row.
template <int CODE>
__device__ __forceinline__ uint4 load16_tail(const typename Elem<CODE>::T* p, long long valid, long long stride) {
    using Raw = typename Elem<CODE>::Raw;
    constexpr int E = 16 / sizeof(Raw);
    Pack16<CODE> out;
    const Raw* r = reinterpret_cast<const Raw*>(p);
#pragma unroll
    for (int i = 0; i < E; ++i) out.raw[i] = i < valid ? __ldg(r + i * stride) : Raw(0);
    return out.v;
}
