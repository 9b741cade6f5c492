// Pitfall: a shared-memory tree without __syncthreads() between its levels.
//
// Stage 2 with every barrier of the tree removed: the one before it and the ones between its
// levels. A thread may now read partial[t + s]
// before the thread that owns it has added its own pair at the previous level, or before
// it has even stored its partial sum: it then reads whatever that shared-memory slot held
// before, which may be a value left there by an earlier block or an earlier kernel. The
// result depends on how the warps happen to be scheduled, so it is wrong by a different
// amount from run to run (a race). compute-sanitizer --tool racecheck names the hazard.
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

// Not part of the bug: a kernel that leaves a known value (0 or NaN) in every slot of its own
// dynamic shared array (same size and launch shape), so that a later racing kernel whose blocks
// land in the same shared memory picks it up (where blocks land is not controlled).
__global__ void fill_shared(int nan) {
    extern __shared__ float slots[];
    const float value = nan ? __int_as_float(0x7fc00000) : 0.0f;
    for (unsigned i = threadIdx.x; i < blockDim.x; i += blockDim.x) slots[i] = value;
    __syncthreads();
    if (slots[(threadIdx.x + 1) % blockDim.x] == 12345.0f) slots[0] = 0.0f;  // keep the stores
}

// `variant`: 0 fills with 0.0f, 1 with NaN; M blocks of `block` threads.
extern "C" int launch_fill_shared(const float* A, const float* B, float* C, long long M, long long K,
                                  int block, int variant, cudaStream_t stream) {
    (void)A, (void)B, (void)C, (void)K;
    fill_shared<<<(unsigned)M, block, block * sizeof(float), stream>>>(variant);
    return (int)cudaGetLastError();
}
