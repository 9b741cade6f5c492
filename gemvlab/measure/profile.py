"""Which kernels a PyTorch call launches, with their grids and times: ``torch.profiler``, no Nsight.

    kernels = profile.kernels_of(lambda: torch.matmul(A, B))
    profile.show(kernels)

Used by notebook 04 to show what torch.matmul (cuBLAS) runs at the headline shape, and by
``python -m gemvlab record`` to keep it for machines without a GPU.
"""

from __future__ import annotations

import json
import os
import tempfile


def kernels_of(fn, runs: int = 5, flush: bool = True) -> list[dict]:
    """Each kernel `fn` launches (in launch order, from the last of `runs` calls), with its grid,
    block, registers and static shared memory, and its median duration over the runs, in us.
    With `flush` the L2 is flushed by reading (gemvlab.measure.timing.flush_l2) before each call."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from .timing import flush_l2

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            if flush:
                flush_l2()
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    flush_name = "reduce_kernel"  # torch.sum, the flush: not part of fn
    per_call = [e for e in kernels if not (flush and flush_name in e["name"])]
    if not per_call:
        return []
    n = len(per_call) // runs
    calls = [per_call[i * n:(i + 1) * n] for i in range(runs)]
    out = []
    for i, e in enumerate(calls[-1]):
        durations = sorted(c[i]["dur"] for c in calls)
        args = e.get("args", {})
        out.append({"name": e["name"], "grid": args.get("grid"), "block": args.get("block"),
                    "registers": args.get("registers per thread"), "shared_bytes": args.get("shared memory"),
                    "us": durations[len(durations) // 2]})
    return out


def short_name(name: str) -> str:
    """A kernel's name without its template arguments and parameter list."""
    depth, out = 0, []
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).replace("void ", "").strip()


def show(kernels: list[dict], label: str = "") -> None:
    total = sum(k["us"] for k in kernels)
    print(f"{'kernel':<44}{'grid':>16}{'block':>14}{'regs':>6}{'us':>9}   {label}")
    for k in kernels:
        print(f"{short_name(k['name'])[:43]:<44}{tuple(k['grid'] or ())!s:>16}{tuple(k['block'] or ())!s:>14}"
              f"{k['registers'] or '':>6}{k['us']:>9.1f}")
    print(f"{'total':<44}{'':>36}{total:>9.1f}")
