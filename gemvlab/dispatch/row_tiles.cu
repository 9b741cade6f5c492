// Dispatcher kernel: row tiles, for rows of at most 64 floats, which even a few lanes per row
// load poorly.
//
// rows_per_warp gives each row G lanes, and a warp's load instruction then covers 32 / G rows,
// G float4s of each, from as many places in memory; where a row is not a whole number of
// float4s (K = 50: 200 bytes), every row also has a scalar head or tail, and B, not aligned
// where the rows are, is read as scalars. On the H200, M = 4,000,000 rows of K = 50 ran at 0.77
// of the read ceiling that way (tools/explore/round8/round8.txt, rows_per_warp with 4 lanes).
//
// Consecutive rows are one contiguous stretch of A when the row stride is K (or a little more).
// So a block reads the stretch holding its rows, R * blockDim.x / G of them (R below), as the read ceiling
// does: every thread loads float4s of one flat array, 4 loads written before any is used (5 to 12,
// all of its loads, where the tile is more than 4 float4s per thread: below),
// each warp's load 512 contiguous bytes; it stores them to shared memory (the tile), and after a
// barrier G lanes sum each row from there, with B copied to shared memory too. The sums are
// added in one fixed order: the same bits on every run.
//
// The stretch may start anywhere: its 0 to 3 floats before the first 16-byte boundary and the
// 0 to 3 after the last whole float4 are loaded as scalars. The float at span[j] goes to
// tile[off + j], where off is span's offset in floats from a 16-byte boundary, so the body's
// float4s land 16-byte aligned in shared memory too. Floats between rows (a row stride above K)
// are loaded with the rest and not used: the dispatcher takes this kernel only where they are
// few.
//
// Shared memory has 32 banks, each 4 bytes wide (floats i and i + 32 share one), and a bank
// serves one address per pass. With one lane per row (G = 1), the 32 lanes of a warp read the
// same column of 32 rows: at a row stride of 32 all hit one bank, 32 passes per load. So where
// the stride is even, the tile's row r starts its sum at column r % K and wraps. Counted from
// the indexing (tools/explore/round13/bank-passes.txt), that takes K = 32 from 32 passes to 1, K
// = 16 from 16 to 2, K = 8 from 8 to 4 and K = 64 (G = 2) from 16 to 2; but with G = 2 at K = 50
// it makes 2.32 passes where the plain order has 1, and odd K with G = 2 (33, 45, 63) takes about
// 2 in the plain order, which this kernel keeps at an odd stride. Timed (tools/explore/round14/round14.txt: this kernel with the start column as a
// template argument, at the tile sizes the rule picks): without the rotation the kernel took 4.3
// times as long at 4,000,000 x 32 (555.2 against 130.4 us), 2.4 times at 3,000,000 x 64 and
// 6,000,000 x 16, 1.5 times at 5,000,000 x 24 and 1.2 times at 10,000,000 x 8. At K = 50 the
// rotation (2.32 passes counted) and the plain order (1 pass) tied (0.6% apart, beyond their
// quartiles but within the drift between two timings of one record: 0.85% in session 15's record,
// 0.84% in the exploration's own record); the
// rotation is kept there, one rule for every even stride. At odd K (there an odd row stride,
// where this kernel does not rotate), a start column chosen to spread the banks tied at K = 45
// and took 3.5% more time at K = 33: removing the passes counted there did not pay in that
// timing; whether bank passes limit those shapes at all is not separated. With G = 4,
// which the rule does not use at these strides, the rotation took 11 to 16% more time at K = 8,
// 16 and 24, although the count gives it fewer passes there or as many; why is not separated
// (its extra index arithmetic is a candidate). Four changes together (B in shared memory instead
// of read through the L1, 32-bit indices in the sum, two accumulators, and the rotation) made
// the kernel take 23% less time at 10,000,000 x 8, 4% at 4,000,000 x 50, and 76% at 4,000,000 x
// 32, where the stride is 32 (tools/explore/round10/round10.txt, MODE 1 against MODE 0; round 14,
// above, then timed the rotation alone). Loading the next tile with cp.async while summing
// this one (a persistent grid, MODE 2 there) was slower at 6 of the 8 shapes with millions of
// rows, tied at K = 17 (0.6% faster, within the drift) and was 1.8% faster at K = 33. With R = 1
// and U = 4 this file is MODE 1 as it ran there (R = 2 came from round 24, U > 4 from round 34,
// below); a rewrite
// with 32-bit indices in the loads too took 1.4 to 9.5% more time at 8 of 9 shapes and tied at
// K = 8, and a tile of 8,192 floats was slower at 7 and tied at K = 63 and 64
// (round12/round12.txt).
#include <cuda_runtime.h>

