"""Plots from a results document (live or recorded); each is labelled with where its numbers come from."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .. import results
from ..measure.timing import bytes_moved, gbps
from ..results.table import stage_table

STAGE_COLOR = {"naive": "#bbbbbb", "coalesced": "#8fb3d9", "vectorized": "#4f8fce",
               "warp_shuffle": "#1f5fa8", "multirow": "#7a3fa0", "torch.matmul": "#e07b39"}


def _ceiling_lines(ax, doc, ceiling_GBps, horizontal=False):
    peak = doc["machine"].get("datasheet_GBps")
    line = ax.axhline if horizontal else ax.axvline
    if ceiling_GBps:
        line(ceiling_GBps, color="black", ls="--", lw=1.2, label=f"read ceiling, measured ({ceiling_GBps:.0f} GB/s)")
    if peak:
        line(peak, color="black", ls=":", lw=1.2, label=f"datasheet peak ({peak} GB/s)")


def _gbps_err(r: dict, nbytes: float) -> tuple[float, float]:
    """Error bar (below, above) in GB/s from a row's quartiles of time."""
    if r.get("q25_ms") is None or r.get("q75_ms") is None:
        return 0.0, 0.0
    g = r["GBps"]
    return g - gbps(nbytes, r["q75_ms"]), gbps(nbytes, r["q25_ms"]) - g


def plot_stages(doc: dict, upto: int | None = None, ax=None):
    """GB/s of every stage so far at the headline shape, with error bars from the quartiles,
    beside torch.matmul, the measured read ceiling and the datasheet peak. Values are written
    inside their bars; the legend sits below the axes, clear of bars, labels and lines."""
    table = stage_table(doc, upto)
    head = results.headline(doc)
    M, K = doc["headline"]["M"], doc["headline"]["K"]
    nbytes = bytes_moved(M, K)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.55 * (len(table) + 1) + 2.2))
    rows = [r for r in head["stages"] if any(t["stage"] == r["stage"] for t in table)]
    names = [f"{t['number']} {t['stage']}" for t in table]
    colors = [STAGE_COLOR.get(t["stage"], "#4f8fce") for t in table]
    if head["torch"]:
        rows.append(head["torch"])
        names.append("torch.matmul (cuBLAS)")
        colors.append(STAGE_COLOR["torch.matmul"])
    values = [r["GBps"] for r in rows]
    errs = [_gbps_err(r, nbytes) for r in rows]
    y = list(range(len(names)))[::-1]
    ax.barh(y, values, color=colors, xerr=list(zip(*errs)) if errs else None, capsize=3, ecolor="#333333")
    top = max(values + [doc["machine"].get("datasheet_GBps") or 0, head["ceiling"]["GBps"] if head["ceiling"] else 0])
    for yi, v, r in zip(y, values, rows):
        text = f"{v:.0f} GB/s, {r['ms']:.3g} ms"
        if v > 0.35 * top:  # inside the bar, left-aligned: never over the ceiling lines
            ax.text(top * 0.01, yi, text, va="center", ha="left", fontsize=8, color="white")
        else:
            ax.text(v + top * 0.01, yi, text, va="center", ha="left", fontsize=8)
    ax.set_yticks(y, names)
    ceiling = head["ceiling"]
    _ceiling_lines(ax, doc, ceiling["GBps"] if ceiling else None)
    ax.set_xlim(0, top * 1.05)
    ax.set_xlabel("GB/s (bytes moved / median time; bars: quartiles)")
    ax.set_title(f"GEMV, M = {M}, K = {K} ({nbytes / 1e9:.2f} GB)\n{results.label(doc)}", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28 if len(names) < 4 else -0.18), ncol=2, fontsize=8,
              frameon=False)
    ax.figure.tight_layout()
    return ax.figure


