// Not a stage: the yardstick. A read-only pass over A with float4 loads and
// several loads in flight, doing no useful work. No GEMV can read A faster than
// this kernel does on the same GPU in the same run, so its time is the "read
// ceiling" every stage is compared with (vs_ceiling = ceiling ms / stage ms).
#include <cuda_runtime.h>

__global__ void read_ceiling(const float4* __restrict__ A, long long n4, float* __restrict__ sink) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 a = __ldcs(A + i), b = __ldcs(A + i + stride);
        const float4 c = __ldcs(A + i + 2 * stride), d = __ldcs(A + i + 3 * stride);
        sum += (a.x + b.x + c.x + d.x) + (a.y + b.y + c.y + d.y) + (a.z + b.z + c.z + d.z) +
               (a.w + b.w + c.w + d.w);
    }
    for (; i < n4; i += stride) {
        const float4 a = __ldcs(A + i);
        sum += a.x + a.y + a.z + a.w;
    }
    // Never true for data from torch.rand; the compiler cannot know, so it keeps every load.
    if (sum == -1.0f) *sink = sum;
}

// Reads all M * K floats of A (M * K % 4 == 0). `variant` is the grid size in
// blocks; the grid-stride loop covers the rest. C receives nothing.
extern "C" int launch_read_ceiling(const float* A, const float* B, float* C, long long M,
                                   long long K, int block, int variant, cudaStream_t stream) {
    (void)B;
    read_ceiling<<<(unsigned)variant, block, 0, stream>>>(
        reinterpret_cast<const float4*>(A), M * K / 4, C);
    return (int)cudaGetLastError();
}
