"""gemvlab.occupancy against CUDA's own answer on this GPU: the driver's occupancy calculator
(cuOccupancyMaxActiveBlocksPerMultiprocessor, the driver-API twin of
cudaOccupancyMaxActiveBlocksPerMultiprocessor) for every kernel gemvlab launches, loaded from the
machine code (cubin) in its built library. Skipped without CUDA."""

import ctypes
import subprocess
from pathlib import Path

import pytest

import gemvlab as lab
from gemvlab.gpu.occupancy import limits_of_device, occupancy
from gemvlab.native import toolchain

pytestmark = pytest.mark.gpu


def cubin_of(built, folder: Path) -> bytes:
    """The sm_XY machine code inside a built library (cuobjdump -xelf)."""
    tool = toolchain.find_tool("cuobjdump")
    if not tool:
        pytest.skip("no cuobjdump")
    subprocess.run([tool, "-xelf", "all", str(built.path)], cwd=folder, check=True, capture_output=True)
    cubins = sorted(folder.glob("*.cubin"))
    assert cubins, f"no cubin in {built.path}"
    return cubins[0].read_bytes()


def test_every_kernel_and_block_matches_the_driver(gpu, tmp_path):
    import torch

    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context is current on this thread
    cuda = ctypes.CDLL("libcuda.so.1")
    limits = limits_of_device()
    mismatches, checked = [], 0
    for kernel in lab.kernels.ALL_KERNELS:
        built = lab.build_stage(kernel)
        folder = tmp_path / kernel.name
        folder.mkdir()
        image = cubin_of(built, folder)
        module = ctypes.c_void_p()
        assert cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)) == 0
        for variant in (kernel.variants if kernel.template else (None,)):
            res = built.resources[kernel.kernel_name(variant)]
            fn = ctypes.c_void_p()
            assert cuda.cuModuleGetFunction(ctypes.byref(fn), module, res.symbol.encode()) == 0, res.symbol
            for block in range(32, 1025, 32):
                dynamic = kernel.shared_per_thread * block
                n = ctypes.c_int(-1)
                code = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), fn, block,
                                                                       ctypes.c_size_t(dynamic))
                assert code == 0, (kernel.kernel_name(variant), block, code)
                ours = occupancy(res.registers, block, limits, res.shared_bytes, dynamic).blocks_per_sm
                checked += 1
                if ours != n.value:
                    mismatches.append(f"{kernel.kernel_name(variant)} block {block}: ours {ours}, CUDA {n.value}")
        cuda.cuModuleUnload(module)
    assert checked > 1000 and not mismatches, "\n".join(mismatches[:20])
