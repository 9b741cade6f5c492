"""gemvlab.occupancy against the CUDA runtime's own answer on this GPU
(cudaOccupancyMaxActiveBlocksPerMultiprocessor, called through the runtime each kernel library
links, with the kernel itself). Skipped without CUDA."""

import ctypes

import pytest

import gemvlab as lab
from gemvlab.occupancy import limits_of_device, occupancy

pytestmark = pytest.mark.gpu


def test_every_kernel_and_block_matches_the_runtime(gpu):
    limits = limits_of_device()
    mismatches, checked = [], 0
    for kernel in lab.kernels.ALL_KERNELS:
        built = lab.build_stage(kernel)
        query = built.library.cudaOccupancyMaxActiveBlocksPerMultiprocessor
        query.restype = ctypes.c_int
        query.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        for variant in (kernel.variants if kernel.variant_name else (None,)):
            res = built.resources[kernel.kernel_name(variant)]
            stub = ctypes.cast(getattr(built.library, res.symbol), ctypes.c_void_p)  # the host stub
            for block in range(32, 1025, 32):
                dynamic = kernel.shared_per_thread * block
                n = ctypes.c_int(-1)
                code = query(ctypes.byref(n), stub, block, dynamic)
                assert code == 0, (kernel.kernel_name(variant), block, built.error_string(code))
                ours = occupancy(res.registers, block, limits, res.shared_bytes, dynamic).blocks_per_sm
                checked += 1
                if ours != n.value:
                    mismatches.append(f"{kernel.kernel_name(variant)} block {block}: ours {ours}, CUDA {n.value}")
    assert checked > 1000 and not mismatches, "\n".join(mismatches[:20])
