"""Smaller GPUs a learner may have (T4, L4, A100), simulated on the CPU: the architecture each gets
built for, how the headline shape is scaled to fit, the occupancy limits, and every kernel built
for sm_75 and sm_80 (as the notebooks' live path would on a T4 or an A100)."""

import pytest

import gemvlab as lab
from gemvlab.gpu.occupancy import KNOWN, occupancy
from gemvlab.measure import bench
from gemvlab.native import kernel as native_kernel
from gemvlab.native import report, toolchain

GPUS = {  # name: (compute capability, total memory in GB)
    "T4": ("7.5", 15), "L4": ("8.9", 22), "A100": ("8.0", 40), "A100-80": ("8.0", 80), "H200": ("9.0", 141)}


@pytest.mark.parametrize("name", GPUS)
def test_the_headline_shape_is_scaled_to_fit(name):
    _, gb = GPUS[name]
    free = int(gb * 1e9 * 0.95)
    M, K = bench.fit_shape(2048, 1 << 20, free_bytes=free)
    assert M == 2048 and 4 * M * K <= 0.4 * free
    assert K == 1 << 20 or 4 * M * (2 * K) > 0.4 * free  # halved only as far as needed
    if name == "T4":
        assert K == 1 << 19  # a 15 GB T4: A is 4 GiB


@pytest.mark.parametrize("arch", ["7.5", "8.0", "8.9"])
def test_the_architecture_flags_follow_the_gpu(monkeypatch, arch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU decides the architecture here")
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", arch)
    flags, why = toolchain.arch_flags()
    num = arch.replace(".", "")
    assert flags == [f"-gencode=arch=compute_{num},code=sm_{num}"] and why == "TORCH_CUDA_ARCH_LIST"


def test_occupancy_limits_of_smaller_gpus():
    # A T4 (sm_75) holds 1024 threads and 16 blocks per SM: 256-thread blocks, 4 at most.
    assert occupancy(32, 256, KNOWN["T4"]).blocks_per_sm == 4
    assert occupancy(16, 32, KNOWN["T4"]).blocks_per_sm == 16
    assert occupancy(32, 256, KNOWN["L4"]).blocks_per_sm == 6  # 1536 threads per SM
    assert occupancy(32, 256, KNOWN["A100"]).blocks_per_sm == 8


@pytest.mark.parametrize("arch", ["7.5", "8.0"])
def test_every_kernel_builds_for_older_gpus(monkeypatch, tmp_path, arch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU decides the architecture here")
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", arch)
    monkeypatch.setenv("GEMVLAB_CACHE", str(tmp_path))
    native_kernel._builds.clear()
    try:
        built = lab.build_all()
    finally:
        native_kernel._builds.clear()
    sm = "sm_" + arch.replace(".", "")
    for name, b in built.items():
        assert sm in b.arch, (name, b.arch)
        assert b.resources, name
    for st in lab.kernels.ALL_KERNELS:
        for v in (st.variants if st.template else (None,)):
            assert st.kernel_name(v) in built[st.name].resources
    assert report.parse_ptxas(built["naive"].ptxas_log)