#include "launch_args.cuh"

constexpr int TILE_FLOATS = 4096;  // 16 KB of shared memory per tile; the rule keeps a tile's rows within it
constexpr int MAX_K = 64;          // B's room in shared memory; the rule sends only rows this short

// Where tile t's rows lie: rows r0 .. r0 + rows - 1, the span of A from the first row's first
// float to the last row's last (n floats), and how it is cut: a head of `head` floats up to a
// 16-byte boundary, n4 float4s, a tail from `tail` on. off: the span's offset in floats from a
// 16-byte boundary; span[j] goes to tile[off + j], so the body lands 16-byte aligned.
struct TileSpan {
    long long r0, n, n4, tail;
    int rows, off, head;
    const float* span;
};

__device__ __forceinline__ TileSpan tile_span(const float* A, long long lda, long long M, long long K,
                                              long long t, int rows_per_tile) {
    TileSpan s;
    s.r0 = t * rows_per_tile;
    s.rows = (int)min((long long)rows_per_tile, M - s.r0);
    s.span = A + s.r0 * lda;
    s.n = (s.rows - 1) * lda + K;
    s.off = (int)((reinterpret_cast<size_t>(s.span) & 15) / 4);
    s.head = (int)min((long long)((4 - s.off) & 3), s.n);
    s.n4 = (s.n - s.head) / 4;
    s.tail = s.head + 4 * s.n4;
    return s;
}

// The tile through registers: U float4 loads per thread per trip written before any is used,
// then stored to shared memory. U = 4: each thread runs its own trips. U > 4 (the dispatcher picks
// as many as make the tile one trip): the trips are counted per warp, so that every lane reaches
// the __syncwarp between the loads and the stores. Without it ptxas (nvcc 13.0, sm_90) puts some
// stores between the loads at U > 4 (tools/explore/round33/round33.txt prints the order): a store
// waits for its load, and the loads after it go out one memory latency late.
template <int U>
__device__ __forceinline__ void load_tile(float* tile, const TileSpan& s) {
    const int t = threadIdx.x;
    float4* tile4 = reinterpret_cast<float4*>(tile + s.off + s.head);  // off + head is 0 or 4 (aligned) where n4 > 0
    const float4* span4 = reinterpret_cast<const float4*>(s.span + s.head);
    const float h = t < s.head ? __ldcg(s.span + t) : 0.0f;
    const float e = s.tail + t < s.n ? __ldcg(s.span + s.tail + t) : 0.0f;
    const long long first = U == 4 ? t : t - t % 32;  // U > 4: the warp's first lane decides the trips
    for (long long f0 = first; f0 < s.n4; f0 += U * (long long)blockDim.x) {
        const long long i0 = f0 + (t - first);
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            v[u] = i < s.n4 ? __ldcg(span4 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        if (U > 4) __syncwarp();
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = i0 + u * (long long)blockDim.x;
            if (i < s.n4) tile4[i] = v[u];
        }
    }
    if (t < s.head) tile[s.off + t] = h;
    if (s.tail + t < s.n) tile[s.off + s.tail + t] = e;
}

// G lanes sum the tile's row `row` into C: B from shared memory (Bs, K floats), 32-bit indices,
// two accumulators. With an even row stride, the tile's row r starts at column r % K and wraps
// (see the top of this file). Any order is fixed per row: the same bits on every run.
template <int G>
__device__ __forceinline__ void sum_row(const float* tile, const float* Bs, const TileSpan& s, int lda, int K,
                                        int row, float* __restrict__ C) {
    const int lane = threadIdx.x % G;
    float s0 = 0.0f, s1 = 0.0f;
    if (row < s.rows) {
        const float* a = tile + s.off + row * lda;
        const int count = (K - lane + G - 1) / G;  // this lane's columns: lane, lane + G, ...
        int k = lane + (lda % 2 == 0 ? row % K : 0);
        if (k >= K) k -= K;
#pragma unroll 4
        for (int m = 0; m < count; ++m) {
            const float p = a[k] * Bs[k];
            if (m % 2) s1 += p; else s0 += p;
            k += G;
            if (k >= K) k -= K;
        }
    }
    float sum = s0 + s1;
    for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (row < s.rows && lane == 0) C[s.r0 + row] = sum;
}

