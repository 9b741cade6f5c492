"""Compiling a .cu file with torch's load_inline, and keeping what the compiler says about it.

A build returns a :class:`Built`: the loaded library (its launchers are called through ctypes,
gemvlab.native.launch, so the .cu needs no torch headers and compiles in seconds), the resource
report ptxas printed (registers, shared memory, spills per kernel) and, where a disassembler can
be found, a SASS summary (global loads counted by width).

Builds are cached across processes under ``~/.cache/gemvlab`` (``GEMVLAB_CACHE`` overrides): the
folder's name carries a digest of the source, its headers and the flags, so an edited kernel gets
a fresh build and an unchanged one loads in milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import io
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import toolchain
from .report import parse_ptxas
from .sass import sass_summary, sass_text

#: nvcc flags for every build: optimise, report resources (-v), keep fast but exact fp32 math.
NVCC_FLAGS = ["-O3", "-Xptxas=-v", "-std=c++17"]


class BuildError(RuntimeError):
    """The compiler rejected a kernel source; the message holds its errors."""


@dataclass
class Built:
    name: str
    path: Path  # the shared library
    library: ctypes.CDLL
    resources: dict  # kernel -> report.KernelResources
    sass: dict | None  # kernel -> sass.SassSummary, None without a disassembler
    seconds: float  # this call's time: a cold build, or a warm load
    cached: bool  # True when nothing was compiled
    arch: str  # the -gencode flags used
    ptxas_log: str = field(repr=False, default="")
    _disassembly: str | None = field(repr=False, default=None)

    def disassembly(self) -> str | None:
        """The SASS of every kernel in the library (None without a disassembler), read once."""
        if self._disassembly is None and self.sass is not None:
            self._disassembly = sass_text(self.path)
        return self._disassembly


def cache_root() -> Path:
    import torch

    default = Path.home() / ".cache" / "gemvlab"
    root = Path(os.environ.get("GEMVLAB_CACHE", default))
    return root / f"torch{torch.__version__.split('+')[0]}-cu{torch.version.cuda}"


@contextlib.contextmanager
def _capture_fd1():
    """Send file descriptor 1 (where ninja, nvcc and ptxas write) and sys.stdout to a buffer."""
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as tmp, contextlib.redirect_stdout(io.StringIO()):
        os.dup2(tmp.fileno(), 1)
        out = {"text": ""}
        try:
            yield out
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            out["text"] = tmp.read().decode(errors="replace")


def build(name: str, source: str, extra_flags: list[str] | None = None, headers: dict | None = None) -> Built:
    """Compile `source` (CUDA C++ with extern "C" launchers) and load it; cached across processes.

    `headers` ({file name: text}) are the local files the source #includes: they are written
    beside the build and are part of the cache key, so editing a header rebuilds its users.
    `extra_flags` (the -D flags a kernel's constants come in) are part of the key too."""
    toolchain.configure()
    problems = toolchain.missing_for_build()
    if problems:
        raise BuildError("cannot build CUDA kernels here:\n  - " + "\n  - ".join(problems))
    arch, _ = toolchain.arch_flags()
    flags = NVCC_FLAGS + arch + list(extra_flags or [])
    headers = dict(sorted((headers or {}).items()))
    digest = hashlib.sha256("\0".join([source, *flags, *(f"{k}\0{v}" for k, v in headers.items())])
                            .encode()).hexdigest()[:12]
    module = f"gemvlab_{name}_{digest}"
    folder = cache_root() / module
    library_path = folder / f"{module}.so"
    report_path = folder / "ptxas.txt"
    cached = library_path.exists() and report_path.exists()
    if not cached and folder.exists():
        shutil.rmtree(folder)  # half-built or built without a report: start clean
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in headers.items():
        (folder / file_name).write_text(text)
    if headers:
        flags = flags + [f"-I{folder}"]
    start = time.perf_counter()
    if not cached:  # a cached build is loaded directly: torch (and ninja) need not check it again
        _compile(name, module, source, flags, folder, report_path)
    seconds = time.perf_counter() - start
    ptxas_log = report_path.read_text()
    try:
        library = ctypes.CDLL(str(library_path))
    except OSError:  # a cached build that cannot load here (made on another machine): build again
        if not cached:
            raise
        shutil.rmtree(folder, ignore_errors=True)
        return build(name, source, extra_flags, headers)
    return Built(name=name, path=library_path, library=library, resources=parse_ptxas(ptxas_log),
                 sass=sass_summary(library_path), seconds=seconds, cached=cached, arch=" ".join(arch),
                 ptxas_log=ptxas_log)


def _compile(name: str, module: str, source: str, flags: list[str], folder: Path, report_path: Path) -> None:
    """load_inline into `folder`, keeping ptxas's report; a failure raises BuildError with the
    compiler's errors (and leaves no half-built folder)."""
    from torch.utils.cpp_extension import load_inline

    with _capture_fd1() as out:
        try:
            load_inline(name=module, cpp_sources="",  # no Python bindings: the launchers are called through ctypes
                        cuda_sources=source, extra_cuda_cflags=flags, build_directory=str(folder),
                        no_implicit_headers=True,  # skip torch's headers: ~20 s less per cold build
                        is_python_module=False,
                        verbose=True)  # sends the compiler's output to fd 1, where it is captured
            error = None
        except Exception as e:  # noqa: BLE001 - re-raised below with the compiler's text
            error = e
    if error is not None:
        shutil.rmtree(folder, ignore_errors=True)
        raise BuildError(f"building {name} failed:\n{_compiler_errors(out['text']) or error}") from error
    report_path.write_text(_ptxas_lines(out["text"]))


def _compiler_errors(text: str) -> str:
    keep = [ln for ln in text.splitlines() if re.search(r"error|warning|undefined", ln, re.IGNORECASE)
            and not ln.startswith("[")]
    return "\n".join(keep[:40])


def _ptxas_lines(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines()
                     if ln.startswith("ptxas") or re.match(r"\s+\d+ bytes stack frame", ln)) + "\n"
