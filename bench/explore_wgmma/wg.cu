// Exploration build (not part of gemvlab): bf16 W (N x K) times NV <= 16 vectors on sm_90a with
// wgmma. Every thread of the block copies W's and B's pieces of a stage into shared memory with
// cp.async (STAGES stages of KT elements of K), and each warpgroup multiplies its 64 rows by B from
// shared memory with wgmma.m64nNVk16 (both operands from shared memory, no swizzle). B's stage is
// shared by the block's WG warpgroups, so B costs 1 / (64 WG) of W's bytes per byte of W from the
// caches, and nothing in flight sits in registers.
//
// Shared layout of one operand's stage (rows x KT elements): core matrices of 8 rows x 16 bytes,
// 128 bytes each; core matrix (row group rg, k chunk kc) at rg * 16 KT + kc * 128, row rr at
// rr * 16 inside it. So chunk idx = (rg * KT / 8 + kc) * 8 + rr sits at byte 16 idx, and a warp's
// copies fill 512 contiguous bytes. Descriptors: LBO (between core matrices along K) 128, SBO
// (along M or N) 16 KT; one wgmma.k16 step is 2 core matrices along K, 256 bytes.
// MODE bit 0: B copied through L1 (cp.async.ca) instead of past it (.cg); bit 1: block b starts
// along K at trip b modulo the trips and wraps, so that blocks running together copy different
// pieces of B.
// Per stage: wait for its copies (cp.async.wait_group), fence them for the async proxy, wait for
// the last stage's wgmma (its slot is refilled next), barrier, copy stage + STAGES - 1, multiply.
// Assumes: K % 256 == 0, W and X 16-byte aligned, lda % 8 == 0, X (n, K) contiguous.
#include <cuda_bf16.h>
#include <stdint.h>


__device__ __forceinline__ uint64_t desc(uint32_t addr, int kt) {
    const uint64_t lbo = 128, sbo = 16 * kt;
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32);
}

__device__ __forceinline__ void cp16(uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
}
// B's pieces through L1 (.ca): the blocks on one SM read the same B.
__device__ __forceinline__ void cp16_ca(uint32_t dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
}

template <int NV>
__device__ __forceinline__ void wgmma(float (&d)[NV / 2], uint64_t a, uint64_t b);

template <>
__device__ __forceinline__ void wgmma<16>(float (&d)[8], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(a), "l"(b));
}

template <>
__device__ __forceinline__ void wgmma<8>(float (&d)[4], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0,%1,%2,%3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(a), "l"(b));
}

template <int WG, int STAGES, int NV, int KT, int MODE>
__global__ void __launch_bounds__(128 * WG) wg_gemv(const __nv_bfloat16* __restrict__ W, const __nv_bfloat16* __restrict__ X,
                                                    __nv_bfloat16* __restrict__ C, long long N, long long K, long long lda, int n) {
    constexpr int ROWS = 64 * WG, THREADS = 128 * WG;
    constexpr int W_BYTES = ROWS * KT * 2, X_BYTES = NV * KT * 2, STAGE = W_BYTES + X_BYTES;
    constexpr int W_CHUNKS = W_BYTES / 16, X_CHUNKS = X_BYTES / 16;
    extern __shared__ __align__(1024) unsigned char smem[];
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const int tid = threadIdx.x, wg = tid >> 7;
    const long long row0 = (long long)blockIdx.x * ROWS;
    const long long trips = K / KT;

    // This thread's sources: chunk idx -> (rg, kc, rr) as in the header; rows past N read row N - 1.
    const __nv_bfloat16* wsrc[W_CHUNKS / THREADS];
    uint32_t wdst[W_CHUNKS / THREADS];
#pragma unroll
    for (int i = 0; i < W_CHUNKS / THREADS; ++i) {
        const int idx = tid + i * THREADS, rr = idx & 7, kc = (idx >> 3) % (KT / 8), rg = (idx >> 3) / (KT / 8);
        const long long row = min(row0 + rg * 8 + rr, N - 1);
        wsrc[i] = W + row * lda + kc * 8;
        wdst[i] = 16 * idx;
    }
    constexpr int XPER = (X_CHUNKS + THREADS - 1) / THREADS;
    const __nv_bfloat16* xsrc[XPER];
#pragma unroll
    for (int i = 0; i < XPER; ++i) {
        const int idx = min(tid + i * THREADS, X_CHUNKS - 1), rr = idx & 7, kc = (idx >> 3) % (KT / 8), rg = (idx >> 3) / (KT / 8);
        xsrc[i] = X + (long long)min(rg * 8 + rr, n - 1) * K + kc * 8;
    }

    const long long first = (MODE & 2) ? (long long)blockIdx.x % trips : 0;  // where this block starts along K
    auto load = [&](long long trip) {
        const uint32_t s = base + (uint32_t)(trip % STAGES) * STAGE;
        long long kt = trip + first;
        if (kt >= trips) kt -= trips;
        const long long k = kt * KT;
#pragma unroll
        for (int i = 0; i < W_CHUNKS / THREADS; ++i) cp16(s + wdst[i], wsrc[i] + k);
#pragma unroll
        for (int i = 0; i < XPER; ++i)
            if (tid + i * THREADS < X_CHUNKS) {
                if (MODE & 1) cp16_ca(s + W_BYTES + 16 * (tid + i * THREADS), xsrc[i] + k);
                else cp16(s + W_BYTES + 16 * (tid + i * THREADS), xsrc[i] + k);
            }
    };

    float d[NV / 2];
#pragma unroll
    for (int i = 0; i < NV / 2; ++i) d[i] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < trips) load(s);
        asm volatile("cp.async.commit_group;");
    }
    for (long long trip = 0; trip < trips; ++trip) {
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2));
        asm volatile("fence.proxy.async.shared::cta;");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");  // the last trip's reads of its slot are done
        __syncthreads();
        if (trip + STAGES - 1 < trips) load(trip + STAGES - 1);  // into the slot trip - 1 used
        asm volatile("cp.async.commit_group;");
        const uint32_t s = base + (uint32_t)(trip % STAGES) * STAGE;
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int ks = 0; ks < KT / 16; ++ks)
            wgmma<NV>(d, desc(s + wg * 128 * KT + ks * 256, KT), desc(s + W_BYTES + ks * 256, KT));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    // d: warp w of the warpgroup holds rows 16 w + g (d[4 j + 0, 1]) and 16 w + g + 8 (d[4 j + 2, 3]),
    // vectors 8 j + 2 t + 0, 1.
    const int lane = tid & 31, w = (tid >> 5) & 3, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const long long r = row0 + wg * 64 + 16 * w + 8 * h + g;
        if (r >= N) continue;
