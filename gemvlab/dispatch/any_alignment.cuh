// For split_k.cu and rows_per_warp.cu: the dot product of one stretch of a row of A that may start
// anywhere with the same stretch of B. Why: the float4 stages need every row 16-byte aligned; a library cannot (K = 4099 puts row r at
// byte 4 * 4099 * r, and a view such as A[:, 1:] starts mid-row). So a stretch is cut in three: a
// head of 0 to 3 floats before the row's first 16-byte boundary, a body of whole float4s (LOADS
// independent loads of A per lane per trip, the last trip's predicated), and a tail of 0 to 3
// floats. The head's and tail's loads are written before the body; ptxas issues them together but
// multiplies them before the body's loop starts, so a warp waits for memory once before the body.
// B is read at A's columns: as float4s where B sits at the same offset from a 16-byte boundary as
// every row (B_VEC), else as scalars, or, where several rows share B (dot_rows_shuffled), as aligned
// float4s shifted into place by warp shuffles.
//
// Invariants: A is loaded with __ldcg (each byte is used once; the intent is to leave the L1 to B);
// a product is added only where the row has that element (B may hold an infinity, and 0 * inf is
// NaN); the order of additions is fixed: the same inputs, the same bits.
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
    const long long head = min((long long)(((16 - (reinterpret_cast<size_t>(a) & 15)) & 15) / 4), n);
    const long long n4 = (n - head) / 4;  // whole float4s in the body
    const long long tail = head + 4 * n4;  // the first float after the body
    // The head's and tail's floats (0 to 3 each; j = 1, 2 matter only with fewer than 3 lanes),
    // loaded now and added after the body. A float outside the head or tail is not loaded.
    float edge_a[6], edge_b[6];
#pragma unroll
    for (int j = 0; j < 3; ++j) {
        const long long h = lane + (long long)j * lanes, t = tail + lane + (long long)j * lanes;
        edge_a[j] = h < head ? __ldcg(a + h) : 0.0f;
        edge_b[j] = h < head ? b[h] : 0.0f;
        edge_a[3 + j] = t < n ? __ldcg(a + t) : 0.0f;
        edge_b[3 + j] = t < n ? b[t] : 0.0f;
    }
    // body: float4s from the 16-byte boundary on, LOADS independent loads per lane per trip
    // written before any is used; in the last trip, loads past the body are not made.
    const float4* a4 = reinterpret_cast<const float4*>(a + head);
    const float* b_body = b + head;
    float acc[LOADS] = {};
#pragma unroll 1  // no unrolling beyond the LOADS written below
    for (long long i = lane; i < n4; i += LOADS * (long long)lanes) {
        float4 av[LOADS], bv[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const long long k = i + u * (long long)lanes;
            const bool inside = u == 0 || k < n4;  // u = 0 is inside: the loop's condition
            av[u] = inside ? __ldcg(a4 + k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            bv[u] = inside ? load_b4<B_VEC>(b_body, k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) acc[u] += dot4(av[u], bv[u]);
    }
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 6; ++j) sum += edge_a[j] * edge_b[j];
#pragma unroll
    for (int u = 0; u < LOADS; ++u) sum += acc[u];
    return sum;
}

