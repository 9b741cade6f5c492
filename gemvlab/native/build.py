"""Compiling a .cu file with torch's load_inline, and reading what the compiler says about it.

A build returns a :class:`Built`: the loaded library (its launchers are called through
ctypes with device pointers, so the .cu needs no torch headers and compiles in seconds),
the resource report ptxas printed (registers, shared memory, spills per kernel) and, where a
disassembler can be found, a SASS summary (global loads counted by width).

Builds are cached across processes under ``~/.cache/gemvlab`` (``GEMVLAB_CACHE`` overrides):
the folder's name carries a digest of the source and flags, so an edited kernel gets a fresh
build and an unchanged one loads in milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import toolchain

#: nvcc flags for every build: optimise, report resources (-v), keep fast but exact fp32 math.
NVCC_FLAGS = ["-O3", "-Xptxas=-v", "-std=c++17"]


class BuildError(RuntimeError):
    """The compiler rejected a kernel source; the message holds its errors."""


@dataclass(frozen=True)
class KernelResources:
    """One kernel's line in the ptxas report."""

    kernel: str  # demangled: gemv_multirow<4>
    registers: int
    shared_bytes: int  # static shared memory (dynamic shared memory is set at launch)
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    symbol: str = ""  # the mangled name, as the library exports it

    @property
    def spills(self) -> bool:
        return self.spill_store_bytes > 0 or self.spill_load_bytes > 0


@dataclass(frozen=True)
class SassSummary:
    """Counts of instructions in one kernel's machine code (SASS) that tell a memory story."""

    kernel: str
    global_loads: dict  # width in bits -> number of LDG instructions, e.g. {128: 6, 32: 1}
    local_loads: int  # LDL: reads of local memory (spills, or arrays indexed at run time)
    local_stores: int  # STL
    shuffles: int  # SHFL
    barriers: int  # BAR (__syncthreads)
    shared_accesses: int  # LDS + STS
    l2_only_loads: int = 0  # LDG.E.*.STRONG.GPU: loads cached in the L2 but not the L1 (__ldcg)

    @property
    def widest_load(self) -> int:
        return max(self.global_loads, default=0)


