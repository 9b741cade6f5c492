"""Cells of notebooks 01 to 04: predictions, measurements and the tables that compare them."""

from __future__ import annotations

import torch

from .. import results
from ..gpu import occupancy
from ..kernels import get_stage
from ..measure import model
from ..results.table import format_table, step_verdict
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
          f"{'last wave':>11}{'warps/SM':>10}{'of max':>8}")
    for block in (32, 64, 128, 256, 512, 1024):
        o = st.occupancy(block, variant, limits)
        r = occupancy.residency(o, st.grid(M, block, variant or 0), sms)
        last = f"{r.last_wave_fill:.0%}" if r.waves > 1 else (f"{r.busy_sms} SMs" if r.busy_sms < sms
                                                              else f"{r.last_wave_fill:.0%}")
        print(f"{block:>6}{o.blocks_per_sm:>11}{o.warps_per_sm:>10}  {o.limiter:<11}  {r.grid:>7}{r.waves:>7}"
              f"{last:>11}{r.warps_per_sm:>10.1f}{r.occupancy:>8.0%}")
    print(f"blocks/SM, warps/SM: the most that fit on one SM. waves: grid / (blocks/SM x {sms} SMs), rounded up. "
          "last wave: the share of its slots in use.\nwarps/SM of the grid: resident in the first wave, averaged "
          f"over all {sms} SMs; of max: that over the SM's {limits.max_threads // 32} warp slots.")


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


STEP_LABELS = {("vectorized", None): "3  stage 3", ("warp_shuffle_l1", 1): "4a + shuffle reduction",
               ("warp_shuffle_l1", 2): "4b + 2 loads in flight", ("warp_shuffle", 2): "4  + A past the L1"}


def steps_table(doc: dict, M: int) -> None:
    """Stage 3, then stage 4's changes one at a time, at each block size measured, in two runs timed
    minutes apart: medians and quartiles, and each step against the one above: real when it repeats
    beyond both timings' quartiles in both runs, else a tie."""
    runs = [results.steps(doc, M=M, study=s) for s in ("steps", "steps_repeat")]
    runs = [r for r in runs if r]
    if not runs:
        print(f"no steps study at M = {M} in this results file")
        return
    K = runs[0][0]["K"]
    print(f"M = {M:,}, K = {K:,}: median ms [quartiles] in {len(runs)} run(s); each step against the one above  "
          f"[{results.label(doc)}]")
    for block in sorted({r["block"] for r in runs[0]}):
        prev = None
        print(f"  block {block}")
        for r in (r for r in runs[0] if r["block"] == block):
            same = [next(x for x in run if (x["stage"], x["block"], x["variant"]) == (r["stage"], block, r["variant"]))
                    for run in runs]
            label = STEP_LABELS.get((r["stage"], r["variant"]), r["stage"])
            times = "  ".join(f"{x['ms']:.3f} [{x['q25_ms']:.3f} {x['q75_ms']:.3f}]" for x in same)
            print(f"    {label:<24}{times}  {step_verdict(prev, same) if prev else ''}")
            prev = same


def warps_table(doc: dict) -> None:
    """Stage 2's two changes apart, at the headline shape: stage 1 (64 warps, scattered loads), stage
    2's coalesced loads with the same 64 warps, and stage 2 (one warp per row: M warps), each step
    judged against the one above; beside each, the warps and the bytes one warp keeps in flight."""
    found = results.rows(doc, "warps", ok=True)
    if not found:
        print("no warps study in this results file")
        return
    names = {"naive": "stage 1", "few_warps": "stage 2's loads, stage 1's warps", "coalesced": "stage 2"}
    inputs = model.machine_inputs(doc)
    print(f"{'':<34}{'block':>6}{'warps':>7}{'bytes in flight per warp':>26}{'model ms':>10}{'ms [quartiles]':>24}"
          f"  step  [{results.label(doc)}]")
    prev = None
    for r in found:
        st = get_stage(r["stage"])
        warps = st.grid(r["M"], r["block"], r["variant"] or st.default) * -(-r["block"] // 32)
        predicted = model.predict(st, r["M"], r["K"], r["block"], r["variant"], **inputs).ms
        verdict = step_verdict([prev], [r]) if prev else ""
        print(f"{names.get(r['stage'], r['stage']):<34}{r['block']:>6}{warps:>7,}"
              f"{model.traffic(st).bytes_in_flight:>26,}{predicted:>10.1f}{r['ms']:>11.3f} "
              f"[{r['q25_ms']:.3f} {r['q75_ms']:.3f}]  {verdict}")
        prev = r
