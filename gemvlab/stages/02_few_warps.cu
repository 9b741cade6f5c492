// Not a stage: stage 2's coalesced loads with only as many warps as stage 1 has. Notebook 02 times
// it between the two stages to separate the two changes stage 2 makes at once: coalesced loads,
// and M blocks (many more warps resident). A grid of `variant` blocks walks the rows, block b
// taking rows b, b + gridDim.x, ...; at 32 threads and 64 blocks it has stage 1's 64 warps, spread
// one block per SM when the scheduler spreads them (it decides). The reduction is stage 2's tree.
#include <cuda_runtime.h>

__global__ void gemv_few_warps(const float* __restrict__ A, const float* __restrict__ B,
                               float* __restrict__ C, long long M, long long K) {
    extern __shared__ float partial[];  // blockDim.x floats, sized by the launch
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        const float* a = A + row * K;  // 64-bit row offset
        float sum = 0.0f;
        for (long long k = threadIdx.x; k < K; k += blockDim.x) sum += a[k] * B[k];
        partial[threadIdx.x] = sum;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0) C[row] = partial[0];
        __syncthreads();  // the next row's sums overwrite partial[]
    }
}

// `variant`: the blocks in the grid (each walks about M / variant rows).
extern "C" int launch_few_warps(const float* A, const float* B, float* C, long long M, long long K, int block,
                                int variant, cudaStream_t stream) {
    gemv_few_warps<<<(unsigned)variant, block, block * sizeof(float), stream>>>(A, B, C, M, K);
    return (int)cudaGetLastError();
}