@dataclass
class Built:
    name: str
    path: Path  # the shared library
    library: ctypes.CDLL
    resources: dict  # kernel -> KernelResources
    sass: dict | None  # kernel -> SassSummary, None without a disassembler
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

    def function(self, symbol: str):
        fn = getattr(self.library, symbol)
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong,
                       ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        return fn

    def error_string(self, code: int) -> str:
        fn = self.library.cudaGetErrorString  # from the CUDA runtime this library links
        fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_int]
        return fn(code).decode()


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
    beside the build and are part of the cache key, so editing a header rebuilds its users."""
    toolchain.configure()
    problems = toolchain.missing_for_build()
    if problems:
        raise BuildError("cannot build CUDA kernels here:\n  - " + "\n  - ".join(problems))
    from torch.utils.cpp_extension import load_inline

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
        with _capture_fd1() as out:
            try:
                load_inline(
                    name=module,
                    cpp_sources="",  # no Python bindings: the launchers are called through ctypes
                    cuda_sources=source,
                    extra_cuda_cflags=flags,
                    build_directory=str(folder),
                    no_implicit_headers=True,  # skip torch's headers: ~20 s less per cold build
                    is_python_module=False,
                    verbose=True,  # sends the compiler's output to fd 1, where it is captured
                )
                error = None
            except Exception as e:  # noqa: BLE001 - re-raised below with the compiler's text
                error = e
        if error is not None:
            shutil.rmtree(folder, ignore_errors=True)
            raise BuildError(f"building {name} failed:\n{_compiler_errors(out['text']) or error}") from error
        report_path.write_text(_ptxas_lines(out["text"]))
    seconds = time.perf_counter() - start
    ptxas_log = report_path.read_text()
    try:
        library = ctypes.CDLL(str(library_path))
    except OSError:  # a cached build that cannot load here (made on another machine): build again
        if not cached:
            raise
        shutil.rmtree(folder, ignore_errors=True)
        return build(name, source, extra_flags, headers)
    return Built(
        name=name,
        path=library_path,
        library=library,
        resources=parse_ptxas(ptxas_log),
        sass=sass_summary(library_path),
        seconds=seconds,
        cached=cached,
        arch=" ".join(arch),
        ptxas_log=ptxas_log,
    )


def _compiler_errors(text: str) -> str:
    keep = [ln for ln in text.splitlines() if re.search(r"error|warning|undefined", ln, re.I)
            and not ln.startswith("[")]
    return "\n".join(keep[:40])


def _ptxas_lines(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines()
                     if ln.startswith("ptxas") or re.match(r"\s+\d+ bytes stack frame", ln)) + "\n"


# ---- names -------------------------------------------------------------------------------

def demangle(symbol: str) -> str:
    """Readable names for gemvlab's kernels: _Z13gemv_multirowILi4EEvPKfS1_Pfxx -> gemv_multirow<4>.

    Handles plain functions and integer and bool template arguments (Lb1E -> true), which is
    all gemvlab's kernels use;
    anything else comes back unchanged. (No c++filt, so names read the same on every machine.)
    """
    m = re.match(r"_Z(\d+)", symbol)
    if not m:
        return symbol
    start = m.end()
    name = symbol[start:start + int(m.group(1))]
    rest = symbol[start + int(m.group(1)):]
    if rest.startswith("I"):
        args = re.match(r"I((?:L[a-z]\d+E)+)E", rest)
        if args:
            values = [({"0": "false", "1": "true"}[v] if t == "b" else v)
                      for t, v in re.findall(r"L([a-z])(\d+)E", args.group(1))]
            name += "<" + ", ".join(values) + ">"
    return name


# ---- the resource report ---------------------------------------------------------------

def parse_ptxas(text: str) -> dict:
    """Kernel name -> KernelResources, from ptxas -v output (one entry per compiled kernel)."""
    found, current, symbol, props = {}, None, "", {}
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current, symbol, props = demangle(m.group(1)), m.group(1), {}
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            props.update(stack=int(m[1]), spill_st=int(m[2]), spill_ld=int(m[3]))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            smem = re.search(r"(\d+) bytes smem", line)
            found[current] = KernelResources(
                kernel=current, registers=int(m[1]), shared_bytes=int(smem[1]) if smem else 0,
                stack_bytes=props.get("stack", 0), spill_store_bytes=props.get("spill_st", 0),
                spill_load_bytes=props.get("spill_ld", 0), symbol=symbol)
            current = None
    return found


# ---- the SASS summary ------------------------------------------------------------------

def sass_text(library_path: Path) -> str | None:
    """The machine code of every kernel in the library, or None when no cuobjdump is found.
    The disassembly is kept beside the library (sass.txt), so it is made once per build."""
    saved = library_path.parent / "sass.txt"
    if saved.exists():
        return saved.read_text()
    tool = toolchain.find_tool("cuobjdump")
    if not tool:
        return None
    run = subprocess.run([tool, "--dump-sass", str(library_path)], capture_output=True, text=True)
    if run.returncode:
        return None
    saved.write_text(run.stdout)
    return run.stdout


def load_width(opcode: str) -> int:
    """Bits one LDG instruction moves per thread: LDG.E.128 -> 128, LDG.E -> 32, LDG.E.U8 -> 8."""
    parts = opcode.split(".")
    for p in parts[1:]:
        if p in ("64", "128"):
            return int(p)
        if p in ("U8", "S8"):
            return 8
        if p in ("U16", "S16"):
            return 16
    return 32


def sass_summary(library_path: Path) -> dict | None:
    """Parsed SASS of a built library, or None without a disassembler."""
    text = sass_text(library_path)
    return None if text is None else parse_sass(text)


def parse_sass(text: str) -> dict:
    """Kernel name -> SassSummary, from cuobjdump --dump-sass output."""
    kernels, current = {}, None
    counts = {}

    def finish():
        if current:
            kernels[current] = SassSummary(kernel=current, **counts)

    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            finish()
            current = demangle(m.group(1))
            counts = dict(global_loads={}, local_loads=0, local_stores=0, shuffles=0, barriers=0,
                          shared_accesses=0, l2_only_loads=0)
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if not (m and current):
            continue
        op = m.group(1)
        base = op.split(".")[0]
        if base == "LDG":
            w = load_width(op)
            counts["global_loads"][w] = counts["global_loads"].get(w, 0) + 1
            counts["l2_only_loads"] += ".STRONG.GPU" in op
        elif base == "LDL":
            counts["local_loads"] += 1
        elif base == "STL":
            counts["local_stores"] += 1
        elif base == "SHFL":
            counts["shuffles"] += 1
        elif base == "BAR":
            counts["barriers"] += 1
        elif base in ("LDS", "STS"):
            counts["shared_accesses"] += 1
    finish()
    return kernels


def loads_before_first_use(text: str, kernel: str) -> list[str] | None:
    """The global loads a kernel's main loop issues before its first floating-point instruction
    (FMUL, FFMA or FADD), in order, from the SASS: what one thread really has in flight when it
    first waits. The main loop is the body of the first backward branch. Source code says how
    many independent loads there are; ptxas decides how many it issues before using one (fewer
    when registers are short). None when the kernel or a loop is not found."""
    current, ins = None, []
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = demangle(m.group(1))
            continue
        if current != kernel:
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    best = None
    for pc, op in ins:  # every loop: a backward branch; the main loop moves the most bytes
        m = re.search(r"\bBRA (0x[0-9a-f]+)", op)
        if not (m and int(m.group(1), 16) < pc):
            continue
        start = int(m.group(1), 16)
        body = [re.sub(r"^@!?U?P\w+\s+", "", o) for p, o in ins if start <= p < pc]
        weight = sum(load_width(o.split()[0]) for o in body if o.startswith("LDG"))
        loads = []
        for o in body:
            name = o.split()[0]
            if name.startswith("LDG"):
                loads.append(name)
            elif name.split(".")[0] in ("FMUL", "FFMA", "FADD"):
                break
        if best is None or weight > best[0]:
            best = (weight, loads)
    return best[1] if best else None