#pragma unroll
        for (int j = 0; j < NV / 8; ++j)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int v = 8 * j + 2 * t + i;
                if (v < n) C[r * n + v] = __float2bfloat16_rn(d[4 * j + 2 * h + i]);
            }
    }
}

template <int WG, int STAGES, int NV, int KT, int MODE>
static int launch(const void* W, const void* X, void* C, long long N, long long K, long long lda, int n, cudaStream_t st) {
    constexpr int STAGE = (64 * WG + NV) * KT * 2;  // bytes
    const int shared = STAGES * STAGE;
    if (shared > 227 * 1024) return (int)cudaErrorInvalidValue;
    auto f = wg_gemv<WG, STAGES, NV, KT, MODE>;
    static bool set = false;
    if (!set) {
        cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
        if (e != cudaSuccess) return (int)e;
        set = true;
    }
    const long long blocks = (N + 64 * WG - 1) / (64 * WG);
    f<<<(unsigned)blocks, 128 * WG, shared, st>>>((const __nv_bfloat16*)W, (const __nv_bfloat16*)X, (__nv_bfloat16*)C, N, K, lda, n);
    return (int)cudaGetLastError();
}

// variant = MODE * 10000 + WG * 1000 + STAGES * 100 + NV * 2 + KT / 64  (NV 8 or 16, KT 64, 128 or 256;
// MODE bit 0: B through L1, bit 1: each block starts along K at its own trip)
#define V(wg, s, nv, kt, m) \
    case m * 10000 + wg * 1000 + s * 100 + nv * 2 + kt / 64: return launch<wg, s, nv, kt, m>(W, X, C, N, K, lda, n, (cudaStream_t)stream);
#define VM(wg, s, nv, kt) V(wg, s, nv, kt, 0) V(wg, s, nv, kt, 1) V(wg, s, nv, kt, 2) V(wg, s, nv, kt, 3)
extern "C" int wg_launch(int variant, const void* W, const void* X, void* C, long long N, long long K, long long lda,
                         int n, void* stream) {
    if (K % 256 || n < 1 || n > 16) return (int)cudaErrorInvalidValue;
    switch (variant) {
        VM(1, 4, 16, 64) VM(1, 4, 16, 128) VM(1, 4, 16, 256) VM(1, 6, 16, 128) VM(2, 4, 16, 128) VM(2, 3, 16, 256)
        VM(1, 4, 8, 128) VM(1, 4, 8, 256) VM(2, 4, 8, 128)
        default: return (int)cudaErrorInvalidValue;
    }
}
