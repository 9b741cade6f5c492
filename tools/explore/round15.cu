// Exploration round 15 (issue 9, not part of gemvlab): B realigned with warp shuffles where the
// rows of A do not start at B's offset from a 16-byte boundary (odd K, views).
//
// gemvlab's dot_stretch and dot_rows (gemvlab/cuda/any_alignment.cuh) then read B's body as four
// scalar loads per float4 of A, each load's lanes 16 bytes apart: 4 L1 requests where an aligned
// float4 takes one, and in dot_rows each row reads B at its own offset, so rows share no B loads.
// Here every lane loads B only as aligned float4s ("chunks"), the chunk at its own index k and
// the next one from its neighbour lane by __shfl_down_sync (the last lane of a warp, or of a
// group of G lanes, loads it), and takes the 4 floats it needs from the two: one aligned float4
// load and 4 shuffles per float4 of B, and with ROWS rows per block one chunk load serves them
// all, whatever their offsets (a row whose offset is 4 or more floats past the first row's uses
// the chunk two lanes on: 4 more shuffles).
//
// split_k variant: 16 * ROWS + 2 * LOADS (B_VEC is always false here).
// rows_per_warp variant: G (4, 8, 16, 32), 4 loads per trip as gemvlab's.
#include "any_alignment.cuh"
#include "launch_args.cuh"

constexpr unsigned FULL = 0xffffffffu;

__device__ __forceinline__ float4 shfl_down4(float4 v, int by, int width) {
    return make_float4(__shfl_down_sync(FULL, v.x, by, width), __shfl_down_sync(FULL, v.y, by, width),
                       __shfl_down_sync(FULL, v.z, by, width), __shfl_down_sync(FULL, v.w, by, width));
}

// Floats d .. d + 3 of x followed by y (d in 0..3, the same for a row's every trip).
__device__ __forceinline__ float4 window(float4 x, float4 y, int d) {
    return make_float4(d == 0 ? x.x : d == 1 ? x.y : d == 2 ? x.z : x.w,
                       d == 0 ? x.y : d == 1 ? x.z : d == 2 ? x.w : y.x,
                       d == 0 ? x.z : d == 1 ? x.w : d == 2 ? y.x : y.y,
                       d == 0 ? x.w : d == 1 ? y.x : d == 2 ? y.y : y.z);
}

// dot_rows (any_alignment.cuh) with B read only as aligned chunks and realigned by shuffles, for
// split_k's ROWS rows per block (lanes = the block, a multiple of 32): one chunk load per lane
// per trip serves every row, whatever the rows' offsets. Row r's body float4 k needs floats
// d_r .. d_r + 3 of chunks k + q_r and k + q_r + 1 (q_r is 0 or 1). As in dot_realigned below,
// each row's first and last body float4 are summed as scalars with its head and tail, so that
// the loop's chunk loads (predicated on lying inside the stretch) never reach outside it.
template <int ROWS, int LOADS>
__device__ __forceinline__ void dot_rows_realigned(const float* __restrict__ a, long long lda, int rows,
                                                   const float* __restrict__ b, long long n, int lane, int lanes,
                                                   float (&sum)[ROWS]) {
    const int wl = lane % 32;
    const int e = (int)((reinterpret_cast<size_t>(b) & 15) / 4);
    const float4* bal4 = reinterpret_cast<const float4*>(b - e);
    const int jmax = (int)((n + e - 4) / 4);  // the last chunk inside the stretch
    int last[ROWS], q[ROWS], d[ROWS], head[ROWS], qmin = 1;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const float* ar = a + r * lda;
        head[r] = (int)min((long long)(((16 - (reinterpret_cast<size_t>(ar) & 15)) & 15) / 4), n);
        const int n4 = r < rows ? (int)((n - head[r]) / 4) : 0;
        last[r] = n4 - 2;
        q[r] = (e + head[r]) / 4;
        d[r] = (e + head[r]) % 4;
        if (r < rows) qmin = min(qmin, q[r]);
        // the scalar part: [0, head + 4) and [head + 4 (n4 - 1), n), at most 7 floats each
        const long long lo_end = r < rows ? head[r] + 4 * min(n4, 1) : 0;
        const long long hi_start = r >= rows ? n : n4 >= 2 ? head[r] + 4 * (n4 - 1) : lo_end;
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const long long h = lane + (long long)j * lanes, t = hi_start + lane + (long long)j * lanes;
            if (h < lo_end) s += __ldcg(ar + h) * b[h];
            if (t < n) s += __ldcg(ar + t) * b[t];
        }
        sum[r] = s;
    }
    bool need2 = false;  // the same for the whole block
#pragma unroll
    for (int r = 0; r < ROWS; ++r) need2 |= r < rows && q[r] > qmin && d[r] > 0;
    float acc[ROWS][LOADS] = {};
    const int bound = (int)(n / 4), step = LOADS * lanes;
