"""The stage table, read the way Mark Harris's reduction deck reads: one row per step, its
time and bandwidth, how far from the ceiling, and what it gained over the step before and
over the first."""

from __future__ import annotations

from ..measure.timing import bytes_moved
from . import schema, views


def stage_table(doc: dict, upto: int | None = None) -> list[dict]:
    """Headline rows with the derived columns. `upto` keeps stages 1..upto (for the notebooks)."""
    head = views.headline(doc)
    ceiling, torch_row = head["ceiling"], head["torch"]
    out, first, prev = [], None, None
    for r in head["stages"]:
        if upto is not None and r["number"] > upto:
            continue
        first = first or r
        out.append({
            "stage": r["stage"], "number": r["number"], "M": r["M"], "K": r["K"], "block": r["block"],
            "variant": r["variant"], "ms": r["ms"], "GBps": r["GBps"], "rel_err": r["rel_err"],
            "n": r["n"],
            "vs_ceiling": ceiling["ms"] / r["ms"] if ceiling else None,
            "step_speedup": prev["ms"] / r["ms"] if prev else None,
            "cumulative_speedup": first["ms"] / r["ms"],
            "vs_torch": torch_row["ms"] / r["ms"] if torch_row else None,
            "source": doc["source"], "gpu": doc["machine"]["gpu"], "date": doc["date"],
        })
        prev = r
    return out


def quartiles_overlap(a: dict, b: dict, lo: str = "q25_ms", hi: str = "q75_ms") -> bool:
    """Whether two rows' interquartile ranges overlap: then neither is shown faster (a tie). `lo` and
    `hi` name the quartiles' keys (the decode study's rows call them q1 and q3)."""
    return a[lo] <= b[hi] and b[lo] <= a[hi]


def step_verdict(before: list[dict], after: list[dict]) -> str:
    """How `after` compares with `before`, given each one's timings in one or more independent runs
    (rows with median and quartiles). The rule: a step is real when it repeats, that is when in
    every run its quartiles lie wholly on the same side of the other's; otherwise it is a tie. With
    one run, a step beyond the quartiles is marked as not yet shown to repeat."""
    ratio = before[0]["ms"] / after[0]["ms"]
    spec = ".2f" if abs(ratio - 1) >= 0.01 else ".3f"
    faster = [a["q75_ms"] < b["q25_ms"] for b, a in zip(before, after)]
    slower = [a["q25_ms"] > b["q75_ms"] for b, a in zip(before, after)]
    if not (all(faster) or all(slower)):
        return f"tie ({ratio:.3f}x)"
    word = f"{ratio:{spec}}x faster" if all(faster) else f"{1 / ratio:{spec}}x slower"
    return word + ("" if len(before) > 1 else " (one run: not yet shown to repeat)")


def stage_runs(doc: dict) -> dict:
    """stage -> its rows at the headline shape and its stage-table configuration in each independent
    timing of a record: the stage table itself, and the block sweep's timing of the same
    configuration, minutes earlier (a live document has the stage table alone)."""
    out = {}
    for r in views.headline(doc)["stages"]:
        sweep = [s for s in views.block_sweep(doc, r["stage"]) if s["status"] == "ok"
                 and (s["block"], s["variant"]) == (r["block"], r["variant"])]
        out[r["stage"]] = [r, *sweep[:1]]
    return out


def _variant(row) -> str:
    if row.get("variant") is None:
        return ""
    return {"warp_shuffle": f", {row['variant']} loads", "multirow": f", {row['variant']} rows"}.get(
        row["stage"], f", {row['variant']}")


