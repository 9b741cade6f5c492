"""The decode study's bar, read from a results file: where gemv beats torch.matmul and torch.compile,
where it ties them, where it is slower, and the bar's other tests (``python -m gemvlab table --decode
--bar``).

A tie is a difference inside both timings' quartiles: gemv is faster only where its third quartile
is under the other's first, slower only where its first is over the other's third. The bar, per set
of shapes (the tuned ones and the untuned ones, each on its own):

- bf16 and fp16: gemv at least as fast as torch.matmul and torch.compile in every case, with ties in
  at most one case in ten (TIE_SHARE);
- where W is at least BIG_W times the L2: gemv at least FEW_VECTORS_SPEEDUP times torch.matmul at
  n = 2 to 4, at least CEILING_SHARE of the read ceiling's bandwidth at n <= 8, and its n = 16 time
  within N16_OVER_N1 of its n = 1 time;
- float32 (n > 1): at least as fast as torch.matmul, ties allowed;
- every gemv row within its error bound.
"""

from __future__ import annotations

from collections import defaultdict

from .decode import label, machine
from .table import quartiles_overlap

TIE_SHARE = 0.1
BIG_W = 4
FEW_VECTORS_SPEEDUP = 1.25
CEILING_SHARE = 0.93
N16_OVER_N1 = 1.15
PEERS = ("torch.matmul", "torch.compile")


def verdict(gemv: dict, peer: dict) -> str:
    """'faster', 'tie' or 'slower': gemv's quartiles (q1, q3) against the peer's."""
    if quartiles_overlap(gemv, peer, "q1", "q3"):
        return "tie"
    return "faster" if gemv["ms"] < peer["ms"] else "slower"


def _worst(verdicts) -> str:
    return "slower" if "slower" in verdicts else "tie" if "tie" in verdicts else "faster"


def cases(doc: dict) -> list[dict]:
    """One dict per recorded case (set, dtype, N, K, n) that has a gemv row: the four kernels' times,
    gemv's ratios, its verdict against each peer and the worst of them, and whether W is big (at least
    BIG_W times the recording GPU's L2; None where the file has no L2 size)."""
    l2 = machine(doc).get("l2_bytes")
    by = defaultdict(dict)
    for r in (doc.get("decode") or {}).get("rows", []):
        by[(r["set"], r["dtype"], r["M"], r["K"], r["n"])][r["kernel"]] = r
    out = []
    for (which, dtype, N, K, n), k in by.items():
        g = k.get("gemv")
        if g is None:
            continue
        size = 4 if dtype == "float32" else 2
        verdicts = {p: verdict(g, k[p]) for p in PEERS if p in k}
        out.append({"set": which, "dtype": dtype, "M": N, "K": K, "n": n, "chosen": g["chosen"],
                    "ms": {name: r["ms"] for name, r in k.items()},
                    "vs": {p: k[p]["ms"] / g["ms"] for p in PEERS if p in k},
                    "vs_ceiling": g["vs_ceiling"], "verdicts": verdicts, "verdict": _worst(verdicts.values()),
                    "big": N * K * size >= BIG_W * l2 if l2 else None,  # None: the file has no L2 size
                    "within_bound": g["bound"] is None or g["rel_err"] is None or g["rel_err"] <= g["bound"]})
    return out