def plot_block_sweep(doc: dict, stage: str, variants=None, mark_block: int | None = None, ax=None, log: bool = False):
    """GB/s against block size at the headline shape, one line per variant (`log`: on a log axis,
    where a factor reads the same at every height)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    sweep = results.block_sweep(doc, stage)
    found = sorted({r["variant"] for r in sweep}, key=lambda v: v or 0)
    for v in (variants or found):
        pts = [r for r in sweep if r["variant"] == v and r["status"] == "ok"]
        if not pts:
            continue
        label = {None: stage, 0: stage}.get(v, f"{v} rows" if stage == "multirow" else f"LOADS = {v}")
        nbytes = bytes_moved(doc["headline"]["M"], doc["headline"]["K"])
        errs = [_gbps_err(r, nbytes) for r in pts]
        ax.errorbar([r["block"] for r in pts], [r["GBps"] for r in pts], yerr=list(zip(*errs)), fmt="o-",
                    capsize=3, label=label)
    head = results.headline(doc)
    _ceiling_lines(ax, doc, head["ceiling"]["GBps"] if head["ceiling"] else None, horizontal=True)
    if head["torch"]:
        ax.axhline(head["torch"]["GBps"], color=STAGE_COLOR["torch.matmul"], lw=1.2,
                   label=f"torch.matmul ({head['torch']['GBps']:.0f} GB/s)")
    if mark_block:
        ax.axvline(mark_block, color="red", alpha=0.4, lw=6)
    ax.set_xscale("log", base=2)
    ax.set_xticks([32, 64, 128, 256, 512, 1024], ["32", "64", "128", "256", "512", "1024"])
    ax.set_xlabel("threads per block")
    ax.set_ylabel("GB/s" + (" (log scale)" if log else ""))
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_title(f"{stage}: block size sweep, M = {doc['headline']['M']}, K = {doc['headline']['K']}\n"
                 f"{results.label(doc)}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.figure.tight_layout()
    return ax.figure


def plot_shapes(doc: dict, stages=("coalesced", "vectorized", "warp_shuffle", "multirow"), ax=None, gemv: bool = False):
    """Each stage's (at its best block), torch.matmul's and, with `gemv`, the dispatcher's bandwidth
    over the read ceiling's, per shape, as the tables print it (bytes of A, B and C over the
    ceiling's bytes of A); error bars from the quartiles."""
    import numpy as np

    shapes = results.shapes(doc)
    names = list(stages) + (["gemv"] if gemv else []) + ["torch.matmul"]
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.2))
    width = 0.8 / len(names)
    x = np.arange(len(shapes))
    for i, name in enumerate(names):
        vals, lo, hi = [], [], []
        for M, K in shapes:
            s = results.shape_summary(doc, M, K)
            r = s["torch"] if name == "torch.matmul" else s.get("gemv") if name == "gemv" else s["stages"].get(name)
            ok = r is not None and r["status"] == "ok" and s["ceiling"]
            v = r["GBps"] / s["ceiling"]["GBps"] if ok else 0
            vals.append(v)  # GB/s goes as 1 / ms: the quartiles of ms bound it
            lo.append(v - v * r["ms"] / r["q75_ms"] if ok and r["q75_ms"] else 0)
            hi.append(v * r["ms"] / r["q25_ms"] - v if ok and r["q25_ms"] else 0)
        ax.bar(x + (i - (len(names) - 1) / 2) * width, vals, width, label=name, yerr=[lo, hi], capsize=2,
               color=STAGE_COLOR.get(name, "#2a9d55"))
    ax.axhline(1.0, color="black", ls="--", lw=1, label="read ceiling")
    ax.set_xticks(x, [f"{M}\nx {K}" for M, K in shapes], fontsize=7)
    ax.set_ylabel("GB/s / read ceiling's (bars: quartiles)")
    ax.set_xlabel("M x K (0 = not supported or not timed)")
    ax.set_title(f"Every shape of the sweep: how close to the read ceiling\n{results.label(doc)}", fontsize=10)
    ax.legend(fontsize=8, ncol=len(names) + 1, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    ax.figure.tight_layout()
    return ax.figure


def plot_dispatch(doc: dict, study: str = "shape_best", ax=None):
    """Per shape: GB/s of gemv (the dispatcher), torch.matmul and the read ceiling (A only), with
    error bars from the quartiles."""
    import numpy as np

    shapes = results.shapes(doc) if study == "shape_best" else results.explorer_shapes(doc)
    kinds = (("dispatch", "gemv", "#2a9d55"), ("torch_matmul", "torch.matmul", STAGE_COLOR["torch.matmul"]),
             ("read_ceiling", "read ceiling (A only)", "#555555"))
    if ax is None:
        _, ax = plt.subplots(figsize=(max(8, 0.9 * len(shapes)), 4.4))
    x = np.arange(len(shapes))
    width = 0.27
    for i, (kind, label, color) in enumerate(kinds):
        vals, lo, hi = [], [], []
        for M, K in shapes:
            r = next((r for r in results.rows(doc, study, kind=kind, M=M, K=K, ok=True)), None)
            nbytes = 4 * M * K if kind == "read_ceiling" else bytes_moved(M, K)
            if r is None:
                vals.append(0), lo.append(0), hi.append(0)
                continue
            e = _gbps_err(r, nbytes)
            vals.append(r["GBps"]), lo.append(e[0]), hi.append(e[1])
        ax.bar(x + (i - 1) * width, vals, width, label=label, color=color, yerr=[lo, hi], capsize=2)
    peak = doc["machine"].get("datasheet_GBps")
    if peak:
        ax.axhline(peak, color="black", ls=":", lw=1, label=f"datasheet peak ({peak} GB/s)")
    ax.set_xticks(x, [f"{M}\nx {K}" for M, K in shapes], fontsize=7)
    ax.set_ylabel("GB/s (bars: quartiles)")
    ax.set_xlabel("M x K")
    ax.set_title(f"The dispatcher on every shape of the sweep\n{results.label(doc)}", fontsize=10)
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
    ax.figure.tight_layout()
    return ax.figure
