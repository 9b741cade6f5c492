"""Cells of notebook 05: the dispatcher on every shape, its rule for one shape, its misses, and the
cost of a call."""

from __future__ import annotations

import torch

from .. import results
from ..measure import model
from ..measure.accuracy import random_inputs
from ..measure.timing import time_round_robin
from ..results.table import quartiles_overlap
from .context import Context

#: The dispatcher's bar: at least torch.matmul's speed, and, where A and B together are at least
#: L2_TIMES times the L2, at least BW_MARK of the read ceiling's bandwidth.
BW_MARK, L2_TIMES = 0.91, 4


def _big(M: int, K: int, l2: int) -> bool:
    return 4 * (M * K + K) >= L2_TIMES * l2


def _slower(g: dict, t: dict) -> bool:
    """gemv slower than torch.matmul beyond both quartile ranges."""
    return not quartiles_overlap(g, t) and g["ms"] > t["ms"]


def _bw_low(g: dict, c: dict, M: int, K: int, l2: int) -> bool:
    return _big(M, K, l2) and g["GBps"] < BW_MARK * c["GBps"]


def which_kernel(doc: dict) -> None:
    """Per shape of the sweep: the fastest stage, stages 4 and 5 at their best, the dispatcher
    and torch.matmul, as ms and as a fraction of the read ceiling's time."""
    print(f"{'M x K':>20}{'fastest stage in one run (ms, next)':>36}{'stage 4':>10}{'stage 5':>10}{'gemv':>9}{'torch':>9}{'ceiling':>9}"
          f"   [{results.label(doc)}; ms]")
    for M, K in results.shapes(doc):
        s = results.shape_summary(doc, M, K)
        ok = {n: r for n, r in s["stages"].items() if r["status"] == "ok"}
        best = results.best(list(ok.values()))
        cell = lambda r: f"{r['ms']:.3f}" if r and r.get("status") == "ok" else "n/a"
        name = f"{best['stage']} {best['ms']:.3f}" if best else "none"
        tied = [r["stage"] for r in ok.values() if r is not best and quartiles_overlap(r, best)] if best else []
        runner_up = min((r["ms"] for r in ok.values() if r is not best), default=None)
        if tied:  # quartiles overlap: no single fastest
            name = "tie: " + ", ".join([best["stage"], *tied])
        elif runner_up:  # one run: a lead of a few percent is not yet a real step
            name += f" (next {runner_up / best['ms']:.3f}x)"
        print(f"{f'{M} x {K}':>20}{name:>36}{cell(ok.get('warp_shuffle')):>10}{cell(ok.get('multirow')):>10}"
              f"{cell(s.get('gemv')):>9}{cell(s['torch']):>9}{cell(s['ceiling']):>9}")


