"""Cells of notebooks 01 to 04: predictions, measurements and the tables that compare them."""

from __future__ import annotations

import torch

from .. import results
from ..gpu import occupancy
from ..kernels import get_stage
from ..measure import model
from ..measure.bench import bytes_moved
from ..results.table import format_table, stage_table, step_verdict
from .context import Context, sm_limits


def occupancy_table(stage, variant=None, limits: occupancy.SMLimits | None = None, M: int = 2048,
                    sms: int | None = None, recorded: dict | None = None) -> None:
    """For every block size: what the occupancy calculator allows (blocks and warps per SM, and
    the limiter) and what a grid for M rows really leaves on the SMs (waves, the last wave's fill,
    resident warps per SM), on the recorded GPU (or this one)."""
    st = get_stage(stage)
    res = st.build().resources[st.kernel_name(variant)]
    doc = recorded or results.load()
    limits = limits or sm_limits(doc)
    sms = sms or (torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available()
                  else doc["machine"]["sm_count"])
    print(f"{st.kernel_name(variant)}: {res.registers} registers/thread, {res.shared_bytes} B static shared"
          + (f" + {st.shared_per_thread} B/thread dynamic" if st.shared_per_thread else "")
          + f"; SM limits of compute capability {limits.compute_capability}, {sms} SMs, M = {M:,} rows")
    print(f"{'':>6}{'the occupancy calculator':^34}  {'what the grid leaves':^44}")
    print(f"{'block':>6}{'blocks/SM':>11}{'warps/SM':>10}  {'limited by':<11}  {'grid':>7}{'waves':>7}"
          f"{'last wave':>11}{'warps/SM':>10}{'of max':>8}   (warps/SM of the grid: first wave, all SMs)")
    for block in (32, 64, 128, 256, 512, 1024):
        o = st.occupancy(block, variant, limits)
        r = occupancy.residency(o, st.grid(M, block, variant or 0), sms)
        last = f"{r.last_wave_fill:.0%}" if r.waves > 1 else (f"{r.busy_sms} SMs" if r.busy_sms < sms
                                                              else f"{r.last_wave_fill:.0%}")
        print(f"{block:>6}{o.blocks_per_sm:>11}{o.warps_per_sm:>10}  {o.limiter:<11}  {r.grid:>7}{r.waves:>7}"
              f"{last:>11}{r.warps_per_sm:>10.1f}{r.occupancy:>8.0%}")


def predict(ctx: Context, stage, block: int | None = None, variant: int | None = None, M: int | None = None,
            K: int | None = None) -> None:
    """The model's prediction for a stage at the configuration the stage table runs it at (or the
    given one), printed with its working; at the table's configuration, kept for the look-back.
    Prints rather than returns, so that a cell shows the working and not the object."""
    p = prediction(ctx, stage, block, variant, M, K)
    print(p.describe() + f"  [{ctx.label}]")


def prediction(ctx: Context, stage, block: int | None = None, variant: int | None = None, M: int | None = None,
               K: int | None = None) -> model.Prediction:
    """The Prediction that `predict` prints (kept in ctx.predictions at the table's configuration)."""
    table_config = block is None and variant is None and M is None and K is None
    st = get_stage(stage)
    row = next((r for r in results.headline(ctx.doc)["stages"] if r["stage"] == st.name), None)
    block = block or (row["block"] if row else st.default_block)
    if variant is None and st.variant_name:
        variant = row["variant"] if row and row["variant"] is not None else st.default
    M = M or ctx.doc["headline"]["M"]
    K = K or ctx.doc["headline"]["K"]
    p = model.predict(st, M, K, block, variant, **model.machine_inputs(ctx.doc))
    if table_config:
        ctx.predictions.setdefault(st.name, p)
    return p


