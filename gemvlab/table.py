"""The stage table, read the way Mark Harris's reduction deck reads: one row per step, its
time and bandwidth, how far from the ceiling, and what it gained over the step before and
over the first."""

from __future__ import annotations

from . import results


def stage_table(doc: dict, upto: int | None = None) -> list[dict]:
    """Headline rows with the derived columns. `upto` keeps stages 1..upto (for the notebooks)."""
    head = results.headline(doc)
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


def _variant(row) -> str:
    if row.get("variant") is None:
        return ""
    return {"warp_shuffle": f", {row['variant']} loads", "multirow": f", {row['variant']} rows"}.get(
        row["stage"], f", {row['variant']}")


def format_table(doc: dict, upto: int | None = None) -> str:
    """The stage table as text, with torch.matmul, the read ceiling and where numbers come from."""
    table = stage_table(doc, upto)
    head = results.headline(doc)
    lines = [f"{'stage':<31}{'ms':>9}{'GB/s':>8}{'of ceiling':>12}{'step':>8}{'cumul.':>9}"
             f"{'vs torch':>10}{'rel. error':>12}"]

    def fmt(x, spec, suffix=""):
        return "" if x is None else format(x, spec) + suffix

    for t in table:
        name = f"{t['number']} {t['stage']} ({t['block']}{_variant(t)})"
        lines.append(f"{name:<31}{t['ms']:>9.3f}{t['GBps']:>8.0f}{fmt(t['vs_ceiling'], '.3f'):>12}"
                     f"{fmt(t['step_speedup'], '.2f', 'x'):>8}{t['cumulative_speedup']:>8.1f}x"
                     f"{fmt(t['vs_torch'], '.2f', 'x'):>10}{t['rel_err']:>12.1e}")
    for key, name in (("torch", "torch.matmul (cuBLAS)"), ("ceiling", "read ceiling (A only)")):
        r = head[key]
        if r:
            vs = head["ceiling"]["ms"] / r["ms"] if head["ceiling"] else None
            err = "" if r["rel_err"] is None else f"{r['rel_err']:.1e}"
            lines.append(f"{name:<31}{r['ms']:>9.3f}{r['GBps']:>8.0f}{fmt(vs, '.3f'):>12}"
                         f"{'':>8}{'':>9}{'':>10}{err:>12}")
    M, K = doc["headline"]["M"], doc["headline"]["K"]
    peak = doc["machine"].get("datasheet_GBps")
    lines.append(f"M = {M}, K = {K}: {4 * (M * K + K + M) / 1e9:.3f} GB moved; median of >= "
                 f"{doc['timer']['min_launches']} launches ({doc['timer']['name']})"
                 + (f"; datasheet peak {peak} GB/s" if peak else ""))
    lines.append(f"source: {results.label(doc)}")
    return "\n".join(lines)


def json_rows(doc: dict) -> list[dict]:
    """The headline rows for `python -m gemvlab table --json`."""
    keep = ("stage", "number", "M", "K", "block", "variant", "ms", "GBps", "rel_err", "vs_ceiling",
            "vs_torch", "step_speedup", "cumulative_speedup", "source", "gpu", "date")
    return [{k: t[k] for k in keep} for t in stage_table(doc)]