def format_table(doc: dict, upto: int | None = None) -> str:
    """The stage table as text, with torch.matmul, the read ceiling and where numbers come from."""
    table = stage_table(doc, upto)
    head = views.headline(doc)
    lines = [(f"{'stage':<31}{'ms':>9}{'quartiles':>17}{'GB/s':>7}{'of ceiling':>11}{'step':>8}{'cumul.':>8}"
             f"{'vs torch':>9}{'rel. error':>11}")]

    def fmt(x, spec, suffix=""):
        return "" if x is None else format(x, spec) + suffix

    rows = {r["stage"]: r for r in head["stages"]}
    runs = stage_runs(doc)
    prev, one_run = None, False
    for t in table:
        name = f"{t['number']} {t['stage']} ({t['block']}{_variant(t)})"
        r = rows[t["stage"]]
        step = ""
        if prev is not None:
            verdict = step_verdict(runs[prev["stage"]], runs[r["stage"]])
            step = "tie" if verdict.startswith("tie") else fmt(t["step_speedup"], ".2f", "x")
            one_run |= "one run" in verdict
        lines.append(f"{name:<31}{t['ms']:>9.3f}{r['q25_ms']:>9.3f}-{r['q75_ms']:<7.3f}{t['GBps']:>7.0f}"
                     f"{fmt(t['vs_ceiling'], '.3f'):>11}{step:>8}{t['cumulative_speedup']:>7.1f}x"
                     f"{fmt(t['vs_torch'], '.2f', 'x'):>9}{t['rel_err']:>11.1e}")
        prev = r
    for key, name in (("torch", "torch.matmul (cuBLAS)"), ("ceiling", "read ceiling (A only)")):
        r = head[key]
        if r:
            vs = head["ceiling"]["ms"] / r["ms"] if head["ceiling"] else None
            err = "" if r["rel_err"] is None else f"{r['rel_err']:.1e}"
            lines.append(f"{name:<31}{r['ms']:>9.3f}{r['q25_ms']:>9.3f}-{r['q75_ms']:<7.3f}{r['GBps']:>7.0f}"
                         f"{fmt(vs, '.3f'):>11}{'':>8}{'':>8}{'':>9}{err:>11}")
    M, K = doc["headline"]["M"], doc["headline"]["K"]
    peak = doc["machine"].get("datasheet_GBps")
    lines.append(f"M = {M}, K = {K}: {bytes_moved(M, K) / 1e9:.3f} GB moved; median and quartiles of >= "
                 f"{doc['timer']['min_launches']} launches ({doc['timer']['name']}); step: against the "
                 "stage above, a tie unless it repeats beyond both quartiles in every run"
                 + (" (one run here: not yet shown to repeat)" if one_run else "")
                 + (f"; datasheet peak {peak} GB/s" if peak else ""))
    lines.append("GB/s: bytes moved over the median time; of ceiling: the read ceiling's time over this one's; cumul.: the "
                 "speed-up over stage 1; vs torch: torch.matmul's time over the stage's")
    lines.append(f"source: {schema.label(doc)}")
    return "\n".join(lines)


def json_rows(doc: dict) -> list[dict]:
    """The headline rows for `python -m gemvlab table --json`."""
    keep = ("stage", "number", "M", "K", "block", "variant", "ms", "GBps", "rel_err", "vs_ceiling",
            "vs_torch", "step_speedup", "cumulative_speedup", "source", "gpu", "date")
    return [{k: t[k] for k in keep} for t in stage_table(doc)]


def shape_rows(doc: dict) -> list[dict]:
    """One row per (shape, kernel) of the shape sweep ("shape_best") and the explorer study:
    each stage, the dispatcher ("gemv"), torch.matmul and the read ceiling, timed round-robin.
    vs_torch = torch's ms / this ms; vs_ceiling = this bandwidth / the read ceiling's (bytes moved
    4(MK + K + M) for a GEMV, 4MK for the ceiling, which reads A alone)."""
    out = []
    for study in ("shape_best", "explorer"):
        for M, K in views.shapes(doc, study):
            found = views.rows(doc, study, M=M, K=K, ok=True)
            kinds = views.by_kind(found)
            torch_row, ceiling, gemv = kinds.get("torch_matmul"), kinds.get("read_ceiling"), kinds.get("dispatch")
            for r in found:
                out.append({
                    "M": M, "K": K, "study": study,
                    "kernel": {"dispatch": "gemv", "torch_matmul": "torch.matmul",
                               "read_ceiling": "read ceiling"}.get(r["kind"], r["stage"]),
                    "block": r["block"], "variant": r["variant"], "ms": r["ms"], "q25_ms": r["q25_ms"],
                    "q75_ms": r["q75_ms"], "GBps": r["GBps"],
                    "vs_torch": torch_row["ms"] / r["ms"] if torch_row else None,
                    "vs_ceiling": r["GBps"] / ceiling["GBps"] if ceiling else None,
                    "chosen": gemv["chosen"] if gemv else None, "rel_err": r["rel_err"],
                    "source": doc["source"], "gpu": doc["machine"]["gpu"]})
    return out


def format_shapes(doc: dict, kernels=("gemv", "torch.matmul", "read ceiling")) -> str:
    """The shapes table: per shape, the chosen kernel and each kernel's time, vs torch and vs
    the read ceiling's bandwidth."""
    rows = [r for r in shape_rows(doc) if kernels is None or r["kernel"] in kernels]
    lines = [f"{'M':>9}{'K':>11}  {'kernel':<14}{'ms':>9}{'GB/s':>8}{'vs torch':>10}{'vs ceiling':>12}  chosen"]
    last = None
    for r in rows:
        shape = (r["M"], r["K"])
        lines.append(f"{r['M'] if shape != last else '':>9}{r['K'] if shape != last else '':>11}  {r['kernel']:<14}"
                     f"{r['ms']:>9.4f}{r['GBps']:>8.0f}{r['vs_torch'] or 0:>9.2f}x{r['vs_ceiling'] or 0:>12.3f}  "
                     + (r["chosen"] if r["kernel"] == "gemv" else ""))
        last = shape
    lines.append(f"source: {schema.label(doc)}; vs ceiling compares bandwidth (bytes moved / time)")
    return "\n".join(lines)
