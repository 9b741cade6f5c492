// Not a stage: how long one load takes when nothing else is in flight (the latency in
// Little's law, bytes in flight = bandwidth x latency, which the notebooks' model uses).
//
// One thread follows a chain of indices through a buffer, i = next[i], so that each load's
// address depends on the previous load: exactly one load is ever in flight, and the time per
// step is the latency. The chain visits the buffer's 128-byte lines in a random order, so
// neither the caches' neighbours nor a prefetcher help; __ldcg does not cache in the L1 (the
// load still passes through it), so a line the chain comes back to cannot hit there. With a buffer
// four times the L2, at most about a quarter of the lines can still be in the L2 when the chain
// comes back to them (an estimate from the sizes, not measured); over 8 GiB, at most 0.7% (60
// MiB of 8 GiB): that is the latency the model uses for coalesced loads. A random chase over 8 GiB may
// also miss in the address translation caches (TLB), which loads streaming through A mostly do
// not: not separated here, so this latency may be an overestimate for coalesced loads. With a
// buffer a fraction of the L2, the loads go to the L2. pointer_chase_warp (below) stands in for
// the naive stage's loads: 32 lanes, each at its own place in one chain, so that each load
// instruction reads 32 unrelated lines. The naive warp's lanes are instead exactly 4 MiB apart,
// and each lane's 32-byte sector serves 8 floats: the first load misses, and the other seven
// floats arrive with it (some loads issued while the miss is outstanding, the rest hits later;
// not measured); the model assumes the latency per instruction is the
// same (not measured).
// The kernel also counts SM clock cycles (clock64), which gives the clock it ran at.
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
// step is one load instruction whose 32 lanes read 32 unrelated lines, like a naive warp's loads
// of 32 rows (whose lanes are 4 MiB apart, not random). Time per step: the latency of such an
// instruction.
__global__ void pointer_chase_warp(const long long* __restrict__ next, long long start, long long steps,
                                   long long* __restrict__ out) {
    long long i = (start + (long long)threadIdx.x * 7919) % 4096;  // 32 different starting lines
    i = __ldcg(next + i * 16);
    for (long long s = 0; s < steps; ++s) i = __ldcg(next + i);
    out[threadIdx.x] = i;
}

// Launched as one thread (variant 0) or one warp (variant 1). `A` is the chain (long long indices), M its start, K the steps.
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
