// Exercise 3 (notebook 03): add a warp's 32 sums with shuffles instead of a shared-memory tree.
//
// One block per row, float4 loads of A and B (K % 4 == 0 and aligned rows, as in stage 3). Each
// thread ends with a partial sum. warp_sum must leave the warp's total in lane 0; the block then
// adds its warps' totals through shared memory, one barrier in all. blockDim.x is a multiple of 32.
// The reference, warp_shuffle_l1 with LOADS = 1, is stage 4's first step (4a): the same loop and shuffle.
//
// try_kernel: reference warp_shuffle_l1, block 256, variant 1, shape 2048 x 262144, mark 1.1
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum(float v) {
    // TODO: five shuffle steps, offset 16, then 8, 4, 2 and 1. At each, every lane adds the v of the lane
    //       `offset` places up (__shfl_down_sync, all 32 lanes taking part).
    return v;  // lane 0 must end with the sum of the 32 lanes' v
}

__global__ void gemv_exercise(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              long long K) {
    const float4* a4 = reinterpret_cast<const float4*>(A + (long long)blockIdx.x * K);
    const float4* b4 = reinterpret_cast<const float4*>(B);
    float sum = 0.0f;
    for (long long i = threadIdx.x; i < K / 4; i += blockDim.x) {
        const float4 a = a4[i], b = b4[i];
        sum += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
    __shared__ float warp_total[32];  // one per warp: at most 1024 / 32 warps
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    sum = warp_sum(sum);
    if (lane == 0) warp_total[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = warp_sum(lane < blockDim.x / 32 ? warp_total[lane] : 0.0f);
        if (lane == 0) C[blockIdx.x] = sum;
    }
}

extern "C" int launch_exercise(const float* A, const float* B, float* C, long long M, long long K, int block,
                               int variant, cudaStream_t stream) {
    (void)variant;
    gemv_exercise<<<(unsigned)M, block, 0, stream>>>(A, B, C, K);
    return (int)cudaGetLastError();
}
