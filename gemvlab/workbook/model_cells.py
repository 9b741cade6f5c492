"""Cells that put the model beside the measurement: its one-line prediction, made before the
measurement is shown, its working, its numbers block size by block size, and the look-back."""

from __future__ import annotations

from .. import results
from ..kernels import get_stage
from ..measure import model
from ..results.studies import BLOCKS, HEADLINE_VARIANTS
from ..results.table import stage_table
from .context import Context


def candidates(stage) -> list[tuple[int, int | None]]:
    """(block, variant) pairs the model chooses among: the block sizes and variants the record sweeps."""
    st = get_stage(stage)
    variants = HEADLINE_VARIANTS.get(st.name, (st.default if st.template else None,))
    return [(b, v) for b in BLOCKS for v in variants if st.block_rule != "power of two" or b & (b - 1) == 0]


def _predictions(ctx: Context, st) -> list[model.Prediction]:
    M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
    inputs = model.machine_inputs(ctx.doc)
    return [model.predict(st, M, K, b, v, **inputs) for b, v in candidates(st)]


def best_prediction(ctx: Context, stage, predictions: list | None = None) -> model.Prediction:
    """The model's fastest configuration of a stage at the headline shape, chosen by the model alone
    (not by a measurement), kept in ctx.predictions for the look-back. Among equal times: the fewest
    loads per trip, then the smallest block. `predictions`: _predictions' list, if made already."""
    st = get_stage(stage)
    p = min(predictions or _predictions(ctx, st), key=lambda p: (p.ms, p.variant or 0, p.block))
    ctx.predictions[st.name] = p
    return p


#: Predictions within this fraction of the fastest are a tie.
TIE = 0.002


def predict_line(ctx: Context, stage, working: bool = False) -> None:
    """The model's prediction in one line: its time, at the configuration it finds fastest (or how
    many configurations tie there), and the term that sets it; with `working`, the model's working
    for that configuration (occupancy, the grid, bytes in flight, each wave)."""
    st = get_stage(stage)
    predictions = _predictions(ctx, st)
    p = best_prediction(ctx, st, predictions)
    ties = sum(q.ms <= p.ms * (1 + TIE) for q in predictions) - 1
    several = len({q.variant for q in predictions}) > 1  # the variant is part of the pick
    what = f"{p.block} threads" + (f", {st.variant_name} {p.variant}" if st.template and several else "")
    pick = f"{ties} other configurations get the same time" if ties else "its fastest"
    print(f"model: {p.ms:.3f} ms at {what} ({pick}), bound by {p.bound}  [{ctx.label}]")
    if working:
        print(p.describe())


def sweep_model(ctx: Context, stage, variant=None) -> None:
    """The model against the recorded block-size sweep: per block size, the busy SMs, resident warps,
    bytes in flight, the term that binds, the model's and the measured time."""
    st = get_stage(stage)
    doc = ctx.recorded
    M, K = doc["headline"]["M"], doc["headline"]["K"]
    inputs = model.machine_inputs(doc)
    sweep = results.block_sweep(doc, st.name)
    what = st.kernel_name(variant) if st.template else st.name
    print(f"{what}, M = {M:,}, K = {K:,}  [model and measurement: {results.label(doc)}]")
    print(f"{'block':>6}{'SMs busy':>9}{'warps/SM':>9}{'in flight':>12}  {'model bound':<16}{'model ms':>9}"
          f"{'measured':>10}{'ratio':>7}")
    for block in BLOCKS:
        p = model.predict(st, M, K, block, variant, **inputs)
        r = next((r for r in sweep if r["block"] == block and r["variant"] == (variant if st.template else None)), None)
        w = p.waves[0] if p.waves else None
        line = (f"{block:>6}{p.res.busy_sms:>9}{(p.res.first_wave_warps_per_sm if w else 0):>9.1f}"
                f"{(w.in_flight_bytes / 2**20 if w else 0):>8.2f} MiB  {p.bound:<16}{p.ms:>9.3f}")
        if r and r["status"] == "ok":
            line += f"{r['ms']:>10.3f}{r['ms'] / p.ms:>7.2f}"
        print(line)


def look_back(ctx: Context, upto: int) -> None:
    """Each stage's prediction (the model's own fastest configuration, made before the measurement
    was shown), the measurement (at the configuration it found fastest), the model at that same
    configuration, their ratio, and the term that set the model's time there."""
    inputs = model.machine_inputs(ctx.doc)
    M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
    print(f"{'stage':<15}{'predicted (its pick)':>22}{'measured (its pick)':>22}{'model there':>13}{'ratio':>7}  "
          f"model bound by  [{ctx.label}]")
    for t in stage_table(ctx.doc, upto):
        own = ctx.predictions.get(t["stage"]) or best_prediction(ctx, t["stage"])
        at = model.predict(t["stage"], M, K, t["block"], t["variant"], **inputs)
        print(f"{t['number']} {t['stage']:<13}{own.ms:>14.3f} ({own.block:>4}){t['ms']:>14.3f} ({t['block']:>4})"
              f"{at.ms:>13.3f}{t['ms'] / at.ms:>7.2f}  {at.bound}")


def l1_fit(doc: dict) -> None:
    """A fit, not a prediction: for the naive sweep's large blocks, the cache lines each busy SM
    looked up per SM clock. Each float of A read is one line lookup (32 lanes, 32 rows: 32 lines
    per load instruction), and B adds one line per instruction: M * K * (1 + 1/32) lookups in all."""
    M, K = doc["headline"]["M"], doc["headline"]["K"]
    clock = doc["machine"]["memory"]["sm_clock_mhz"] * 1e6
    lookups = M * K * (1 + 1 / 32)
    for r in results.block_sweep(doc, "naive"):
        if r["status"] != "ok" or r["block"] < 256:
            continue
        busy = -(-M // r["block"])
        rate = lookups / busy / (r["ms"] * 1e-3) / clock
        print(f"block {r['block']:>4}: {busy} busy SMs, {r['ms']:.1f} ms: fit {rate:.2f} lines per SM per clock  "
              f"[{results.label(doc)}]")


def bandwidth_points(ctx: Context, upto: int) -> dict:
    """label -> (bytes in flight per SM in the model's first wave, measured GB/s) per stage, for
    pictures.littles_law."""
    inputs = model.machine_inputs(ctx.doc)
    M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
    out = {}
    for t in stage_table(ctx.doc, upto):
        p = model.predict(t["stage"], M, K, t["block"], t["variant"], **inputs)
        if p.waves:
            out[f"{t['number']} {t['stage']}"] = (p.waves[0].in_flight_bytes / inputs["sms"], t["GBps"])
    return out
