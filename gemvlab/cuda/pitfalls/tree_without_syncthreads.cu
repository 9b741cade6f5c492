// Pitfall (notebook 02): a shared-memory tree without __syncthreads() between its levels.
//
// Stage 2 with the barriers inside the tree removed. A thread may now read partial[t + s]
// before the thread that owns it has added its own pair at the previous level, or before
// it has even stored its partial sum: the result depends on how the warps happen to be
// scheduled, so it is wrong by a different amount from run to run (a race).
// compute-sanitizer --tool racecheck names the hazard.
#include <cuda_runtime.h>

__global__ void gemv_tree_no_sync(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, long long K) {
    extern __shared__ float partial[];
    const float* a = A + (long long)blockIdx.x * K;
    float sum = 0.0f;
    for (long long k = threadIdx.x; k < K; k += blockDim.x) sum += a[k] * B[k];
    partial[threadIdx.x] = sum;
    // BUG: no __syncthreads() here ...
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        // ... nor here
    }
    if (threadIdx.x == 0) C[blockIdx.x] = partial[0];
}

extern "C" int launch_tree_no_sync(const float* A, const float* B, float* C, long long M, long long K,
                                   int block, int variant, cudaStream_t stream) {
    (void)variant;
    gemv_tree_no_sync<<<(unsigned)M, block, block * sizeof(float), stream>>>(A, B, C, K);
    return (int)cudaGetLastError();
}
