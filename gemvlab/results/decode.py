"""The decode study: bf16 and fp16 W with 1 to 16 vectors (and float32 with several), gemv beside
torch.matmul, torch.compile's max-autotuned matmul and the read ceiling, kept in the results file
under "decode" (``python -m gemvlab record --decode``; ``python -m gemvlab table --decode``).

Each case is one (N, K, n, dtype): B is x.t() for a contiguous activation x (n, K), as decode code
holds it; the four kernels are checked against float64 and timed round-robin, L2 flushed by
reading; torch.compile is compiled (and autotuned) for the case before any timing.
"""

from __future__ import annotations

import time

from .schema import DECODE_ROW_KEYS as ROW_KEYS

#: The decode-GEMV issue's shapes (LLM layers and vocabularies), N x K.
SHAPES = ((1024, 4096), (4096, 4096), (14_336, 4096), (4096, 14_336), (28_672, 8192), (8192, 28_672),
          (128_256, 4096), (151_936, 1024))
#: Shapes the rule was not tuned on (bench/tune_dispatch.py --decode times SHAPES only), bf16.
UNTUNED = ((6144, 4096), (57_344, 8192), (152_064, 3584), (18_944, 3584), (3584, 18_944), (10_240, 8192))
VECTORS = (1, 2, 3, 4, 8, 16)
FLOAT32_VECTORS = (2, 4, 8, 16)


def cases() -> list[tuple]:
    """(N, K, n, dtype name, set, with torch.compile) in the order they are recorded: torch.compile
    is compiled and timed for every bf16 and fp16 case (each compile with autotuning takes a second
    or two), not for float32."""
    out = [(N, K, n, "bfloat16", "issue", True) for N, K in SHAPES for n in VECTORS]
    out += [(N, K, n, "float16", "issue", True) for N, K in SHAPES for n in VECTORS]
    out += [(N, K, n, "bfloat16", "untuned", True) for N, K in UNTUNED for n in VECTORS]
    out += [(N, K, n, "float32", "float32", False) for N, K in SHAPES[1:6] for n in FLOAT32_VECTORS]
    return out


def measure_case(N, K, n, dtype_name, which, with_compile) -> list[dict]:
    import torch

    from ..measure import decode as md

    dtype = md.DTYPES[dtype_name]
    torch.cuda.empty_cache()
    W, B = md.inputs(N, K, n, dtype)
    compiled = md.compiled_matmul() if with_compile else None
    got = {r["kernel"]: r for r in md.compare(W, B, rounds=2, compiled=compiled, warmup_ms=5, rep_ms=25)}
    torch_ms, ceiling = got["torch.matmul"]["ms"], got.get("read ceiling")
    rows = []
    for name, r in got.items():
        rows.append({"M": N, "K": K, "n": n, "dtype": dtype_name, "kernel": name, "ms": r["ms"], "q1": r["q1"],
                     "q3": r["q3"], "GBps": r["GBps"], "vs_torch": torch_ms / r["ms"],
                     "vs_ceiling": r["GBps"] / ceiling["GBps"] if ceiling else None,
                     "chosen": r["chosen"], "rel_err": r["rel_err"],
                     "bound": md.error_bound(dtype, K) if name == "gemv" else None, "set": which})
    return rows


