// Stage 3 - vectorized: float4 loads of A and B.
//
// Change from stage 2: each thread loads four floats at once (a float4, 16 bytes) from A and from
// B. A warp reads 512 contiguous bytes per instruction and issues a quarter of the load
// instructions: in the SASS the loads become LDG.E.128.CONSTANT instead of LDG.E.CONSTANT (the
// read-only path, which `const __restrict__` pointers allow).
//
// A float4 load must read from an address that is a multiple of 16 bytes. That holds when A and
// B start 16-byte aligned and K % 4 == 0 (every row then starts aligned too). gemvlab checks both
// before launching and raises an error naming the fix; a raw kernel given a misaligned pointer
// stops with "misaligned address". The reduction is stage 2's tree.
#include <cuda_runtime.h>

__global__ void gemv_vectorized(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, long long K) {
    extern __shared__ float partial[];
    const float4* a4 = reinterpret_cast<const float4*>(A + (long long)blockIdx.x * K);
    const float4* b4 = reinterpret_cast<const float4*>(B);
    const long long K4 = K / 4;  // K % 4 == 0, checked before launch
    float sum = 0.0f;
    for (long long i = threadIdx.x; i < K4; i += blockDim.x) {
        const float4 a = a4[i];
        const float4 b = b4[i];
        sum += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }

    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) C[blockIdx.x] = partial[0];
}

extern "C" int launch_vectorized(const float* A, const float* B, float* C, long long M,
                                 long long K, int block, int variant, cudaStream_t stream) {
    (void)variant;
    gemv_vectorized<<<(unsigned)M, block, block * sizeof(float), stream>>>(A, B, C, K);
    return (int)cudaGetLastError();
}
