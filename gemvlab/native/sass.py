"""What the machine code (SASS) of a built library says: load widths, spills, shuffles, barriers,
and how many loads a loop issues before it first waits.

The disassembler is the toolkit's ``cuobjdump`` (or the copy in Triton's wheel); without one,
these return None and callers say so.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import toolchain
from .report import demangle


@dataclass(frozen=True)
class SassSummary:
    """Counts of instructions in one kernel's machine code that tell a memory story."""

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


def sass_text(library_path: Path) -> str | None:
    """The machine code of every kernel in the library, or None when no cuobjdump is found.
    Kept beside the library (sass.txt), so it is made once per build."""
    saved = library_path.parent / "sass.txt"
    if saved.exists():
        return saved.read_text()
    tool = toolchain.find_tool("cuobjdump")
    if not tool:
        return None
    run = subprocess.run([tool, "--dump-sass", str(library_path)], capture_output=True, text=True, check=False)
    if run.returncode:
        return None
    saved.write_text(run.stdout)
    return run.stdout


def load_width(opcode: str) -> int:
    """Bits one LDG instruction moves per thread: LDG.E.128 -> 128, LDG.E -> 32, LDG.E.U8 -> 8."""
    for p in opcode.split(".")[1:]:
        if p in ("64", "128"):
            return int(p)
        if p in ("U8", "S8"):
            return 8
        if p in ("U16", "S16"):
            return 16
    return 32


def sass_summary(library_path: Path) -> dict | None:
    """Kernel name -> SassSummary for a built library, or None without a disassembler."""
    text = sass_text(library_path)
    return None if text is None else parse_sass(text)


def _instructions(text: str):
    """(kernel, address, instruction) for every instruction in cuobjdump's output."""
    current = None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = demangle(m.group(1))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and current:
            yield current, int(m.group(1), 16), m.group(2).strip()


def _opcode(instruction: str) -> str:
    return re.sub(r"^@!?U?P\w+\s+", "", instruction).split()[0]  # without its predicate


def parse_sass(text: str) -> dict:
    """Kernel name -> SassSummary, from cuobjdump --dump-sass output."""
    counts: dict = {}
    for kernel, _, ins in _instructions(text):
        c = counts.setdefault(kernel, {"global_loads": {}, "local_loads": 0, "local_stores": 0, "shuffles": 0,
                                           "barriers": 0, "shared_accesses": 0, "l2_only_loads": 0})
        op = _opcode(ins)
        base = op.split(".")[0]
        if base == "LDG":
            w = load_width(op)
            c["global_loads"][w] = c["global_loads"].get(w, 0) + 1
            c["l2_only_loads"] += ".STRONG.GPU" in op
        elif base in ("LDL", "STL", "SHFL", "BAR"):
            key = {"LDL": "local_loads", "STL": "local_stores", "SHFL": "shuffles", "BAR": "barriers"}[base]
            c[key] += 1
        elif base in ("LDS", "STS"):
            c["shared_accesses"] += 1
    return {k: SassSummary(kernel=k, **c) for k, c in counts.items()}


def loads_before_first_use(text: str, kernel: str) -> list[str] | None:
    """The global loads a kernel's main loop issues before its first floating-point instruction
    (FMUL, FFMA or FADD), in order: what one thread really has in flight when it first waits. The
    main loop is the backward branch whose body loads the most bytes. The source says how many
    independent loads there are; ptxas decides how many it issues before using one (fewer when
    registers are short). None when the kernel or a loop is not found."""
    ins = [(pc, i) for k, pc, i in _instructions(text) if k == kernel]
    best = None
    for pc, op in ins:
        m = re.search(r"\bBRA (0x[0-9a-f]+)", op)
        if not (m and int(m.group(1), 16) < pc):
            continue
        start = int(m.group(1), 16)
        body = [_opcode(o) for p, o in ins if start <= p < pc]
        weight = sum(load_width(o) for o in body if o.startswith("LDG"))
        loads = []
        for name in body:
            if name.startswith("LDG"):
                loads.append(name)
            elif name.split(".")[0] in ("FMUL", "FFMA", "FADD"):
                break
        if best is None or weight > best[0]:
            best = (weight, loads)
    return best[1] if best else None