// Each group of G lanes sums R rows of the tile: rows g, g + groups, ... (groups = blockDim.x /
// G), so a tile holds R times as many rows as the block has groups.
//
// Why R > 1: at K = 8, one row per lane (R = 1) with 256 threads gives a tile of 256 rows, 2,048
// floats, and 8 blocks per SM (their threads): 64 KB of A loaded per SM at a time, and
// 10,000,000 x 8 ran at 0.75 of the read ceiling. Two rows per lane fill the 4,096-float tile at
// the same 256 threads, 128 KB per SM: it took 17.5% less time there (93.5 against 113.3 us,
// tools/explore/round24/round24.txt, a version of this kernel with the tile in dynamic shared
// memory). Four rows per lane at 128 threads, the same 512 rows with each thread's 8 loads (at K =
// 8) in flight at once, took 3.7 to 23.0% less time again at K = 1 to 6 and 8, and 0.8% at 7,
// about the 0.79 to 0.85% drift between two timings of a record: not counted as a gain (tools/explore/round38/round38.txt; 3.7% at 10,000,000 x 8, 0.944 of
// the read ceiling against 0.909; 20.8 and 23.0% at K = 1 and 2). Why it pays most at K = 1 and 2 was not measured. Elsewhere two rows per lane
// were slower than the rule's one (K = 16, 24, 32, 50, 63) or tied (45), with the tile larger than
// gemvlab's 4,096 floats (round 24). So the dispatcher takes R = 4 only where four times the rows
// still fit this tile: rows of at most 8 floats. (R = 2, the rule before, stays compiled for
// the explorations.)
//
// Why U > 4, with the tile sized to its rows: where the tile is more than 4 float4s per thread
// (with the tile rows of round 34's time, K = 17 to 64 at a row stride of K; at K = 17, 128 rows
// are 544 float4s for 128 threads), 4 loads per trip leave a second trip, whose loads the SASS
// issues only after the first trip's data is stored, which waits for its loads: expected to cost
// about a memory latency, not timed apart. At every K from 17 to 64, one trip of U loads with the tile in shared memory sized to its rows (dynamic shared
// memory, set by the launcher) took 2.3 to 11.6% less time than two trips in the static
// 4,096-float tile (tools/explore/round34/round34.txt; 0.798 to 0.922 of the read ceiling became
// 0.900 to 0.965). What the sizing adds depends on the shared memory the resident blocks ask for.
// A static tile is 16,656 bytes, 17,680 with the 1 KB the GPU reserves per block; the CUDA guide
// lists carveouts of up to 228 KB of the SM's 256 KB L1/shared store for compute capability 9.0,
// the one below it 196 KB (KB here: 1,024 bytes). Two trips of 4 at 128 threads keep 13 blocks
// per SM (224 KB) and one trip of 5 keeps 12 (207 KB, registers-bound): only the largest carveout
// holds them, leaving the smallest L1. One trip of 6 to 8 keeps 10 or 9 (173 KB or less). Timed
// with the static tile, one trip took 0.5 to 1.8% more time than two at K = 17 to 20 (the low end
// within the drift of a record, about 0.8%) and 1.2 to
// 6.6% less at K = 33 to 40 (both U = 5, where the sized tile is 52 to 63% of the static one and
// took 3.0 to 10.1% less time than it); at U = 6 to 8 one trip in the static tile took 0.9% less to
// 2.1% more time than in the sized tile (the same size as the static one at K = 32 and 64). The
// sized tile with the largest carveout requested (cudaFuncAttributePreferredSharedMemoryCarveout =
// 100) took 0.2% less to 1.2% more time than the static tile at U = 5, where the static tile needs
// that carveout anyway, 2.5 to 10.4% more at U = 6 to 8, where it does not, and at K <= 16 (8
// blocks of 256 threads, 138 KB) 2.8 to 6.5% more. Our reading: the loads of A skip caching in the
// L1 (__ldcg) but still pass through it on their way to registers, and a smaller L1 holds fewer of
// them in flight. Not measured: the carveout the driver picked was not read back, and one case
// goes the other way (at K = 9 and 10, below, the sized tile, which leaves more L1, took more
// time). At K = 9 to 16 (and K <= 4) the tile is one trip of 4 already; at K = 8 to 16 (round 34,
// 256 rows of 256 threads then at K = 9 to 16) the sized tile tied at 7 of 9 K and took 2.1 and 1.3%
// more time at K = 9 and 10, so those keep the static tile (U = 4 compiles to the same code as
// before U existed). At K = 5 to 8 the rule's 4 rows per thread take K loads, in the sized tile.
//
// Why one lane per row up to K = 48, with up to U = 12 loads: at K = 33 to 48 a block of 64
// threads with one lane per row (64 rows, ceil(K / 4) loads per thread) took 2.2 to 5.4% less time
// than 128 threads with two lanes per row (the same 64 rows, 5 or 6 loads each) at 8 shapes from K
// = 33 to 47, and tied at 48 (tools/explore/round38/round38.txt: 0.946 to 0.959 of the read ceiling
// against 0.901 to 0.928). It costs registers (64 at U = 9 and 10, 79 at U = 12: 16 to 12 blocks of
// 64 threads per SM, against 12 of 128 at U = 5) and reads the tile in fewer passes: counted from
// the indexing (tools/explore/round38/bank_passes.txt), one lane per row takes 1.00 pass per read
// at odd K and 1.65 to 1.91 at even K (rows wrapping at different columns), two lanes per row 1.94
// to 2.40 at K = 33 to 47 and 1.67 at 48 (where one lane takes 1.65, and the two tied). Which of
// these matters was not measured; the gain is not consistently larger at odd K (5.1 and 5.4% at two
// shapes with K = 33, 5.1% at 39, 2.2% at 45; 4.0% at 36, 3.2% at 42). Above K = 48 one lane would take 13 to 16 loads:
// not tried.
template <int G, int R, int U>
__global__ void gemv_row_tiles(const float* __restrict__ A, long long lda, const float* __restrict__ B,
                               float* __restrict__ C, long long M, long long K) {
    __shared__ __align__(16) float static_tile[U == 4 ? TILE_FLOATS + 4 : 4];
    extern __shared__ __align__(16) float sized_tile[];  // U > 4: the launcher sizes it to the tile
    float* tile = U == 4 ? static_tile : sized_tile;
    __shared__ float Bs[MAX_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) Bs[k] = B[k];
    const int groups = blockDim.x / G;
    const TileSpan s = tile_span(A, lda, M, K, blockIdx.x, groups * R);
    load_tile<U>(tile, s);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) sum_row<G>(tile, Bs, s, (int)lda, (int)K, threadIdx.x / G + r * groups, C);
}

