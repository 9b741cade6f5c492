"""What ptxas says about each compiled kernel (registers, shared memory, spills), as data.

``nvcc -Xptxas=-v`` prints one block per kernel; :func:`parse_ptxas` turns it into
:class:`KernelResources`, keyed by the kernel's readable name (``gemv_multirow<4>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


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


def demangle(symbol: str) -> str:
    """Readable names for gemvlab's kernels: _Z13gemv_multirowILi4EEvPKfS1_Pfxx -> gemv_multirow<4>.

    Handles plain functions and integer and bool template arguments (Lb1E -> true), which is all
    gemvlab's kernels use; anything else comes back unchanged (no c++filt, so names read the same
    on every machine).
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