def check(doc: dict) -> dict:
    """The bar's verdict: counts of faster, tie and slower cases per set, the ties each set may have
    (None: any), what misses (one line each), whether all of it is met, and the cases."""
    all_cases = cases(doc)
    misses, counts = [], {}
    by_case = {(c["set"], c["dtype"], c["M"], c["K"], c["n"]): c for c in all_cases}
    for which in sorted({c["set"] for c in all_cases}):
        mine = [c for c in all_cases if c["set"] == which]
        tally = {v: sum(c["verdict"] == v for c in mine) for v in ("faster", "tie", "slower")}
        half = mine[0]["dtype"] != "float32"
        allowed = int(TIE_SHARE * len(mine)) if half else None  # float32: ties pass
        counts[which] = {**tally, "cases": len(mine), "ties_allowed": allowed}
        if allowed is not None and tally["tie"] > allowed:
            misses.append(f"{which}: {tally['tie']} ties in {len(mine)} cases, more than {allowed}")
    if any(c["big"] is None for c in all_cases):
        misses.append("the file has no L2 size (machine.l2_bytes): where W is big is unknown")
    for c in all_cases:
        name = f"{c['set']} {c['dtype']} {c['M']:,} x {c['K']:,}, n = {c['n']}"
        for p, v in c["verdicts"].items():
            if v == "slower":
                misses.append(f"{name}: slower than {p} ({c['vs'][p]:.3f}x)")
        if not c["within_bound"]:
            misses.append(f"{name}: error over its bound")
        if not c["big"] or c["dtype"] == "float32":
            continue
        if 2 <= c["n"] <= 4 and c["vs"].get("torch.matmul", 0) < FEW_VECTORS_SPEEDUP:
            misses.append(f"{name}: {c['vs']['torch.matmul']:.3f}x torch.matmul, under {FEW_VECTORS_SPEEDUP}x")
        if c["n"] <= 8 and c["vs_ceiling"] is not None and c["vs_ceiling"] < CEILING_SHARE:
            misses.append(f"{name}: {c['vs_ceiling']:.3f} of the read ceiling, under {CEILING_SHARE}")
        one = by_case.get((c["set"], c["dtype"], c["M"], c["K"], 1))
        if c["n"] == 16 and one and c["ms"]["gemv"] / one["ms"]["gemv"] > N16_OVER_N1:
            misses.append(f"{name}: {c['ms']['gemv'] / one['ms']['gemv']:.3f}x its n = 1 time, over {N16_OVER_N1}x")
    return {"counts": counts, "misses": misses, "met": bool(all_cases) and not misses, "cases": all_cases}


def format_bar(doc: dict) -> str:
    """The bar as text: one line per case (times in ms, gemv's ratios, the verdict, the plan), then the
    counts per set and what misses."""
    bar = check(doc)
    all_cases = bar["cases"]
    if not all_cases:
        return "no decode study in this file: python -m gemvlab record --decode measures one on a GPU"
    lines = [(f"{'set':<8}{'dtype':<9}{'N':>8}{'K':>7}{'n':>4}{'gemv':>9}{'matmul':>9}{'compile':>9}{'ceiling':>9}"
              f"{'vs matmul':>11}{'vs compile':>11}{'of ceil.':>9}  {'verdict':<8}chosen")]
    for c in all_cases:
        ms = c["ms"]
        cols = "".join(f"{ms[k]:>9.4f}" if k in ms else f"{'-':>9}"
                       for k in ("gemv", "torch.matmul", "torch.compile", "read ceiling"))
        vs = "".join(f"{c['vs'][p]:>10.3f}x" if p in c["vs"] else f"{'-':>11}" for p in PEERS)
        ceiling = f"{c['vs_ceiling']:>9.3f}" if c["vs_ceiling"] is not None else f"{'-':>9}"
        lines.append(f"{c['set']:<8}{c['dtype']:<9}{c['M']:>8}{c['K']:>7}{c['n']:>4}{cols}{vs}{ceiling}  "
                     f"{c['verdict']:<8}{c['chosen'] or ''}")
    for which, t in bar["counts"].items():
        allowed = "any allowed" if t["ties_allowed"] is None else f"at most {t['ties_allowed']}"
        lines.append(f"{which}: {t['cases']} cases: {t['faster']} faster, {t['tie']} ties ({allowed}), "
                     f"{t['slower']} slower")
    lines += [f"miss: {m}" for m in bar["misses"]]
    lines.append(f"bar {'met' if bar['met'] else 'not met'}; source: {label(doc)}; a tie is a difference inside both "
                 "timings' quartiles")
    return "\n".join(lines)
