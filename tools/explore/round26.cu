// Exploration round 26 (issue 9, not part of gemvlab; written at the end of session 15, not yet
// run): split_k with one row per block, B not aligned where the row is (64 x 1,000,003), with B's
// stretch staged in shared memory as four component arrays.
//
// Today such a block reads B's body as 4 scalar loads per float4 of A (any_alignment.cuh). Read
// as aligned float4s instead ("chunks"), the float4 that body float4 k needs is floats D .. 3 of
// chunk k and 0 .. D - 1 of chunk k + 1 (D, the body's offset from a 16-byte boundary, is one
// number for the block). Round 15 took chunk k + 1 from the neighbouring lane by shuffles, round
// 19 with the widest loads D allows, round 4 as two float4s shifted into place: none beat the
// scalars. Here each trip the block stores its chunks to shared memory as four arrays, one per
// component (comp[c][j] = chunk j's float c), then each lane reads its 4 floats there: for float
// c of its float4 the array (D + c) % 4 at index L + (D + c) / 4, L the lane's place in the trip.
// Consecutive lanes read consecutive words of one array, so no bank conflicts; one global load
// per 16 bytes of B, against 4 today. Two buffers, so one barrier per trip: a thread reaching a
// trip's barrier has finished reading the buffer the next trip overwrites.
//
// As in dot_rows_shuffled, the body's first and last float4 are summed as scalars with the head
// and tail (at most 7 floats each), so that every chunk loaded lies inside the stretch: chunk k
// for k = 1 .. n4 - 1 covers the stretch's floats head + 4k - D .. head + 4k - D + 3.
// variant: 2 (1 load), 4 (2 loads, unbounded: 47 registers, 5 blocks per SM) and 5 (2 loads held
// to 8 blocks per SM by __launch_bounds__: 32 registers, no spills); 1 load is held to 8 blocks
// too (ptxas, sm_90, nvcc 13.0).
// Block: 256 threads (the arrays' size); 8.4 KB of shared memory per block at 1 load, 16.5 KB at 2.
#include "split_k.cu"

constexpr int SOA_BLOCK = 256;

template <int LOADS, int D>
__device__ __forceinline__ void body_soa(const float4* __restrict__ a4, const float4* __restrict__ chunks,
                                         long long n4, int lane, float (&acc)[LOADS],
                                         float (&comp)[2][4][LOADS * SOA_BLOCK + 1]) {
    constexpr int TRIP = LOADS * SOA_BLOCK;
    int buf = 0;
#pragma unroll 1
    for (long long i0 = 1; i0 <= n4 - 2; i0 += TRIP, buf ^= 1) {
        float4 av[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int L = lane + u * SOA_BLOCK;
            const long long k = i0 + L;
            av[u] = k <= n4 - 2 ? __ldcg(a4 + k) : make_float4(0.f, 0.f, 0.f, 0.f);
            const float4 c = k <= n4 - 1 ? chunks[k] : make_float4(0.f, 0.f, 0.f, 0.f);
            comp[buf][0][L] = c.x;
            comp[buf][1][L] = c.y;
            comp[buf][2][L] = c.z;
            comp[buf][3][L] = c.w;
        }
        if (lane == 0) {  // the chunk after the trip's last, for its last float4's high floats
            const long long k = i0 + TRIP;
            const float4 c = k <= n4 - 1 ? chunks[k] : make_float4(0.f, 0.f, 0.f, 0.f);
            comp[buf][0][TRIP] = c.x;
            comp[buf][1][TRIP] = c.y;
            comp[buf][2][TRIP] = c.z;
            comp[buf][3][TRIP] = c.w;
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int L = lane + u * SOA_BLOCK;
            const float4 b = make_float4(comp[buf][(D + 0) % 4][L + (D + 0) / 4], comp[buf][(D + 1) % 4][L + (D + 1) / 4],
                                         comp[buf][(D + 2) % 4][L + (D + 2) / 4], comp[buf][(D + 3) % 4][L + (D + 3) / 4]);
            if (i0 + L <= n4 - 2) acc[u] += dot4(av[u], b);  // not 0 * B past the body (B may hold an infinity)
        }
    }
}

template <int LOADS, int MINB>
__global__ void __launch_bounds__(SOA_BLOCK, MINB) z_soa_split_k(const float* __restrict__ A, long long lda,
                                                           const float* __restrict__ B, float* __restrict__ out,
                                                           long long M, long long K, long long chunk, int splits) {
    __shared__ float comp[2][4][LOADS * SOA_BLOCK + 1];
    const long long r0 = blockIdx.x % M, s = blockIdx.x / M, k0 = s * chunk;
    const long long n = min(chunk, K - k0);
    float v[1] = {0.0f};
    if (n > 0) {  // uniform over the block: every thread reaches the barriers inside
        const float* a = A + r0 * lda + k0;
        const float* b = B + k0;
        const int lane = threadIdx.x;
        const long long head = min((long long)(((16 - (reinterpret_cast<size_t>(a) & 15)) & 15) / 4), n);
        const long long n4 = (n - head) / 4;
        // the scalar ends: floats [0, head + 4) and [head + 4 (n4 - 1), n), at most 7 each
        const long long lo_end = head + 4 * min(n4, 1LL);
        const long long hi_start = n4 >= 2 ? head + 4 * (n4 - 1) : lo_end;
        const long long t = hi_start + lane;
        v[0] = (lane < lo_end ? __ldcg(a + lane) * b[lane] : 0.0f) + (t < n ? __ldcg(a + t) * b[t] : 0.0f);
        const float4* a4 = reinterpret_cast<const float4*>(a + head);
        const float* b_body = b + head;
        const int D = (int)((reinterpret_cast<size_t>(b_body) & 15) / 4);
        const float4* chunks = reinterpret_cast<const float4*>(b_body - D);  // 16-byte aligned
        float acc[LOADS] = {};
        switch (D) {
            case 0: body_soa<LOADS, 0>(a4, chunks, n4, lane, acc, comp); break;
            case 1: body_soa<LOADS, 1>(a4, chunks, n4, lane, acc, comp); break;
            case 2: body_soa<LOADS, 2>(a4, chunks, n4, lane, acc, comp); break;
            default: body_soa<LOADS, 3>(a4, chunks, n4, lane, acc, comp); break;
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) v[0] += acc[u];
    }
    block_totals<1>(v);
    if (threadIdx.x == 0) out[splits == 1 ? r0 : r0 * splits + s] = v[0];
}

extern "C" int launch_round26_split(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                    cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits;
    if (p->block != SOA_BLOCK) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)(M * splits);
    float* out = splits == 1 ? C : partials;
    switch (p->variant) {
        case 2: z_soa_split_k<1, 8><<<grid, SOA_BLOCK, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        case 4: z_soa_split_k<2, 1><<<grid, SOA_BLOCK, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        case 5: z_soa_split_k<2, 8><<<grid, SOA_BLOCK, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    const unsigned reduce_grid = (unsigned)((M * 32 + 255) / 256);
    if (!dependent_launch_supported()) {
        gemv_split_k_reduce<<<reduce_grid, 256, 0, stream>>>(partials, C, M, splits);
        return (int)cudaGetLastError();
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(reduce_grid);
    config.blockDim = dim3(256);
    config.stream = stream;
    cudaLaunchAttribute dependent[1];
    dependent[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = dependent;
    config.numAttrs = 1;
    return (int)cudaLaunchKernelEx(&config, gemv_split_k_reduce, (const float*)partials, C, M, splits);
}
