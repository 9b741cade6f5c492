// Exploration round 19 (issue 9, not part of gemvlab): the two shapes session 14's record left
// under the bandwidth bar.
//
// Part A, split_k with one row per block and B not aligned where the row is (64 x 1,000,003):
// today B's body is read as 4 scalar loads per float4 of A. But in one block the stretch's
// offset from B's 16-byte boundaries, D (0 to 3 floats), is one number, so the block can take a
// loop compiled for its D and read B with the widest loads that D allows:
//   MODE 0: 4 scalars, as gemvlab (but with one float of each edge per lane, below);
//   MODE 1: D = 0 as float4s (the rows that happen to line up with B), else 4 scalars;
//   MODE 2: D = 0 one float4, D = 2 two float2s, D = 1 or 3 a scalar, a float2 and a scalar.
// Counted per float4 of A in L1 wavefronts (128-byte lines touched per warp-wide load; A's own
// __ldcg load is 4): B as scalars 16, MODE 2 4, 8 or 12 (9 on average over D).
//
// Part B, row_tiles (2,000,000 x 45): the tile is a static 16 KB array, so 13 blocks fit per SM
// whatever the tile holds (2,880 floats at K = 45). DYN sizes it to the tile in dynamic shared
// memory, so more blocks can be resident; BLATE loads this thread's float of B before the tile
// and stores it to shared memory after (gemvlab's version waits for B's load before the tile's
// loads go out, in its SASS).
//
// Part A's kernels keep one float of each edge per lane (the block has at least 32 lanes), and
// with 2 loads take 32 registers, as gemvlab's split_k (8 blocks of 256 per SM); 4 loads take 48
// (5 blocks; round19/ptxas.txt). The __launch_bounds__ says nothing more than the block size.
//
// variant, part A: 16 * MODE + LOADS * 2 (B never aligned like the row); part B: G + 64 * DYN
// + 128 * BLATE.
#include "split_k.cu"
#include "row_tiles.cu"

// ---- part A ----

template <int MODE, int D>
__device__ __forceinline__ float4 load_b4_d(const float* __restrict__ b, int i) {
    const float* p = b + 4 * (long long)i;  // 4 * D bytes past a 16-byte boundary
    if (MODE == 0 || (MODE == 1 && D != 0)) return make_float4(p[0], p[1], p[2], p[3]);
    if (D == 0) return *reinterpret_cast<const float4*>(p);
    if (D == 2) {
        const float2 lo = *reinterpret_cast<const float2*>(p), hi = *reinterpret_cast<const float2*>(p + 2);
        return make_float4(lo.x, lo.y, hi.x, hi.y);
    }
    const float2 mid = *reinterpret_cast<const float2*>(p + 1);  // 8-byte aligned at D = 1 and 3
    return make_float4(p[0], mid.x, mid.y, p[3]);
}