def sweep_model(ctx: Context, stage, variant=None, blocks=(32, 64, 128, 256, 512, 1024)) -> None:
    """The model against the recorded block-size sweep: per block size, the resident warps, the
    bytes in flight, the term that binds, the predicted and the measured time."""
    st = get_stage(stage)
    doc = ctx.recorded
    M, K = doc["headline"]["M"], doc["headline"]["K"]
    inputs = model.machine_inputs(doc)
    sweep = results.block_sweep(doc, st.name)
    what = st.kernel_name(variant) if st.variant_name else st.name
    print(f"{what}, M = {M:,}, K = {K:,}  [model and measurement: {results.label(doc)}]")
    print(f"{'block':>6}{'SMs busy':>9}{'warps/SM':>9}{'waves':>6}{'in flight':>12}  {'model bound':<16}"
          f"{'model ms':>9}{'measured':>10}{'ratio':>7}{'implied latency':>17}")
    for block in blocks:
        p = model.predict(st, M, K, block, variant, **inputs)
        r = next((r for r in sweep if r["block"] == block and r["variant"] == (variant if st.variant_name else None)), None)
        measured = r["ms"] if r and r["status"] == "ok" else None
        w = p.waves[0] if p.waves else None
        busy = p.res.busy_sms
        line = (f"{block:>6}{busy:>9}{(p.res.first_wave_warps_per_sm if w else 0):>9.1f}{len(p.waves):>6}"
                f"{(w.in_flight_bytes / 2**20 if w else 0):>8.2f} MiB  {p.bound:<16}{p.ms:>9.3f}")
        if measured:
            # Little's law run backwards: the latency at which the first wave's bytes in flight
            # would give the measured bandwidth.
            implied = w.in_flight_bytes / (bytes_moved(M, K) / (measured * 1e-3)) * 1e9
            line += f"{measured:>10.3f}{measured / p.ms:>7.2f}{implied:>13.0f} ns"
        print(line)


def correctness(ctx: Context, stage, tol: float = 1e-5) -> None:
    """The stage's relative error against float64 at the headline shape, from the table's run."""
    st = get_stage(stage)
    r = next(r for r in results.headline(ctx.doc)["stages"] if r["stage"] == st.name)
    config = f"block {r['block']}" + ("" if r["variant"] is None else f", {st.variant_name} {r['variant']}")
    verdict = "PASS" if r["rel_err"] < tol else "above"
    print(f"{st.name} ({config}), M = {r['M']}, K = {r['K']}: relative error {r['rel_err']:.1e} against "
          f"float64 ({verdict} {tol:.0e}); fresh torch.rand inputs, output filled with NaN first  [{ctx.label}]")


def table(ctx: Context, upto: int) -> None:
    print(format_table(ctx.doc, upto))


def sweep_table(doc: dict, stage, variants=None) -> None:
    """The recorded block-size sweep of one stage: ms and GB/s at each block size (and variant)."""
    st = get_stage(stage)
    rows = results.block_sweep(doc, st.name)
    found = sorted({r["variant"] for r in rows}, key=lambda v: v or 0)
    blocks = sorted({r["block"] for r in rows})
    label = {"warp_shuffle": "loads", "multirow": "rows"}.get(st.name, "")
    print(f"{st.name}, M = {doc['headline']['M']}, K = {doc['headline']['K']}: median ms ± half the interquartile "
          f"range, by block size  [{results.label(doc)}]")
    print(f"{'':>9}" + "".join(f"{b:>15}" for b in blocks))
    for v in (variants or found):
        cells = []
        for b in blocks:
            r = next((r for r in rows if r["variant"] == v and r["block"] == b), None)
            cells.append("" if r is None else (f"{r['ms']:.3f}±{(r['q75_ms'] - r['q25_ms']) / 2:.3f}"
                                               if r["status"] == "ok" else r["status"]))
        name = f"{v} {label}" if v is not None else st.name[:9]
        print(f"{name:>9}" + "".join(f"{c:>15}" for c in cells))


def shapes_table(doc: dict, stages=("coalesced", "vectorized", "warp_shuffle", "multirow")) -> None:
    """Per shape of the sweep: each stage's best time (round-robin re-timed) against the ceiling
    and torch.matmul."""
    print(f"{'M x K':>20}{'ceiling':>9}{'torch':>9}" + "".join(f"{s:>14}" for s in stages)
          + f"   [{results.label(doc)}; ms at each stage's best block]")
    for M, K in results.shapes(doc):
        s = results.shape_summary(doc, M, K)
        cells = []
        for name in stages:
            r = s["stages"].get(name)
            if r is None or r["status"] != "ok":
                cells.append("n/a" if r is None else r["status"][:11])
            else:
                cells.append(f"{r['ms']:.3f}" + (f"/{r['variant']}" if name == "multirow" else ""))
        ceil = f"{s['ceiling']['ms']:.3f}" if s["ceiling"] else "n/a"
        tor = f"{s['torch']['ms']:.3f}" if s["torch"] else "n/a"
        print(f"{f'{M} x {K}':>20}{ceil:>9}{tor:>9}" + "".join(f"{c:>14}" for c in cells))


