"""Facts that Python and CUDA share, defined once and checked on both sides: the variant codec, the
instantiations each .cu compiles against the Python lists, the LaunchArgs struct, and the
constants that reach nvcc as -D flags."""

import ctypes
import re

import pytest

from gemvlab.decode import kernels as decode_kernels
from gemvlab.dispatch import KERNELS as DISPATCH
from gemvlab.dispatch import kernels as dk
from gemvlab.native import kernel as nk
from gemvlab.native import launch

KERNELS = {**DISPATCH, **decode_kernels.KERNELS}
MACROS = {"split_k": "GEMV_SPLIT", "rows_per_warp": "GEMV_G", "row_tiles": "GEMV_TILE", "decode_mma": "GEMV_MMA",
          "decode_cores": "GEMV_CORES"}


def test_encode_and_decode_are_inverse():
    for args in ((1,), (2, 1), (2, 0, 1), (32, 4, 12), (255, 255, 255)):
        assert nk.decode(nk.encode(*args), len(args)) == args
    with pytest.raises(ValueError):
        nk.encode(1 << nk.VARIANT_BITS)


@pytest.mark.parametrize("name", MACROS)
def test_each_cu_instantiates_exactly_the_compiled_variants(name):
    """The .cu's switch cases, read from the file, are the variants Python lists as compiled."""
    kernel = KERNELS[name]
    text = kernel.source()
    calls = re.findall(rf"^\s*((?:{MACROS[name]}\([^)]*\)\s*)+)$", text, re.MULTILINE)
    found = set()
    for line in calls:
        for args in re.findall(rf"{MACROS[name]}\(([^)]*)\)", line):
            values = [{"true": 1, "false": 0}.get(a.strip(), None) for a in args.split(",")]
            values = [int(a) if v is None else v for a, v in zip(args.split(","), values)]
            found.add(nk.encode(*values))
    assert found == set(kernel.variants), sorted(map(kernel.kernel_name, found ^ set(kernel.variants)))


def test_the_cu_files_take_their_shared_numbers_from_the_build():
    """No .cu defines a number Python also holds: each reads the GEMV_* macro passed with -D."""
    for kernel in KERNELS.values():
        defines = decode_kernels.DEFINES if kernel.name in decode_kernels.KERNELS else dk.DEFINES
        flags = dict(defines)
        text = kernel.source() + "".join(kernel.headers().values())
        for macro in re.findall(r"\bGEMV_[A-Z0-9_]+\b", text):
            if macro in ("GEMV_VARIANT", "GEMV_VARIANT4", "GEMV_ARG", *MACROS.values()):
                continue
            assert macro in flags, (kernel.name, macro)
        assert kernel.flags() == [f"-D{k}={v}" for k, v in defines]
    assert not re.search(r"constexpr int \w+ = \d", KERNELS["row_tiles"].source())


def test_launch_args_struct_matches_ctypes():
    """The same fields, in the same order, of the same sizes (so the same offsets)."""
    sizes = {"long long": 8, "int": 4}
    header = [(name, sizes[t]) for t, name in launch.header_fields()]
    python = [(name, ctypes.sizeof(t)) for name, t in launch.LaunchArgs._fields_]
    assert header == python


def test_kernel_names_follow_the_codec():
    assert KERNELS["split_k"].kernel_name(nk.encode(2, 1, 1)) == "gemv_split_k<2, true, 1>"
    assert KERNELS["row_tiles"].kernel_name(nk.encode(1, 4, 8)) == "gemv_row_tiles<1, 4, 8>"
    assert KERNELS["rows_per_warp"].kernel_name(nk.encode(16, 0)) == "gemv_rows_per_warp<16, false>"
    assert KERNELS["split_k"].loads_per_trip(nk.encode(1, 0, 4)) == 4