// dot_stretch's body for a block whose B body sits D floats past a 16-byte boundary.
template <int LOADS, int MODE, int D>
__device__ __forceinline__ void body_d(const float4* __restrict__ a4, const float* __restrict__ b_body,
                                       long long n4, int lane, int lanes, float (&acc)[LOADS]) {
#pragma unroll 1
    for (long long i = lane; i < n4; i += LOADS * (long long)lanes) {
        float4 av[LOADS], bv[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const long long k = i + u * (long long)lanes;
            const bool inside = u == 0 || k < n4;
            av[u] = inside ? __ldcg(a4 + k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            bv[u] = inside ? load_b4_d<MODE, D>(b_body, (int)k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) acc[u] += dot4(av[u], bv[u]);
    }
}

template <int LOADS, int MODE>
__device__ __forceinline__ float dot_stretch_d(const float* __restrict__ a, const float* __restrict__ b,
                                               long long n, int lane, int lanes) {
    const long long head = min((long long)(((16 - (reinterpret_cast<size_t>(a) & 15)) & 15) / 4), n);
    const long long n4 = (n - head) / 4;
    const long long tail = head + 4 * n4;
    // lanes is a block of at least 32 here: one float of the head and one of the tail per lane
    // at most (dot_stretch keeps three of each, for rows_per_warp's groups of 1 or 2 lanes)
    const long long t = tail + lane;
    const float edge_a0 = lane < head ? __ldcg(a + lane) : 0.0f, edge_b0 = lane < head ? b[lane] : 0.0f;
    const float edge_a1 = t < n ? __ldcg(a + t) : 0.0f, edge_b1 = t < n ? b[t] : 0.0f;
    const float4* a4 = reinterpret_cast<const float4*>(a + head);
    const float* b_body = b + head;
    float acc[LOADS] = {};
    switch ((reinterpret_cast<size_t>(b_body) & 15) / 4) {  // the same for the whole block
        case 0: body_d<LOADS, MODE, 0>(a4, b_body, n4, lane, lanes, acc); break;
        case 1: body_d<LOADS, MODE, 1>(a4, b_body, n4, lane, lanes, acc); break;
        case 2: body_d<LOADS, MODE, 2>(a4, b_body, n4, lane, lanes, acc); break;
        default: body_d<LOADS, MODE, 3>(a4, b_body, n4, lane, lanes, acc); break;
    }
    float sum = edge_a0 * edge_b0 + edge_a1 * edge_b1;
#pragma unroll
    for (int u = 0; u < LOADS; ++u) sum += acc[u];
    return sum;
}

template <int LOADS, int MODE, int MINB>
__global__ void __launch_bounds__(256, LOADS == 2 ? 8 : 5) z_split_k(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                          float* __restrict__ out, long long M, long long K, long long chunk, int splits) {
    const long long r0 = blockIdx.x % M, s = blockIdx.x / M, k0 = s * chunk;
    const long long n = min(chunk, K - k0);
    float v[1] = {0.0f};
    if (n > 0) v[0] = dot_stretch_d<LOADS, MODE>(A + r0 * lda + k0, B + k0, n, threadIdx.x, blockDim.x);
    block_totals<1>(v);
    if (threadIdx.x == 0) out[splits == 1 ? r0 : r0 * splits + s] = v[0];
}

extern "C" int launch_round19_split(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits, block = p->block;
    if (block != 256) return (int)cudaErrorInvalidValue;  // the launch bounds' block
    const unsigned grid = (unsigned)(M * splits);
    float* out = splits == 1 ? C : partials;
    switch (p->variant) {
#define Z(loads, mode, minb) \
    case 16 * mode + 2 * loads: \
        z_split_k<loads, mode, minb><<<grid, block, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        Z(2, 0, 1) Z(2, 1, 1) Z(2, 2, 1) Z(4, 2, 1)
#undef Z
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    gemv_split_k_reduce<<<(unsigned)((M * 32 + 255) / 256), 256, 0, stream>>>(partials, C, M, splits);
    return (int)cudaGetLastError();
}

// ---- part B ----

template <int G, bool DYN, bool BLATE>
__global__ void z_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                            float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float tile_static[DYN ? 4 : TILE_FLOATS + 4];
    extern __shared__ __align__(16) float tile_dynamic[];
    float* tile = DYN ? tile_dynamic : tile_static;
    __shared__ float Bs[MAX_K];
    float b = 0.0f;
    if (BLATE) {
        if (threadIdx.x < K) b = B[threadIdx.x];  // the launcher checks block >= K
    } else {
        for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    }
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, blockDim.x / G);
    load_tile(tile, s);
    if (BLATE && threadIdx.x < K) Bs[threadIdx.x] = b;
    __syncthreads();
    sum_rows<G>(tile, Bs, s, (int)lda, (int)K, C);
}

static size_t tile_bytes(const LaunchArgs* p, int G) {
    return (size_t)(((p->block / G - 1) * p->lda + p->K + 4) * 4);
}

extern "C" int launch_round19_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64;
    const bool dyn = p->variant & 64, blate = p->variant & 128;
    if (G < 1 || block < 32 || block % 32 || block < G || (blate && block < K)) return (int)cudaErrorInvalidValue;
    if (K > MAX_K || (block / G - 1) * lda + K > TILE_FLOATS) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + block / G - 1) / (block / G));
    const size_t smem = dyn ? tile_bytes(p, G) : 0;
    switch (p->variant) {
#define T(g, d, l) \
    case g + 64 * d + 128 * l: z_row_tiles<g, d, l><<<grid, block, smem, stream>>>(A, lda, B, C, M, K); break;
        T(1, 0, 0) T(1, 1, 0) T(1, 0, 1) T(1, 1, 1) T(2, 0, 0) T(2, 1, 0) T(2, 0, 1) T(2, 1, 1)
#undef T
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

// Blocks per SM for a part B variant, as the occupancy calculator of the runtime gives it.
extern "C" int round19_tiles_blocks_per_sm(const LaunchArgs* p) {
    const int G = p->variant % 64;
    const size_t smem = (p->variant & 64) ? tile_bytes(p, G) : 0;
    int n = 0;
    cudaError_t e = cudaErrorInvalidValue;
    switch (p->variant) {
#define T(g, d, l) \
    case g + 64 * d + 128 * l: e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, z_row_tiles<g, d, l>, p->block, smem); break;
        T(1, 0, 0) T(1, 1, 0) T(1, 0, 1) T(1, 1, 1) T(2, 0, 0) T(2, 1, 0) T(2, 0, 1) T(2, 1, 1)
#undef T
    }
    return e == cudaSuccess ? n : -(int)e;
}