def look_back(ctx: Context, upto: int) -> None:
    """Each stage's prediction (made by the model before the measurement was shown) beside the
    measurement, the ratio, and the term of the model that set the prediction."""
    table = {t["stage"]: t for t in stage_table(ctx.doc, upto)}
    print(f"{'stage':<24}{'predicted':>10}{'measured':>10}{'measured/predicted':>20}  model bound by  [{ctx.label}]")
    for name, t in table.items():
        p = ctx.predictions.get(name) or prediction(ctx, name)
        config = f"{t['number']} {name} ({t['block']}" + ("" if t["variant"] is None else f", {t['variant']}") + ")"
        print(f"{config:<24}{p.ms:>10.3f}{t['ms']:>10.3f}{t['ms'] / p.ms:>20.2f}  {p.bound}")


def serial_vs_tree_sum(K: int = 2**20, seed: int = 0) -> None:
    """Why one thread's running sum loses accuracy: the same K products summed in float32 one
    after another, and as a tree (pairwise), against float64. Runs on the CPU."""
    import numpy as np

    g = torch.Generator().manual_seed(seed)
    a, b = torch.rand(K, generator=g).numpy(), torch.rand(K, generator=g).numpy()
    prod = a * b  # float32 products
    exact = float(np.dot(a.astype(np.float64), b.astype(np.float64)))
    serial = float(np.cumsum(prod, dtype=np.float32)[-1])  # left to right, like one thread
    tree = prod.copy()
    while tree.size > 1:  # pairwise: like a block's reduction tree
        if tree.size % 2:
            tree = np.append(tree, np.float32(0))
        tree = tree[0::2] + tree[1::2]
    print(f"{K:,} products of torch.rand numbers, summed in float32 (CPU, seed {seed}):")
    print(f"  one after another: relative error {abs(serial - exact) / exact:.1e}")
    print(f"  as a tree:         relative error {abs(float(tree[0]) - exact) / exact:.1e}")


def spread(ctx: Context, upto: int = 5) -> None:
    """Median and quartiles of each headline row: how far apart two versions must be to differ."""
    head = results.headline(ctx.doc)
    rows = [r for r in head["stages"] if r["number"] <= upto] + [head["torch"], head["ceiling"]]
    print(f"{'':<16}{'median':>9}{'quartiles':>20}{'launches':>10}   [{ctx.label}]")
    for r in filter(None, rows):
        print(f"{r['stage']:<16}{r['ms']:>9.3f}{r['q25_ms']:>11.3f} - {r['q75_ms']:.3f}{r['n']:>10}")


STEP_LABELS = {("vectorized", None): "3  stage 3", ("warp_shuffle_l1", 1): "4a + shuffle reduction",
               ("warp_shuffle_l1", 2): "4b + 2 loads in flight", ("warp_shuffle", 2): "4  + A past the L1"}


def steps_table(doc: dict, M: int) -> None:
    """Stage 3, then stage 4's changes one at a time, at each block size measured: median,
    quartiles, and each step against the one before, called a tie when their quartiles overlap."""
    rows = results.steps(doc, M=M)
    if not rows:
        print(f"no steps study at M = {M} in this results file")
        return
    K = rows[0]["K"]
    drift = results.run_drift(doc)
    print(f"M = {M:,}, K = {K:,}: median ms [quartiles], each step against the one above  [{results.label(doc)}]")
    for block in sorted({r["block"] for r in rows}):
        prev = None
        print(f"  block {block}")
        for r in (r for r in rows if r["block"] == block):
            label = STEP_LABELS.get((r["stage"], r["variant"]), r["stage"])
            verdict = ""
            if prev:
                verdict = step_verdict(prev, r, drift)
            print(f"    {label:<24}{r['ms']:>9.3f} [{r['q25_ms']:.3f} {r['q75_ms']:.3f}]  {verdict}")
            prev = r


def sweep_span(doc: dict, stage, variant=None) -> None:
    """The recorded block-size sweep's fastest and slowest times, and their ratio."""
    st = get_stage(stage)
    rows = [r for r in results.block_sweep(doc, st.name) if r["status"] == "ok"
            and r["variant"] == (variant if st.variant_name else None)]
    fast, slow = min(rows, key=lambda r: r["ms"]), max(rows, key=lambda r: r["ms"])
    print(f"{st.name}: {fast['ms']:.1f} ms at block {fast['block']} to {slow['ms']:.1f} ms at block {slow['block']}: "
          f"{slow['ms'] / fast['ms']:.1f} times  [{results.label(doc)}]")


