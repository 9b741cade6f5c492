"""Finding the tools a build needs, and setting sensible defaults when they are missing.

torch's ``load_inline`` needs ``CUDA_HOME`` (the toolkit's folder, for ``nvcc``), an
architecture to compile for, and ``ninja``. On a machine without a GPU it cannot ask the GPU
for its architecture and fails deep inside torch (an ``IndexError``). gemvlab fills the gaps
before the first build and says what it chose, so that building works on a laptop or in CI.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

log = logging.getLogger("gemvlab")

#: The architecture to build for when there is no GPU to ask and no TORCH_CUDA_ARCH_LIST:
#: Hopper (H100, H200), the GPU the recorded results come from.
DEFAULT_ARCH = "9.0"


def child_env(env: dict | None = None) -> dict:
    """`env` (default: os.environ) with the folder that holds this gemvlab first on PYTHONPATH, so
    that a child process (`python -m gemvlab...`) imports this same gemvlab."""
    env = dict(os.environ if env is None else env)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def find_cuda_home() -> str | None:
    """The CUDA toolkit folder: $CUDA_HOME, $CUDA_PATH, the folder above nvcc, or /usr/local/cuda."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and Path(home, "bin", "nvcc").exists():
            return home
    candidates = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent)
    candidates.append(Path("/usr/local/cuda"))
    for home in candidates:  # a toolkit has nvcc and the runtime's headers (not a wrapper script)
        if Path(home, "bin", "nvcc").exists() and Path(home, "include", "cuda_runtime.h").exists():
            return str(home)
    return None


def nvcc_version(cuda_home: str | None = None) -> str | None:
    """'13.0' for the nvcc in cuda_home, or None when there is none."""
    cuda_home = cuda_home or find_cuda_home()
    if not cuda_home:
        return None
    try:
        out = subprocess.run([str(Path(cuda_home, "bin", "nvcc")), "--version"],
                             capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


def driver_version() -> str | None:
    """The NVIDIA driver's version as nvidia-smi reports it, or None when it does not answer."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=False).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return out[0] if out else None


def _triton_bin() -> Path | None:
    """Triton's wheel carries cuobjdump and nvdisasm; find its folder without importing triton."""
    import importlib.util

    spec = importlib.util.find_spec("triton")
    if not spec or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)), "backends", "nvidia", "bin")
    return folder if folder.is_dir() else None


def find_tool(name: str) -> str | None:
    """A CUDA tool (cuobjdump, nvdisasm, compute-sanitizer): in the toolkit, on PATH, or in triton."""
    places = []
    home = find_cuda_home()
    if home:
        places += [Path(home, "bin", name), Path(home, name, name)]  # compute-sanitizer/compute-sanitizer
    which = shutil.which(name)
    if which:
        places.append(Path(which))
    tb = _triton_bin()
    if tb:
        places.append(tb / name)
    for p in places:
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def arch_flags() -> tuple[list[str], str]:
    """nvcc flags naming the architecture to build for, and where that choice came from.

    The GPU's own compute capability when there is a GPU, else TORCH_CUDA_ARCH_LIST, else
    DEFAULT_ARCH. Real machine code (sm_XY) is always included, so the SASS read from the
    build is the code that runs.
    """
    import torch

    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        archs, why = [f"{major}.{minor}"], f"the GPU's compute capability ({torch.cuda.get_device_name()})"
    elif os.environ.get("TORCH_CUDA_ARCH_LIST"):
        archs = re.split(r"[;\s]+", os.environ["TORCH_CUDA_ARCH_LIST"].strip())
        why = "TORCH_CUDA_ARCH_LIST"
    else:
        archs, why = [DEFAULT_ARCH], f"default {DEFAULT_ARCH} (no GPU here and TORCH_CUDA_ARCH_LIST unset)"
    flags = []
    for arch in filter(None, archs):
        ptx = arch.endswith("+PTX")
        num = arch.removesuffix("+PTX").replace(".", "")
        if not re.fullmatch(r"\d+[af]?", num):
            raise ValueError(f"cannot read architecture {arch!r} from {why}: use a form like 9.0 or 8.6+PTX")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        if ptx:
            flags.append(f"-gencode=arch=compute_{num},code=compute_{num}")
    return flags, why


@functools.lru_cache(maxsize=1)
def configure() -> tuple[str, ...]:
    """Make the environment buildable; return the notes saying what was set (said once).

    Sets CUDA_HOME when it is missing and a toolkit can be found, puts the ninja that pip
    installed on PATH, and quiets torch's timestamped "No CUDA runtime is found" warning
    (gemvlab says it instead, in words that name the situation).
    """
    notes = []
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
    home = find_cuda_home()
    if home and os.environ.get("CUDA_HOME") != home:
        if not os.environ.get("CUDA_HOME"):
            notes.append(f"CUDA_HOME was not set; using {home} (found nvcc there)")
        os.environ["CUDA_HOME"] = home
    if "torch.utils.cpp_extension" in sys.modules and home:
        # torch read CUDA_HOME when it was imported; correct its copy too.
        sys.modules["torch.utils.cpp_extension"].CUDA_HOME = home
    if not shutil.which("ninja"):
        try:
            import ninja

            os.environ["PATH"] = ninja.BIN_DIR + os.pathsep + os.environ.get("PATH", "")
        except ImportError:
            pass
    for note in notes:  # information, on stdout: a notebook shows stderr in red, as if it had failed
        print(f"gemvlab: {note}")
    return tuple(notes)


def missing_for_build() -> list[str]:
    """What stops a build here, each with its fix; empty when kernels can be built."""
    import torch

    problems = []
    if torch.version.cuda is None:
        problems.append("torch is a CPU-only build: install a CUDA build of torch (pip install torch on Linux x86-64 gives one)")
    if not find_cuda_home():
        problems.append("no CUDA toolkit (nvcc) found: install one whose major version matches torch's CUDA "
                        f"({torch.version.cuda}) and set CUDA_HOME to its folder")
    if not shutil.which("ninja"):
        try:
            import ninja  # noqa: F401
        except ImportError:
            problems.append("ninja is missing: pip install ninja")
    return problems