#pragma unroll 1
    for (int i0 = lane - wl, k0 = 1 + lane; i0 < bound; i0 += step, k0 += step) {
        float4 av[ROWS][LOADS], own[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int k = k0 + u * lanes;
            own[u] = k + qmin <= jmax ? bal4[k + qmin] : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                av[r][u] = k <= last[r] ? __ldcg(reinterpret_cast<const float4*>(a + r * lda + head[r]) + k)
                                        : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int k = k0 + u * lanes, j = k + qmin;
            float4 n1 = shfl_down4(own[u], 1, 32);
            if (wl == 31) n1 = j + 1 <= jmax ? bal4[j + 1] : make_float4(0.f, 0.f, 0.f, 0.f);
            float4 n2 = n1;
            if (need2) {
                n2 = shfl_down4(own[u], 2, 32);
                if (wl >= 30) n2 = j + 2 <= jmax ? bal4[j + 2] : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                acc[r][u] += dot4(av[r][u], q[r] == qmin ? window(own[u], n1, d[r]) : window(n1, n2, d[r]));
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int u = 0; u < LOADS; ++u) sum[r] += acc[r][u];
}

// One row (split_k with ROWS = 1, rows_per_warp): the same idea with fewer registers. The row's
// body float4 k needs B's floats b[head + 4k .. + 3]: floats D .. D + 3 of B's aligned chunks
// k and k + 1 (bal4 below), D = B's offset from a 16-byte boundary where A's body starts. Where
// D is the same for the whole warp (split_k: one row per block; rows_per_warp with G = 32) it is
// a template argument, the window is register renaming and only D floats are shuffled; else
// (D < 0) it is chosen by selects from d, and 3 floats are shuffled. So that no chunk load
// reaches outside the stretch, the body's first and last float4 are summed with the head and
// tail, as scalars (at most 7 floats each, 2 per lane with lanes >= 4), and the loop takes
// float4s 1 .. n4 - 2, whose chunks k and k + 1 lie inside.
template <int LOADS, int D>
__device__ __forceinline__ float dot_realigned(const float* __restrict__ a, const float* __restrict__ b,
                                               long long n, int lane, int lanes, int d_rt = 0) {
    const int d = D >= 0 ? D : d_rt;
    const int width = lanes < 32 ? lanes : 32, wl = lane % width;
    const long long head = min((long long)(((16 - (reinterpret_cast<size_t>(a) & 15)) & 15) / 4), n);
    const long long n4 = (n - head) / 4;
    const long long lo_end = head + 4 * min(n4, 1LL);
    const long long hi_start = n4 >= 2 ? head + 4 * (n4 - 1) : lo_end;
    float edge_a[4], edge_b[4];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        const long long h = lane + (long long)j * lanes, t = hi_start + lane + (long long)j * lanes;
        edge_a[j] = h < lo_end ? __ldcg(a + h) : 0.0f;
        edge_b[j] = h < lo_end ? b[h] : 0.0f;
        edge_a[2 + j] = t < n ? __ldcg(a + t) : 0.0f;
        edge_b[2 + j] = t < n ? b[t] : 0.0f;
    }
    const float4* a4 = reinterpret_cast<const float4*>(a + head);
    const float4* bal4 = reinterpret_cast<const float4*>(b + head - d);  // b + head is d floats past a boundary
    float acc[LOADS] = {};
    // 32-bit indices (fewer registers; the launcher keeps stretches under 2^31 floats). The loop's
    // trips are the same for every lane of the warp: bound = n / 4 does not depend on the row.
    const int last = (int)n4 - 2, bound = (int)(n / 4), step = LOADS * lanes;
#pragma unroll 1
    for (int i0 = lane - wl, k0 = 1 + lane; i0 < bound; i0 += step, k0 += step) {
        float4 av[LOADS], own[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int k = k0 + u * lanes;
            av[u] = k <= last ? __ldcg(a4 + k) : make_float4(0.f, 0.f, 0.f, 0.f);
            own[u] = k <= last + 1 ? bal4[k] : make_float4(0.f, 0.f, 0.f, 0.f);  // the lane before uses it too
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int k = k0 + u * lanes;
            float4 w = own[u];
            if (D != 0) {
                float y0 = __shfl_down_sync(FULL, own[u].x, 1, width);
                float y1 = (D < 0 || D >= 2) ? __shfl_down_sync(FULL, own[u].y, 1, width) : 0.0f;
                float y2 = (D < 0 || D >= 3) ? __shfl_down_sync(FULL, own[u].z, 1, width) : 0.0f;
                if (wl == width - 1 && k <= last) {  // the next chunk belongs to the next warp or group
                    const float4 nx = bal4[k + 1];
                    y0 = nx.x, y1 = nx.y, y2 = nx.z;
                }
                const float4 x = own[u];
                w = d == 0 ? x
                    : d == 1 ? make_float4(x.y, x.z, x.w, y0)
                    : d == 2 ? make_float4(x.z, x.w, y0, y1) : make_float4(x.w, y0, y1, y2);
            }
            acc[u] += dot4(av[u], w);
        }
    }
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) sum += edge_a[j] * edge_b[j];
#pragma unroll
    for (int u = 0; u < LOADS; ++u) sum += acc[u];
    return sum;
}

