// Not a stage: how long one load takes when nothing else is in flight, the latency in Little's
// law (bytes in flight = bandwidth x latency) that the model uses.
//
// One thread follows a chain of indices through a buffer, i = next[i], so each load's address
// depends on the previous load: exactly one load is in flight, and the time per step is the
// latency. The chain visits the buffer's 128-byte lines in a random order, so neither neighbours
// in a cache line nor a prefetcher help, and __ldcg keeps the lines out of the L1. A buffer many
// times the L2 measures DRAM; one a fraction of it, the L2. pointer_chase_warp stands in for the
// naive stage's loads: 32 lanes at 32 places in the chain, so each load instruction reads 32
// unrelated lines. pointer_chase also counts SM clock cycles (clock64): the clock it ran at.
#include <cuda_runtime.h>

__global__ void pointer_chase(const long long* __restrict__ next, long long start, long long steps,
                              long long* __restrict__ out) {
    long long i = start;
    const long long t0 = clock64();
    for (long long s = 0; s < steps; ++s) i = __ldcg(next + i);
    const long long t1 = clock64();
    out[0] = i;  // the chain's end: keeps every load
    out[1] = t1 - t0;  // SM cycles for `steps` dependent loads
}

// The same with a whole warp: each of the 32 lanes follows its own place in the chain, so every
// step is one load instruction whose 32 lanes read 32 unrelated lines. Time per step: the latency
// of such an instruction.
__global__ void pointer_chase_warp(const long long* __restrict__ next, long long start, long long steps,
                                   long long* __restrict__ out) {
    long long i = (start + (long long)threadIdx.x * 7919) % 4096;  // 32 different starting lines
    i = __ldcg(next + i * 16);
    for (long long s = 0; s < steps; ++s) i = __ldcg(next + i);
    out[threadIdx.x] = i;
}

// Launched as one thread (variant 0) or one warp (variant 1). `A` is the chain (long long indices), K the steps;
// M is the start element (variant 0), or a seed for the lanes' 32 starting lines, all below line 4096
// (variant 1: the chain must have at least 4096 lines, 512 KiB).
// C receives {end, cycles} for variant 0, and the 32 lanes' chain ends for variant 1 (timed by events, no clock count).
extern "C" int launch_pointer_chase(const float* A, const float* B, float* C, long long M, long long K,
                                    int block, int variant, cudaStream_t stream) {
    (void)B, (void)block;
    if (variant == 1)
        pointer_chase_warp<<<1, 32, 0, stream>>>(reinterpret_cast<const long long*>(A), M, K,
                                                 reinterpret_cast<long long*>(C));
    else
        pointer_chase<<<1, 1, 0, stream>>>(reinterpret_cast<const long long*>(A), M, K, reinterpret_cast<long long*>(C));
    return (int)cudaGetLastError();
}
