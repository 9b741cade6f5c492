"""``python -m gemvlab doctor``: what this machine can do, and the exact fix for each gap.

Exit status 0 when kernels can be built here (with or without a GPU to run them), 1 when not.
"""

from __future__ import annotations

import os
import shutil
import sys

from ..native import toolchain


def checks() -> list[tuple[str, str, str, bool]]:
    """(item, status, fix, needed_for_build) for each piece."""
    import torch

    out = []
    home = toolchain.find_cuda_home()
    nvcc = toolchain.nvcc_version(home)
    torch_cuda = torch.version.cuda

    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        driver = toolchain.driver_version() or "unknown (nvidia-smi did not answer)"
        out.append(("GPU", (f"{p.name}, compute capability {p.major}.{p.minor}, {p.multi_processor_count} SMs, "
                           f"driver {driver}"), "", False))
    else:
        out.append(("GPU", "none: kernels build and are inspected here; timings come from the recorded file",
                    ("to run kernels, use a machine with an NVIDIA GPU and driver (Colab: Runtime > "
                    "Change runtime type > GPU)"), False))
    out.append(("torch", f"{torch.__version__}, CUDA build {torch_cuda}" if torch_cuda else
                f"{torch.__version__}, CPU-only build",
                "" if torch_cuda else "install a CUDA build: pip install torch (Linux x86-64)", True))
    out.append(("CUDA_HOME", os.environ.get("CUDA_HOME") or (f"not set; gemvlab will use {home}" if home else "not set"),
                "" if home else "install the CUDA toolkit and export CUDA_HOME=/usr/local/cuda", True))
    if nvcc:
        match = torch_cuda is None or nvcc.split(".")[0] == torch_cuda.split(".")[0]
        out.append(("nvcc", f"{nvcc} in {home}" + ("" if match else f" (torch was built with CUDA {torch_cuda})"),
                    "" if match else f"install a toolkit with CUDA {torch_cuda.split('.')[0]}.x, or a torch "
                                     f"built for CUDA {nvcc.split('.')[0]}", True))
    else:
        out.append(("nvcc", "not found", f"install the CUDA toolkit {torch_cuda or ''} (nvcc) and set CUDA_HOME", True))
    ninja = shutil.which("ninja")
    if not ninja:
        try:
            import ninja as _ninja

            ninja = os.path.join(_ninja.BIN_DIR, "ninja")
        except ImportError:
            ninja = None
    out.append(("ninja", ninja or "not found", "" if ninja else "pip install ninja", True))
    try:
        flags, why = toolchain.arch_flags()
        out.append(("architecture", f"{' '.join(flags)} ({why})", "", True))
    except ValueError as e:
        out.append(("architecture", f"unreadable: {e}", "export TORCH_CUDA_ARCH_LIST=9.0", True))
    san = toolchain.find_tool("compute-sanitizer")
    out.append(("compute-sanitizer", san or "not found",
                "" if san else "optional, for the pitfall demos: it ships with the CUDA toolkit", False))
    dis = toolchain.find_tool("cuobjdump")
    out.append(("disassembler", dis or "not found",
                "" if dis else "optional, for SASS load widths: the CUDA toolkit's cuobjdump, or pip install triton", False))
    return out


def main() -> int:
    rows = checks()
    ok = True
    for item, status, fix, needed in rows:
        bad = bool(fix) and needed
        ok &= not bad
        mark = "MISSING" if bad else ("note" if fix else "ok")
        print(f"{item:<18} [{mark}] {status}")
        if fix:
            print(f"{'':<18}  fix: {fix}")
    print("\nkernels can be built here" if ok else "\nkernels cannot be built here until the MISSING items are fixed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