def l1_fit(doc: dict) -> None:
    """For the naive sweep's large blocks: cache lines the busy SMs' L1s looked up per SM clock.
    Each float of A read is one line lookup (32 lanes, 32 rows: 32 lines per load instruction),
    and B adds one line per instruction: M * K * (1 + 1/32) lookups in all."""
    M, K = doc["headline"]["M"], doc["headline"]["K"]
    clock = doc["machine"]["memory"]["sm_clock_mhz"] * 1e6
    lookups = M * K * (1 + 1 / 32)
    for r in results.block_sweep(doc, "naive"):
        if r["status"] != "ok" or r["block"] < 256:
            continue
        busy = -(-M // r["block"])
        rate = lookups / busy / (r["ms"] * 1e-3) / clock
        print(f"block {r['block']:>4}: {busy} busy SMs, {lookups / busy / 1e9:.2f} G lookups each in {r['ms']:.1f} ms: "
              f"{rate:.2f} lines per SM clock ({clock / 1e6:.0f} MHz, the clock measured in the latency kernel, "
              f"assumed for the sweep)  [{results.label(doc)}]")


def compare_rows(doc: dict, a: str, b: str) -> None:
    """Two rows of the headline table side by side with their quartiles, and the verdict."""

    head = results.headline(doc)
    rows = {r["stage"]: r for r in head["stages"]}  # stage names, and the two references by name
    rows.update({"torch.matmul": head["torch"], "read ceiling": head["ceiling"]})
    ra, rb = rows[a], rows[b]
    print(f"{ra['stage']}: {ra['ms']:.3f} ms [{ra['q25_ms']:.3f} {ra['q75_ms']:.3f}];  {rb['stage']}: "
          f"{rb['ms']:.3f} ms [{rb['q25_ms']:.3f} {rb['q75_ms']:.3f}];  {rb['stage']} against {ra['stage']}: "
          f"{step_verdict(ra, rb, results.run_drift(doc))}  [{results.label(doc)}]")


def twice(doc: dict) -> None:
    """Kernels the record timed twice at the headline shape, minutes apart in one run (the stage
    table, then the shape sweep): how far a median moves between runs, against the quartiles
    within one."""
    first, again = results.timed_twice(doc)
    print(f"{'':<16}{'stage table':>26}{'shape sweep':>26}{'moved':>8}   [{results.label(doc)}]")
    for name, a in first.items():
        b = again[name]
        print(f"{name:<16}{a['ms']:>9.3f} [{a['q25_ms']:.3f}-{a['q75_ms']:.3f}]{b['ms']:>9.3f} "
              f"[{b['q25_ms']:.3f}-{b['q75_ms']:.3f}]{(b['ms'] / a['ms'] - 1):>+8.1%}")
    drift = results.run_drift(doc)
    if drift is not None:
        print(f"the ratio between two of gemvlab's kernels (or the read ceiling) moved by up to {drift:.2%} "
              f"between the two")
        tight = results.run_drift(doc, max_spread=0.01)
        if tight is not None and tight < drift:
            print(f"among those whose quartiles are under 1% wide in both timings, by up to {tight:.2%}")


def naive_with_thread_latency(ctx: Context) -> None:
    """The naive stage's prediction with one thread's latency in place of a warp's scattered load:
    what the model would say without the warp chase, against the measurement."""
    inputs = dict(model.machine_inputs(ctx.doc), warp_latency_ns=None)
    t = next(t for t in stage_table(ctx.doc) if t["stage"] == "naive")
    p = model.predict("naive", ctx.doc["headline"]["M"], ctx.doc["headline"]["K"], t["block"], None, **inputs)
    full = ctx.predictions.get("naive") or prediction(ctx, "naive")
    print(f"measured: {t['ms']:.1f} ms  [{ctx.label}]")
    print(f"  one thread's latency, {p.latency_ns:.0f} ns, + L1 time for all {p.l1_lines_timed} lines: round "
          f"{p.round_ns:.0f} ns -> predicted {p.ms:.1f} ms (measured/predicted {t['ms'] / p.ms:.2f}x)")
    print(f"  the warp's latency, {full.latency_ns:.0f} ns, + L1 time for the {full.l1_lines_timed} lines not already "
          f"inside it: round {full.round_ns:.0f} ns -> {full.ms:.1f} ms ({t['ms'] / full.ms:.2f}x)")
    if full.bound == "bytes in flight":  # then the time scales with the round
        bare = full.ms * full.latency_ns / full.round_ns
        print(f"  the warp's latency alone, without the fitted L1 time: {bare:.1f} ms ({t['ms'] / bare:.2f}x)")