def record(doc: dict, save=None, budget_s: float = 480) -> dict:
    """Measure every case into doc["decode"] (saving after each shape with `save(doc)`), within
    `budget_s` seconds: cases left when it runs out are listed as not measured."""
    from ..measure import overhead
    from .record import new_doc

    start = time.time()
    fresh = new_doc("recorded")  # this run's date, machine and software
    out = {"date": fresh["date"], "machine": fresh["machine"], "layout": "B = x.t() for a contiguous activation x of shape (n, K)",
           "timer": "CUDA events, L2 flushed by reading, round-robin, median and quartiles",
           "compile_mode": "max-autotune-no-cudagraphs", "rows": [], "not_measured": [], "seconds": None}
    doc["decode"] = out
    for case in cases():
        if time.time() - start > budget_s:
            out["not_measured"].append(list(case[:5]))
            continue
        t = time.time()
        try:
            out["rows"] += measure_case(*case)
        except Exception as e:  # noqa: BLE001 - the rest is worth keeping
            out["not_measured"].append(list(case[:5]) + [f"{type(e).__name__}: {e}"])
        print(f"  decode {case[0]} x {case[1]} n={case[2]} {case[3]}: {time.time() - t:.1f} s", flush=True)
        if save and case[2] == VECTORS[-1]:
            save(doc)
    out["overhead"] = overhead.measure(4096, 4096, dtype=__import__("torch").bfloat16, vectors=4)
    out["profiles"] = profiles()
    out["seconds"] = round(time.time() - start, 1)
    if save:
        save(doc)
    return doc


#: Where the profiles of torch.matmul are taken (notebook 06 shows them).
PROFILE_SHAPE = (14_336, 4096)


def profiles() -> dict:
    """The kernels torch.matmul launches at PROFILE_SHAPE, bf16, at each n, and what torch.compile's
    max-autotuned matmul launches at n = 2 and 4 (torch.profiler, L2 flushed before each call)."""
    import torch

    from ..measure import decode as md
    from ..measure.profile import kernels_of

    N, K = PROFILE_SHAPE
    out = {"M": N, "K": K, "dtype": "bfloat16", "kernels": {}, "compile": {}}
    for n in VECTORS:
        W, B = md.inputs(N, K, n, torch.bfloat16)
        out["kernels"][str(n)] = kernels_of(lambda W=W, B=B: torch.matmul(W, B))
        if n in (2, 4):
            f = md.compiled_matmul()
            f(W, B)
            out["compile"][str(n)] = kernels_of(lambda W=W, B=B, f=f: f(W, B))
    return out


def machine(doc: dict) -> dict:
    """The machine the decode study was recorded on: its own (it may be recorded apart from the rest
    of the file), else the file's."""
    return (doc.get("decode") or {}).get("machine", doc.get("machine", {}))


def label(doc: dict) -> str:
    """'recorded on NVIDIA H200, 2026-12-02': the decode study's own machine and date."""
    d = doc.get("decode") or {}
    return f"{doc['source']} on {machine(doc)['gpu']}, {d.get('date', doc['date'])[:10]}"


def rows(doc: dict) -> list[dict]:
    """The decode table's rows (one per case and kernel), with source and gpu."""
    d = doc.get("decode") or {}
    gpu = d.get("machine", doc["machine"])["gpu"]
    return [{**{k: r.get(k) for k in ROW_KEYS}, "source": doc["source"], "gpu": gpu}
            for r in d.get("rows", [])]


def format_rows(doc: dict) -> str:
    """The decode table as text: per case, each kernel's time and ratios."""
    lines = [(f"{'N':>7}{'K':>7}{'n':>4} {'dtype':<9}{'kernel':<15}{'ms':>9}{'GB/s':>7}{'vs torch':>10}"
              f"{'vs ceiling':>12}  chosen")]
    last = None
    for r in rows(doc):
        case = (r["M"], r["K"], r["n"], r["dtype"])
        head = f"{r['M']:>7}{r['K']:>7}{r['n']:>4} {r['dtype']:<9}" if case != last else " " * 27
        ceiling = f"{r['vs_ceiling']:.3f}" if r["vs_ceiling"] is not None else "-"
        lines.append(f"{head}{r['kernel']:<15}{r['ms']:>9.4f}{r['GBps']:>7.0f}{r['vs_torch']:>9.2f}x{ceiling:>12}  "
                     + (r["chosen"] or ""))
        last = case
    if not rows(doc):
        return "no decode study in this file: python -m gemvlab record --decode measures one on a GPU"
    lines.append(f"source: {label(doc)}; B is x.t() for an activation x (n, K); vs ceiling compares bandwidth")
    return "\n".join(lines)
