// Exploration round 18 (issue 9, not part of gemvlab): round 15's one-row split_k with B realigned
// by shuffles (x_split_k<LOADS, 1>, 48 to 56 registers, so 4 to 5 blocks of 256 threads per SM)
// held to more blocks per SM by __launch_bounds__(256, MINB): does the shuffle pay for one row per
// block once occupancy matches gemvlab's (8 blocks at 32 registers)? Spills, as ptxas reports them
// for sm_90: none at MINB = 5, some at 6 and 8 (round18/ptxas.txt).
// variant: 10 * MINB + LOADS.
#include "round15.cu"

template <int LOADS, int MINB>
__global__ void __launch_bounds__(256, MINB) y_split_k(const float* __restrict__ A, long long lda,
                                                        const float* __restrict__ B, float* __restrict__ out,
                                                        long long M, long long K, long long chunk, int splits) {
    const long long r0 = blockIdx.x % M, s = blockIdx.x / M, k0 = s * chunk;
    const long long n = min(chunk, K - k0);
    float v[1] = {0.0f};
    if (n > 0) v[0] = dot_realigned_uniform<LOADS>(A + r0 * lda + k0, B + k0, n, threadIdx.x, blockDim.x);
    block_totals<1>(v);
    if (threadIdx.x == 0) out[splits == 1 ? r0 : r0 * splits + s] = v[0];
}

extern "C" int launch_round18(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                              cudaStream_t stream) {
    const long long M = p->M, K = p->K, lda = p->lda, chunk = p->chunk;
    const int splits = p->splits, block = p->block;
    if (block != 256) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)(M * splits);
    float* out = splits == 1 ? C : partials;
    switch (p->variant) {
#define Y(loads, minb) \
    case 10 * minb + loads: y_split_k<loads, minb><<<grid, 256, 0, stream>>>(A, lda, B, out, M, K, chunk, splits); break;
        Y(1, 6) Y(1, 8) Y(2, 5) Y(2, 6) Y(2, 8)
#undef Y
        default: return (int)cudaErrorInvalidValue;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || splits == 1) return (int)err;
    x_split_k_reduce<<<(unsigned)((M * 32 + 255) / 256), 256, 0, stream>>>(partials, C, M, splits);
    return (int)cudaGetLastError();
}