// variant: G + 64 * (R - 1) + 256 * (U - 4): G lanes per row (1, 2, 4, ... 32), R rows per group
// of lanes (1; or 2 or 4 with G = 1), U float4 loads per thread per trip (4; or 5 to 12 with G = 1,
// 5 to 8 with G = 2 or R = 4, the tile then in shared memory sized to it). block: a multiple of 32, with (block / G
// * R - 1) * lda + K <= TILE_FLOATS and K <= MAX_K, which the dispatcher checks
// (gemvlab/dispatch.py, tile_fits); the launcher refuses a longer K or a larger tile.
extern "C" int launch_row_tiles(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                cudaStream_t stream) {
    (void)partials;
    const long long M = p->M, K = p->K, lda = p->lda;
    const int block = p->block, G = p->variant % 64, R = p->variant / 64 % 4 + 1, U = p->variant / 256 + 4;
    if (G < 1 || block < 32 || block % 32 || block < G) return (int)cudaErrorInvalidValue;
    const long long rows_per_tile = (long long)block / G * R;
    const long long floats = (rows_per_tile - 1) * lda + K;
    if (K > MAX_K || floats > TILE_FLOATS) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((M + rows_per_tile - 1) / rows_per_tile);
    const size_t sized = U > 4 ? (size_t)((floats + 4 + 3) / 4) * 16 : 0;  // the span's offset (0 to 3) + floats
    switch (p->variant) {
#define GEMV_TILE(g, r, u)                                                                            \
    case g + 64 * (r - 1) + 256 * (u - 4):                                                            \
        gemv_row_tiles<g, r, u><<<grid, block, sized, stream>>>(A, lda, B, C, M, K); break;
        GEMV_TILE(1, 1, 4) GEMV_TILE(2, 1, 4) GEMV_TILE(4, 1, 4) GEMV_TILE(8, 1, 4) GEMV_TILE(16, 1, 4)
        GEMV_TILE(32, 1, 4) GEMV_TILE(1, 2, 4)
        GEMV_TILE(1, 1, 5) GEMV_TILE(1, 1, 6) GEMV_TILE(1, 1, 7) GEMV_TILE(1, 1, 8) GEMV_TILE(1, 1, 9)
        GEMV_TILE(1, 1, 10) GEMV_TILE(1, 1, 11) GEMV_TILE(1, 1, 12)
        GEMV_TILE(2, 1, 5) GEMV_TILE(2, 1, 6) GEMV_TILE(2, 1, 7) GEMV_TILE(2, 1, 8)
        GEMV_TILE(1, 4, 4) GEMV_TILE(1, 4, 5) GEMV_TILE(1, 4, 6) GEMV_TILE(1, 4, 7) GEMV_TILE(1, 4, 8)
#undef GEMV_TILE
        default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
