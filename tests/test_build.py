"""Building every stage through load_inline, and reading what the compiler says, on the CPU."""

import pytest

import gemvlab as lab
from gemvlab.native import build, report, sass, toolchain
from gemvlab.native import kernel as native_kernel

HAVE_DISASSEMBLER = toolchain.find_tool("cuobjdump") is not None
needs_sass = pytest.mark.skipif(not HAVE_DISASSEMBLER, reason="no cuobjdump: neither the CUDA toolkit's nor triton's")


@pytest.fixture(scope="module")
def built():
    return lab.build_all()


def test_every_stage_builds_with_a_resource_report(built):
    for st in lab.STAGES:
        b = built[st.name]
        assert b.path.exists()
        variants = st.variants if st.template else (None,)
        for v in variants:
            r = b.resources[st.kernel_name(v)]
            assert 8 <= r.registers <= 255
    for kernel in ("read_rows", "read_grid"):
        assert built["read_ceiling"].resources[kernel].registers > 0


def test_launchers_are_exported(built):
    for k in lab.kernels.ALL_KERNELS:
        assert k.function() is not None, k.name


def test_registers_grow_with_rows_and_spill_past_the_limit(built):
    regs = [lab.resources("multirow", r).registers for r in (1, 2, 4, 8, 16, 32)]
    assert regs == sorted(regs) and regs[-1] > 2 * regs[0]
    big = lab.resources("multirow", 64)
    assert big.registers >= 250 and big.spills
    assert not any(lab.resources("multirow", r).spills for r in (1, 2, 4, 8, 16, 32))


@needs_sass
def test_sass_load_widths(built):
    naive = built["naive"].sass["gemv_naive"]
    assert naive.global_loads and 128 not in naive.global_loads  # scalar loads only
    assert built["coalesced"].sass["gemv_coalesced"].widest_load == 32
    assert built["vectorized"].sass["gemv_vectorized"].global_loads.get(128, 0) >= 2
    for st in lab.STAGES[3:]:
        for v in st.variants:
            s = built[st.name].sass[st.kernel_name(v)]
            assert set(s.global_loads) == {128}, (st.name, v, s.global_loads)
    ws = built["warp_shuffle"].sass["gemv_warp_shuffle<4, true>"]
    assert ws.shuffles >= 10 and ws.barriers == 1
    # stages 4 and 5 load A past the L1 (__ldcg: LDG.E.128.STRONG.GPU) and B through it
    for st in lab.STAGES[3:]:
        for v in (1, 2, 4):
            s = built[st.name].sass[st.kernel_name(v)]
            assert 0 < s.l2_only_loads < s.global_loads[128], (st.name, v, s)
    assert built["vectorized"].sass["gemv_vectorized"].l2_only_loads == 0
    assert built["coalesced"].sass["gemv_coalesced"].shuffles == 0
    assert built["multirow"].sass["gemv_multirow<64>"].local_stores > 0  # the spill, in SASS


def test_a_cached_build_loads_fast(built):
    import time

    native_kernel._builds.clear()
    t = time.perf_counter()
    again = lab.build_stage("multirow")
    assert again.cached and time.perf_counter() - t < 1.0
    assert again.resources == built["multirow"].resources


def test_a_broken_kernel_reports_the_compiler_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMVLAB_CACHE", str(tmp_path))
    with pytest.raises(build.BuildError, match="undefined|error"):
        build.build("broken", '#include <cuda_runtime.h>\n__global__ void k() { undefined_thing(); }\n')


def test_demangle():
    assert report.demangle("_Z10gemv_naivePKfS0_Pfxx") == "gemv_naive"
    assert report.demangle("_Z13gemv_multirowILi16EEvPKfS1_Pfxx") == "gemv_multirow<16>"
    assert report.demangle("plain") == "plain"


def test_parse_ptxas():
    text = """ptxas info    : Compiling entry function '_Z17gemv_warp_shuffleILi4EEvPKfS1_Pfx' for 'sm_90'
ptxas info    : Function properties for _Z17gemv_warp_shuffleILi4EEvPKfS1_Pfx
    8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 128 bytes smem, 380 bytes cmem[0]
"""
    r = report.parse_ptxas(text)["gemv_warp_shuffle<4>"]
    assert (r.registers, r.shared_bytes, r.stack_bytes, r.spill_store_bytes, r.spill_load_bytes) == (40, 128, 8, 12, 16)
    assert r.spills


def test_parse_sass_counts_load_widths():
    text = """        Function : _Z10gemv_naivePKfS0_Pfxx
        /*0040*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*0050*/               @P0 LDG.E.EF.128 R8, desc[UR4][R6.64] ;
        /*0060*/                   LDG.E R9, desc[UR4][R6.64] ;
        /*0070*/                   LDG.E.64 R10, desc[UR4][R6.64] ;
        /*0080*/                   SHFL.DOWN PT, R3, R2, 0x10, 0x1f ;
        /*0090*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00a0*/                   STL [R1], R4 ;
"""
    s = sass.parse_sass(text)["gemv_naive"]
    assert s.global_loads == {128: 2, 32: 1, 64: 1}
    assert (s.shuffles, s.barriers, s.local_stores) == (1, 1, 1)


def test_arch_defaults_without_a_gpu(monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU decides the architecture here")
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    flags, why = toolchain.arch_flags()
    assert flags == ["-gencode=arch=compute_90,code=sm_90"] and "default" in why
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0;8.6+PTX")
    flags, _ = toolchain.arch_flags()
    assert flags == ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_86,code=sm_86",
                     "-gencode=arch=compute_86,code=compute_86"]
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "nine")
    with pytest.raises(ValueError, match="9.0"):
        toolchain.arch_flags()


def test_an_unchanged_source_is_not_read_again_and_an_edited_one_is_rebuilt(tmp_path):
    import os

    from gemvlab.native.kernel import Kernel

    cu = tmp_path / "tiny.cu"
    cu.write_text('#include <cuda_runtime.h>\n__global__ void gemv_tiny(float* c) { c[0] = 1.0f; }\n'
                  'extern "C" int launch_tiny(float* c) { gemv_tiny<<<1, 1>>>(c); return (int)cudaGetLastError(); }\n')
    k = Kernel(name="tiny", source_path=cu, launcher="launch_tiny", symbol="gemv_tiny")
    first = k.build()
    assert k.build() is first
    cu.write_text(cu.read_text() + "// edited\n")
    os.utime(cu, ns=(cu.stat().st_atime_ns, cu.stat().st_mtime_ns + 10**9))
    assert k.build().path != first.path