// Several rows' dot products with one stretch of B (split_k with ROWS > 1), for lanes = the
// block (a multiple of 32) covering the stretch: rows r < `rows` start at a + r * lda, and
// sum[r] gets this lane's share of row r. Each row keeps its own head, body and tail, as in
// dot_stretch. Rows aligned like B (B_VEC, the same head for all): dot_rows_aligned, B's float4s
// loaded once per trip for every row. Otherwise (lda % 4 != 0, or B at another offset from a
// 16-byte boundary than the rows) no one float4 of B lines up with every row: dot_rows_shuffled.
template <int ROWS, int LOADS>
__device__ __forceinline__ void dot_rows_aligned(const float* __restrict__ a, long long lda, int rows,
                                                 const float* __restrict__ b, long long n, int lane, int lanes,
                                                 float (&sum)[ROWS]) {
    long long head[ROWS], n4[ROWS], n4_most = 0;
    float edge_a[ROWS][2], edge_b[ROWS][2];  // this lane's float of each row's head and tail
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const float* ar = a + r * lda;
        head[r] = min((long long)(((16 - (reinterpret_cast<size_t>(ar) & 15)) & 15) / 4), n);
        n4[r] = r < rows ? (n - head[r]) / 4 : 0;
        n4_most = max(n4_most, n4[r]);
        const long long t = head[r] + 4 * n4[r] + lane;
        const bool h = r < rows && lane < head[r], tl = r < rows && t < n;
        // loaded here, before the body's first trip (ptxas also multiplies them here); added after the body
        edge_a[r][0] = h ? __ldcg(ar + lane) : 0.0f;
        edge_b[r][0] = h ? b[lane] : 0.0f;
        edge_a[r][1] = tl ? __ldcg(ar + t) : 0.0f;
        edge_b[r][1] = tl ? b[t] : 0.0f;
    }
    float acc[ROWS][LOADS] = {};
#pragma unroll 1
    for (long long i = lane; i < n4_most; i += LOADS * (long long)lanes) {
        float4 av[ROWS][LOADS], bv[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const long long k = i + u * (long long)lanes;
            bv[u] = k < n4_most ? load_b4<true>(b + head[0], k) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                av[r][u] = k < n4[r] ? __ldcg(reinterpret_cast<const float4*>(a + r * lda + head[r]) + k)
                                     : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u)
#pragma unroll
            for (int r = 0; r < ROWS; ++r) acc[r][u] += dot4(av[r][u], bv[u]);
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        sum[r] = edge_a[r][0] * edge_b[r][0] + edge_a[r][1] * edge_b[r][1];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) sum[r] += acc[r][u];
    }
}

__device__ __forceinline__ float4 shfl_down4(float4 v, int by) {
    return make_float4(__shfl_down_sync(0xffffffffu, v.x, by), __shfl_down_sync(0xffffffffu, v.y, by),
                       __shfl_down_sync(0xffffffffu, v.z, by), __shfl_down_sync(0xffffffffu, v.w, by));
}

// Floats d .. d + 3 of x followed by y (d from 0 to 3).
__device__ __forceinline__ float4 window(float4 x, float4 y, int d) {
    return make_float4(d == 0 ? x.x : d == 1 ? x.y : d == 2 ? x.z : x.w,
                       d == 0 ? x.y : d == 1 ? x.z : d == 2 ? x.w : y.x,
                       d == 0 ? x.z : d == 1 ? x.w : d == 2 ? y.x : y.y,
                       d == 0 ? x.w : d == 1 ? y.x : d == 2 ? y.y : y.z);
}

