"""Cells that show code and what the compiler made of it: a stage's source, the diff between two
stages, registers and spills, and the loads in the SASS."""

from __future__ import annotations

import difflib
import re

from ..kernels import get_stage
from ..measure import model


def show_source(stage):
    """The stage's .cu file, highlighted."""
    from IPython.display import Code

    st = get_stage(stage)
    return Code(st.source(), language="cuda")


def _kernel_body(text: str) -> list[str]:
    """The file without its leading comment block, for a diff that shows code, not prose."""
    lines = text.splitlines()
    while lines and (lines[0].startswith("//") or not lines[0].strip()):
        lines.pop(0)
    return lines


def show_diff(old, new):
    """What changed in the code from one stage to the next (a unified diff)."""
    from IPython.display import Code

    a, b = get_stage(old), get_stage(new)
    diff = difflib.unified_diff(_kernel_body(a.source()), _kernel_body(b.source()),
                                a.source_file, b.source_file, lineterm="", n=2)
    return Code("\n".join(diff), language="diff")


def build_report(*stages, variants=None) -> None:
    """Registers, shared memory, spills (ptxas) and global loads by width (SASS) per kernel (of
    every compiled variant, or of `variants`)."""
    print(f"{'kernel':<24}{'registers':>10}{'static smem':>13}{'spills':>9}  global loads in SASS")
    for stage in stages:
        st = get_stage(stage)
        built = st.build()
        for v in (variants or st.variants if st.variant_name else (None,)):
            name = st.kernel_name(v)
            r = built.resources[name]
            s = built.sass.get(name) if built.sass else None
            loads = ", ".join(f"{n} x LDG {w}-bit" for w, n in sorted(s.global_loads.items(), reverse=True)) \
                if s else "(no disassembler: install triton or the CUDA toolkit)"
            spill = f"{r.spill_store_bytes} B" if r.spills else "none"
            print(f"{name:<24}{r.registers:>10}{r.shared_bytes:>11} B{spill:>9}  {loads}")


def _sass(st) -> str | None:
    """The stage's disassembly, or None after saying that no disassembler was found."""
    text = st.build().disassembly()
    if text is None:
        print("no disassembler found (cuobjdump: CUDA toolkit, or pip install triton)")
    return text


def sass_lines(stage, variant=None, pattern=r"LDG|SHFL|BAR|LDL|STL", limit: int = 12) -> None:
    """The memory instructions of one kernel's SASS, as the disassembler prints them."""
    st = get_stage(stage)
    text = _sass(st)
    if text is None:
        return
    want = st.kernel_name(variant)
    current, shown = None, 0
    from ..native.report import demangle

    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = demangle(m.group(1))
            continue
        if current == want and re.search(pattern, line):
            ins = re.sub(r"\s*/\*\s*0x[0-9a-f]+\s*\*/\s*$", "", line).strip()  # the encoding
            ins = re.sub(r"^/\*[0-9a-f]+\*/\s*", "", ins)  # the address
            print(ins)
            shown += 1
            if shown >= limit:
                break


def loads_in_flight(stage, variants=None) -> None:
    """For each variant of a stage (or each of `variants`): the independent loads of A its source
    writes per trip, and how many of them the compiled code (SASS) really issues before it first
    uses one."""
    st = get_stage(stage)
    if _sass(st) is None:
        return
    print(f"{'kernel':<30}{'in the source':>15}{'issued before the first use (SASS)':>38}")
    for v in (variants or st.variants if st.variant_name else (None,)):
        loads = model.loads_issued(st, v) or []
        a = model.a_loads(st, loads) if loads else 0
        written = model.loads_written(st, v)
        print(f"{st.kernel_name(v):<30}{written:>15}{a:>20} of A  ({len(loads)} loads in all)")