def dispatch_table(doc: dict, study: str = "shape_best") -> None:
    """The dispatcher on the reference sweep (or the explorer grid): the kernel it chose, its time
    beside torch.matmul and the read ceiling (quartiles in brackets), and the bar it is held to."""
    l2 = doc["machine"]["l2_bytes"]
    shapes = results.shapes(doc) if study == "shape_best" else results.explorer_shapes(doc)
    print(f"{'M':>9}{'K':>11}  {'chosen':<38}{'gemv ms [quartiles]':>24}{'torch.matmul ms [quartiles]':>28}"
          f"{'vs torch':>8}{'of ceiling BW':>14}  bar")
    notes = []
    for M, K in shapes:
        kinds = results.by_kind(results.rows(doc, study, M=M, K=K, ok=True))
        g, t, c = kinds.get("dispatch"), kinds.get("torch_matmul"), kinds.get("read_ceiling")
        if not g:
            continue
        notes += [g["note"]] if g.get("note") and g["note"] not in notes else []  # the dispatcher row's
        vs_t = t["ms"] / g["ms"] if t else None
        vs_c = g["GBps"] / c["GBps"] if c else None
        bar = []
        if t is not None:
            bar.append("tie with torch" if quartiles_overlap(g, t) else "SLOWER than torch" if _slower(g, t) else "torch ok")
        if c is not None and _big(M, K, l2):
            bar.append(f"BW below {BW_MARK}" if _bw_low(g, c, M, K, l2) else "BW ok")
        vs_c_text = f"{vs_c:.3f}" if vs_c is not None else "n/a"
        t_text = f"{t['ms']:.4f} [{t['q25_ms']:.4f}-{t['q75_ms']:.4f}]" if t else "n/a"
        print(f"{M:>9}{K:>11}  {g['chosen'][:37]:<38}{g['ms']:>8.4f} [{g['q25_ms']:.4f}-{g['q75_ms']:.4f}]"
              f"{t_text:>28}{(vs_t or 0):>8.2f}x{vs_c_text:>14}  {', '.join(bar)}")
    print(f"bar: at least torch.matmul's speed (a tie where the quartiles overlap); where A and B together are at "
          f"least {L2_TIMES}x the L2 ({L2_TIMES * l2 / 2**20:.0f} MiB), at least {BW_MARK} of the read ceiling's bandwidth.\nThe ceiling's "
          f"bandwidth counts A alone, gemv's B and C too (as many bytes as A at M = 1, so the ratio can pass 1)  "
          f"[{results.label(doc)}]")
    for note in notes:
        print(f"note: {note}")


def _launch_us(doc: dict) -> float:
    """The model's cost per launch for the dispatcher: the recorded time of its smallest shape
    (gemv at M = 1, K = 128, which moves almost nothing), in us."""
    tiny = results.rows(doc, "explorer", M=1, K=128, kind="dispatch", ok=True)
    return min((r["ms"] for r in tiny), default=0.0) * 1e3


def explain_shape(ctx: Context, M: int, K: int) -> None:
    """What gemv would do for an aligned M x K on this GPU (or the recorded one), the model's time
    for it, and the recorded (or live) times beside torch.matmul."""
    from .. import dispatch

    device = dispatch.Device.of() if ctx.live else dispatch.Device.recorded(ctx.recorded)
    plan = dispatch.choose(M, K, K, 0, 0, device)
    print(plan.describe())
    doc = ctx.recorded
    found = results.rows(doc, "explorer", M=M, K=K, ok=True) or results.rows(doc, "shape_best", M=M, K=K, ok=True)
    launch_us = _launch_us(doc)
    p = model.predict_plan(plan, launch_us=launch_us, **model.machine_inputs(doc))
    if p:
        print(f"model: {p.ms:.4f} ms ({p.bound}; plus {launch_us:.1f} us per launch: the recorded time of the "
              f"smallest shape, gemv at M = 1, K = 128, taken as the cost of a launch)")
    kinds = results.by_kind(found)
    g, t, c = kinds.get("dispatch"), kinds.get("torch_matmul"), kinds.get("read_ceiling")
    if ctx.live:
        A, B = random_inputs(M, K)
        from ..api import gemv

        timed = time_round_robin({"gemv": lambda: gemv(A, B), "torch.matmul": lambda: torch.matmul(A, B)},
                                       rounds=2, warmup_ms=5, rep_ms=20)
        print(f"live: gemv {timed['gemv'].ms:.4f} ms, torch.matmul {timed['torch.matmul'].ms:.4f} ms "
              f"({timed['torch.matmul'].ms / timed['gemv'].ms:.2f}x)  [live on {torch.cuda.get_device_name()}]")
        del A, B
    elif g:
        print(f"recorded: gemv {g['ms']:.4f} ms, torch.matmul {t['ms']:.4f} ms ({t['ms'] / g['ms']:.2f}x)"
              + (f", read ceiling {c['ms']:.4f} ms" if c else "") + f"  [{results.label(doc)}]")
    else:
        print("no recorded time: the record times a fixed grid of shapes, and this is not one (on a GPU this cell "
              "times it live)")


