// Not a stage: the yardstick. Read-only passes over A with float4 loads and several loads in
// flight, doing no useful work. The fastest of them, timed in the same run as the kernels it is
// compared with, is the "read ceiling" (gemvlab.measure.ceiling).
//
// Two ways to walk A, because neither is fastest on every shape:
//  * read_rows: one block per row, the block striding along its row (the stages' pattern, minus
//    B); needs K % 4 == 0 and A 16-byte aligned;
//  * read_grid: A as one flat array, a fixed grid striding over all of it; it reads the first
//    floor(M * K / 4) float4s of A, which must start 16-byte aligned (up to 3 floats unread).
// No cache hints: the loads take the read-only path (LDG.E.128.CONSTANT, cached in the L1), which
// `const __restrict__` allows.
#include <cuda_runtime.h>

__device__ __forceinline__ float add4(float4 v) { return v.x + v.y + v.z + v.w; }

__global__ void read_grid(const float4* __restrict__ A, long long n4, float* __restrict__ sink) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (; i + 3 * stride < n4; i += 4 * stride)  // four independent loads, all issued before the first add
        sum += (add4(A[i]) + add4(A[i + stride])) + (add4(A[i + 2 * stride]) + add4(A[i + 3 * stride]));
    for (; i < n4; i += stride) sum += add4(A[i]);
    // Never true for data from torch.rand; the compiler cannot know, so it keeps every load.
    if (sum == -1.0f) *sink = sum;
}

__global__ void read_rows(const float* __restrict__ A, long long K, float* __restrict__ sink) {
    const float4* a4 = reinterpret_cast<const float4*>(A + (long long)blockIdx.x * K);
    const long long K4 = K / 4, stride = blockDim.x;
    float sum = 0.0f;
    long long i = threadIdx.x;
    for (; i + stride < K4; i += 2 * stride)  // two independent loads, both issued before the first add
        sum += add4(a4[i]) + add4(a4[i + stride]);
    for (; i < K4; i += stride) sum += add4(a4[i]);
    if (sum == -1.0f) *sink = sum;
}

// Reads A: `variant` == 0: read_rows, M blocks, all M * K floats (needs K % 4 == 0);
// `variant` > 0: read_grid with that many blocks, the first floor(M * K / 4) float4s
// (A 16-byte aligned; up to 3 trailing floats unread).
// C receives nothing.
extern "C" int launch_read_ceiling(const float* A, const float* B, float* C, long long M,
                                   long long K, int block, int variant, cudaStream_t stream) {
    (void)B;
    if (variant > 0)
        read_grid<<<(unsigned)variant, block, 0, stream>>>(reinterpret_cast<const float4*>(A), M * K / 4, C);
    else
        read_rows<<<(unsigned)M, block, 0, stream>>>(A, K, C);
    return (int)cudaGetLastError();
}