// dot_rows for rows at different offsets from B's (lda % 4 != 0, or B at another offset than the
// rows). B is loaded only as aligned float4s ("chunks"), LOADS per lane per trip like A's; each row
// takes the 4 floats it needs from two neighbouring chunks, the next one got from the next lane
// with shuffles (the warp's last lanes load theirs). So one chunk load serves every row of the
// block, whatever their offsets. Each row's first and last body float4 are summed as scalars with
// its head and tail (at most 7 floats at each end), so no chunk load reaches outside the stretch.
// A product a row does not have is not added (B may hold an infinity; 0 * inf is NaN). Indices
// inside the stretch are 32-bit (meant to save registers): the launcher refuses stretches of more
// than 2^31 - 4096 floats when rows share a block without B_VEC. docs/design/kernels.md has the
// chunk arithmetic.
template <int ROWS, int LOADS>
__device__ __forceinline__ void dot_rows_shuffled(const float* __restrict__ a, long long lda, int rows,
                                                  const float* __restrict__ b, long long n, int lane, int lanes,
                                                  float (&sum)[ROWS]) {
    const int wl = lane % 32;
    const int e = (int)((reinterpret_cast<size_t>(b) & 15) / 4);
    const float4* chunks = reinterpret_cast<const float4*>(b - e);  // 16-byte aligned
    const int last_chunk = (int)((n + e - 4) / 4);  // the last chunk wholly inside the stretch
    int last[ROWS], q[ROWS], d[ROWS], head[ROWS], qmin = 1;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const float* ar = a + r * lda;
        head[r] = (int)min((long long)(((16 - (reinterpret_cast<size_t>(ar) & 15)) & 15) / 4), n);
        const int n4 = r < rows ? (int)((n - head[r]) / 4) : 0;
        last[r] = n4 - 2;  // the loop's last body float4 of this row
        q[r] = (e + head[r]) / 4;
        d[r] = (e + head[r]) % 4;
        if (r < rows) qmin = min(qmin, q[r]);
        // the scalar ends: floats [0, head + 4) and [head + 4 (n4 - 1), n), at most 7 each
        const long long lo_end = r < rows ? head[r] + 4 * min(n4, 1) : 0;
        const long long hi_start = r >= rows ? n : n4 >= 2 ? head[r] + 4 * (n4 - 1) : lo_end;
        const long long t = hi_start + lane;
        sum[r] = (lane < lo_end ? __ldcg(ar + lane) * b[lane] : 0.0f) + (t < n ? __ldcg(ar + t) * b[t] : 0.0f);
    }
    // A row with q = qmin + 1 and d > 0 also needs the chunk two lanes on: the same for the block.
    bool two_on = false;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) two_on |= r < rows && q[r] > qmin && d[r] > 0;
    float acc[ROWS][LOADS] = {};
    // The trips are the same for every lane of the warp (the shuffles take the whole warp):
    // lane 32w + l takes body float4s k = 1 + 32w + l + (i * LOADS + u) * lanes, u < LOADS, in
    // trips i while 32w + i * LOADS * lanes < n / 4, and loads only those inside.
    const int bound = (int)(n / 4), step = LOADS * lanes;
#pragma unroll 1
    for (int i0 = lane - wl, k0 = 1 + lane; i0 < bound; i0 += step, k0 += step) {
        float4 av[ROWS][LOADS], own[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int k = k0 + u * lanes;
            own[u] = k + qmin <= last_chunk ? chunks[k + qmin] : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                av[r][u] = k <= last[r] ? __ldcg(reinterpret_cast<const float4*>(a + r * lda + head[r]) + k)
                                        : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int j = k0 + u * lanes + qmin;  // this lane's chunk
            float4 next = shfl_down4(own[u], 1);
            if (wl == 31) next = j + 1 <= last_chunk ? chunks[j + 1] : make_float4(0.f, 0.f, 0.f, 0.f);
            float4 after = next;
            if (two_on) {
                after = shfl_down4(own[u], 2);
                if (wl >= 30) after = j + 2 <= last_chunk ? chunks[j + 2] : make_float4(0.f, 0.f, 0.f, 0.f);
            }
            const int k = j - qmin;
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                if (k <= last[r])  // not 0 * B where the row has no float4 k (B may hold an infinity)
                    acc[r][u] += dot4(av[r][u], q[r] == qmin ? window(own[u], next, d[r]) : window(next, after, d[r]));
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int u = 0; u < LOADS; ++u) sum[r] += acc[r][u];
}

template <int ROWS, int LOADS, bool B_VEC>
__device__ __forceinline__ void dot_rows(const float* __restrict__ a, long long lda, int rows,
                                         const float* __restrict__ b, long long n, int lane, int lanes,
                                         float (&sum)[ROWS]) {
    if (B_VEC)
        dot_rows_aligned<ROWS, LOADS>(a, lda, rows, b, n, lane, lanes, sum);
    else
        dot_rows_shuffled<ROWS, LOADS>(a, lda, rows, b, n, lane, lanes, sum);
}