def dispatch_look_back(ctx: Context) -> None:
    """The model's time for the plan gemv chose on each shape of the sweep, beside the recorded one."""
    from .. import dispatch

    doc = ctx.recorded
    device = dispatch.Device.recorded(doc)
    inputs = model.machine_inputs(doc)
    launch_us = _launch_us(doc)
    print(f"{'M':>9}{'K':>11}  {'plan':<36}{'model ms':>10}{'measured':>10}{'ratio':>7}  model bound by")
    for M, K in results.shapes(doc):
        g = results.shape_summary(doc, M, K).get("gemv")
        plan = dispatch.choose(M, K, K, 0, 0, device)
        p = model.predict_plan(plan, launch_us=launch_us, **inputs)
        if not g or not p:
            continue
        print(f"{M:>9}{K:>11}  {plan.name[:35]:<36}{p.ms:>10.4f}{g['ms']:>10.4f}{g['ms'] / p.ms:>7.2f}  {p.bound}")
    print(f"({launch_us:.1f} us per launch: the recorded time of gemv at M = 1, K = 128)  [{results.label(doc)}]")


def overhead_table(doc: dict) -> None:
    """What a call costs beyond its kernel (gemvlab.overhead), as recorded."""
    rows = [r for r in doc.get("overhead") or [] if "error" not in r]
    if not rows:
        print("no per-call timing recorded")
        return
    print(f"{'M x K':>13}{'launch alone us':>17}{'gemv call us':>14}{'added us':>10}{'torch.matmul us':>17}"
          f"{'host us/call':>14}   [{results.label(doc)}]")
    for r in rows:
        print(f"{r['M']:>6} x {r['K']:<5}{r['kernel_us']:>17.1f}{r['gemv_us']:>14.1f}{r['added_us']:>10.1f}"
              f"{r['torch_us']:>17.1f}{r['host_us_per_call']:>14.1f}")
    print("launch alone, gemv call, torch.matmul: CUDA events around each, started on an idle GPU (the L2 flush "
          "before it done);\nadded us: the median of the differences between a gemv call and the launch alone timed "
          "just before it (not the difference of the two medians);\nhost us/call: Python's time per gemv call, with calls queued back to back")
    for note in dict.fromkeys(r["note"] for r in rows if r.get("note")):
        print(f"note: {note}")


def dispatch_misses(doc: dict) -> None:
    """The shapes (sweep and explorer) where gemv misses its bar: slower than torch.matmul (beyond
    both quartile ranges), or, where A and B together are at least 4x the L2, below 0.91 of the read
    ceiling's bandwidth."""
    l2 = doc["machine"]["l2_bytes"]
    seen, found = set(), []
    for study in ("shape_best", "explorer"):
        for r in results.rows(doc, study, kind="dispatch", ok=True):
            if (r["M"], r["K"]) in seen:
                continue
            seen.add((r["M"], r["K"]))
            kinds = results.by_kind(results.rows(doc, study, M=r["M"], K=r["K"], ok=True))
            t, c = kinds.get("torch_matmul"), kinds.get("read_ceiling")
            why = []
            if t and _slower(r, t):
                why.append(f"{t['ms'] / r['ms']:.2f}x torch.matmul ({r['ms'] * 1e3:.1f} against {t['ms'] * 1e3:.1f} us, "
                           f"quartiles {r['q25_ms'] * 1e3:.1f}-{r['q75_ms'] * 1e3:.1f} against "
                           f"{t['q25_ms'] * 1e3:.1f}-{t['q75_ms'] * 1e3:.1f})")
            if c and _bw_low(r, c, r["M"], r["K"], l2):
                why.append(f"{r['GBps'] / c['GBps']:.3f} of the read ceiling's bandwidth")
            if why:
                found.append((r["M"], r["K"], r["chosen"], why))
    print(f"{len(found)} of {len(seen)} shapes miss a mark  [{results.label(doc)}]")
    for M, K, chosen, why in found:
        print(f"  M = {M:,}, K = {K:,} ({chosen}): " + "; ".join(why))