// B's offset, in floats from a 16-byte boundary, where the body of a row starting at a begins.
__device__ __forceinline__ int b_shift(const float* a, const float* b, long long n) {
    const long long head = min((long long)(((16 - (reinterpret_cast<size_t>(a) & 15)) & 15) / 4), n);
    return (int)((reinterpret_cast<size_t>(b + head) & 15) / 4);
}

template <int LOADS>
__device__ __forceinline__ float dot_realigned_uniform(const float* a, const float* b, long long n, int lane,
                                                       int lanes) {
    switch (b_shift(a, b, n)) {  // the same for the whole warp: a uniform branch
        case 0: return dot_realigned<LOADS, 0>(a, b, n, lane, lanes);
        case 1: return dot_realigned<LOADS, 1>(a, b, n, lane, lanes);
        case 2: return dot_realigned<LOADS, 2>(a, b, n, lane, lanes);
        default: return dot_realigned<LOADS, 3>(a, b, n, lane, lanes);
    }
}

__device__ __forceinline__ float warp_total(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL, v, offset);
    return v;
}

template <int ROWS>
__device__ __forceinline__ void block_totals(float (&v)[ROWS]) {
    __shared__ float warp_partial[ROWS][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        v[r] = warp_total(v[r]);
        if (lane == 0) warp_partial[r][warp] = v[r];
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const float x = (warp == 0 && lane < blockDim.x / 32) ? warp_partial[r][lane] : 0.0f;
        if (warp == 0) v[r] = warp_total(x);
    }
}

// gemvlab's gemv_split_k with dot_rows_realigned. Every block's stretch length n is the same for
// all its threads, so the loop's trips are the same for the whole block.
template <int LOADS, int ROWS>
__global__ void x_split_k(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                          float* __restrict__ out, long long M, long long K, long long chunk, int splits) {
    const long long groups = (M + ROWS - 1) / ROWS;
    const long long g = blockIdx.x % groups, s = blockIdx.x / groups;
    const long long r0 = g * ROWS, k0 = s * chunk;
    const int rows = (int)min((long long)ROWS, M - r0);
    const long long n = min(chunk, K - k0);
    float v[ROWS] = {};
    if (n > 0 && ROWS == 1)
        v[0] = dot_realigned_uniform<LOADS>(A + r0 * lda + k0, B + k0, n, threadIdx.x, blockDim.x);
    else if (n > 0)
        dot_rows_realigned<ROWS, LOADS>(A + r0 * lda + k0, lda, rows, B + k0, n, threadIdx.x, blockDim.x, v);
    block_totals<ROWS>(v);
    if (threadIdx.x == 0)
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            if (r < rows) out[splits == 1 ? r0 + r : (r0 + r) * splits + s] = v[r];
}

__global__ void x_split_k_reduce(const float* __restrict__ partials, float* __restrict__ C, long long M, int splits) {
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    float v = 0.0f;
    if (row < M)
        for (int s = lane; s < splits; s += 32) v += partials[row * splits + s];
    v = warp_total(v);
    if (row < M && lane == 0) C[row] = v;
}

extern "C" int launch_round15_split(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits, block = p->block, rows = p->variant / 16;
    const unsigned grid = (unsigned)((M + rows - 1) / rows * splits);
    float* out = splits == 1 ? C : partials;
    switch (p->variant) {
#define X_SPLIT(loads, rows_) \
    case rows_ * 16 + loads * 2: x_split_k<loads, rows_><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        X_SPLIT(1, 1) X_SPLIT(2, 1) X_SPLIT(4, 1) X_SPLIT(1, 2) X_SPLIT(2, 2) X_SPLIT(1, 4) X_SPLIT(2, 4)
#undef X_SPLIT
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    x_split_k_reduce<<<(unsigned)((M * 32 + 255) / 256), 256, 0, stream>>>(partials, C, M, splits);
    return (int)cudaGetLastError();
}

// gemvlab's gemv_rows_per_warp with dot_rows_realigned: every lane runs the loop (rows past M
// repeat row M - 1 and are not written), so the full-mask shuffles hold.
template <int G>
__global__ void x_rows_per_warp(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                                float* __restrict__ C, long long M, long long K) {
    const int lane = threadIdx.x % G;
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / G;
    const float* a = A + min(row, M - 1) * lda;
    float v = G == 32 ? dot_realigned_uniform<4>(a, B, K, lane, G)
                      : dot_realigned<4, -1>(a, B, K, lane, G, b_shift(a, B, K));
    for (int offset = G / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL, v, offset);
    if (row < M && lane == 0) C[row] = v;
}

extern "C" int launch_round15_rows(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                   cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant;
    const unsigned grid = (unsigned)((M + block / G - 1) / (block / G));
    switch (G) {
#define X_ROWS(g) case g: x_rows_per_warp<g><<<grid, block, 0, stream>>>(A, lda, B, C, M, K); break;
        X_ROWS(4) X_ROWS(8) X_ROWS(16) X_ROWS(32)
#undef X_ROWS
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
