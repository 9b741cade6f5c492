// Shared by the dispatcher's kernels (split_k.cu, rows_per_warp.cu): the dot product of one
// stretch of a row of A with the same stretch of B, for a row that may start anywhere.
//
// Stages 3 to 5 need every row to start 16-byte aligned (K % 4 == 0, aligned pointers) and
// refuse anything else. A library cannot: K = 4099 puts row r at byte 4 * 4099 * r, a view such
// as A[:, 1:] starts mid-row, and torch.matmul takes both. So a stretch is cut in three:
//   head: the 0 to 3 floats before the row's first 16-byte boundary, read one float at a time;
//   body: whole float4s from that boundary on, LOADS independent loads per lane per trip
//         (LDG.E.128; how many ptxas issues before their first use, the SASS says);
//   tail: the 0 to 3 floats after the last whole float4.
// The head and tail are at most 6 of the stretch's floats, so they add at most 6 scalar loads
// of A, and as many of B, per stretch (a stretch whose length is not a multiple of 4 has a tail
// even when aligned). What that costs in time is not measured apart from the rest.
//
// B is read at the same columns as A. Where B sits at the same offset from a 16-byte boundary
// as every row of A (B_VEC: (A - B) % 16 == 0 bytes and lda % 4 == 0), B's body is float4s too.
// Otherwise B's float4 would straddle a boundary, so the body reads B as four scalar loads
// (each with its lanes 16 bytes apart: more L1 lookups per byte than one float4). Where many
// rows share B it comes mostly from the L1 or the L2, so this costs instructions and lookups
// rather than DRAM bytes; where rows are few, B is read from DRAM like A. Its cost in time is
// not separated from the rest.
//
// A is loaded with __ldcg (not cached in the L1): each byte of A is used once, and keeping it
// out of the L1 leaves the L1 to B, which every row reads (stage 4's __ldcg, notebook 03: it
// gained 1.6 to 3% at 32, 128 and 256 of the four block sizes measured with 2048 rows; at 16
// and 128 rows it was under 1% slower or tied, about the drift between runs. Not measured
// separately for these kernels).
#pragma once
#include <cuda_runtime.h>

__device__ __forceinline__ float dot4(float4 a, float4 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

template <bool B_VEC>
__device__ __forceinline__ float4 load_b4(const float* __restrict__ b, long long i) {
    if (B_VEC) return reinterpret_cast<const float4*>(b)[i];
    const float* p = b + 4 * i;  // B is not aligned where A is: four scalar loads
    return make_float4(p[0], p[1], p[2], p[3]);
}

// This lane's share of sum(a[k] * b[k], k < n), for `lanes` lanes numbered 0..lanes-1 that
// together cover the stretch. a and b point at the stretch's first element (4-byte aligned).
template <int LOADS, bool B_VEC>
__device__ __forceinline__ float dot_stretch(const float* __restrict__ a, const float* __restrict__ b,
                                             long long n, int lane, int lanes) {
    float acc[LOADS] = {};
    // head: floats until a reaches a 16-byte boundary (0 to 3, never past the stretch)
    const long long head = min((long long)(((16 - (reinterpret_cast<size_t>(a) & 15)) & 15) / 4), n);
    for (long long h = lane; h < head; h += lanes) acc[0] += __ldcg(a + h) * b[h];
    a += head;
    b += head;
    n -= head;
    // body: float4s, LOADS independent loads per lane written before any is used
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const long long n4 = n / 4;
    long long i = lane;
#pragma unroll 1  // no unrolling beyond the LOADS written below
    for (; i + (LOADS - 1) * (long long)lanes < n4; i += LOADS * (long long)lanes) {
        float4 av[LOADS], bv[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            av[u] = __ldcg(a4 + i + u * lanes);
            bv[u] = load_b4<B_VEC>(b, i + u * lanes);
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) acc[u] += dot4(av[u], bv[u]);
    }
    for (; i < n4; i += lanes) acc[0] += dot4(__ldcg(a4 + i), load_b4<B_VEC>(b, i));
    // tail: what is left after the last whole float4 (0 to 3 floats)
    for (long long t = 4 * n4 + lane; t < n; t += lanes) acc[0] += __ldcg(a + t) * b[t];
    float sum = 0.0f;
#pragma unroll
    for (int u = 0; u < LOADS; ++u) sum += acc[u];
    return sum;
}
