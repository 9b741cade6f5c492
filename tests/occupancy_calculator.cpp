// CUDA's own occupancy calculator (the toolkit's header-only cuda_occupancy.h), run on the CPU.
// tests/test_occupancy.py compiles this with g++ and compares its answers with gemvlab.occupancy.
// Reads lines of: cc_major cc_minor max_threads_per_sm regs_per_sm smem_per_sm smem_optin
//                 smem_reserved smem_per_block max_threads_per_block regs static_smem dynamic_smem block
// Prints, per line: active_blocks_per_sm block_limit_regs block_limit_warps block_limit_blocks block_limit_smem
#include <cstdio>
#include <cuda_occupancy.h>

int main() {
    int major, minor, max_threads, regs_sm, max_block, regs, block;
    size_t smem_sm, optin, reserved, smem_block, static_smem, dynamic_smem;
    while (std::scanf("%d %d %d %d %zu %zu %zu %zu %d %d %zu %zu %d", &major, &minor, &max_threads, &regs_sm,
                      &smem_sm, &optin, &reserved, &smem_block, &max_block, &regs, &static_smem,
                      &dynamic_smem, &block) == 13) {
        cudaOccDeviceProp prop;
        prop.computeMajor = major;
        prop.computeMinor = minor;
        prop.maxThreadsPerBlock = max_block;
        prop.maxThreadsPerMultiprocessor = max_threads;
        prop.regsPerBlock = 65536;
        prop.regsPerMultiprocessor = regs_sm;
        prop.warpSize = 32;
        prop.sharedMemPerBlock = smem_block;
        prop.sharedMemPerMultiprocessor = smem_sm;
        prop.numSms = 1;
        prop.sharedMemPerBlockOptin = optin;
        prop.reservedSharedMemPerBlock = reserved;

        // As the runtime fills it from cudaFuncGetAttributes for a kernel with no opt-in.
        cudaOccFuncAttributes attr;
        attr.maxThreadsPerBlock = 1024;
        attr.numRegs = regs;
        attr.sharedSizeBytes = static_smem;
        attr.partitionedGCConfig = PARTITIONED_GC_OFF;
        attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        attr.maxDynamicSharedSizeBytes = smem_block - static_smem;
        attr.numBlockBarriers = 1;

        cudaOccDeviceState state;
        cudaOccResult result;
        cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, block, dynamic_smem);
        if (err != CUDA_OCC_SUCCESS) {
            std::printf("error %d\n", (int)err);
            continue;
        }
        std::printf("%d %d %d %d %d\n", result.activeBlocksPerMultiprocessor, result.blockLimitRegs,
                    result.blockLimitWarps, result.blockLimitBlocks, result.blockLimitSharedMem);
    }
    return 0;
}
