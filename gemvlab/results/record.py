"""Measuring every stage on this GPU and writing it down: ``python -m gemvlab record``.

The record has these studies (see gemvlab.results for the schema):
  block_sweep  every stage at the headline shape, at every block size 32..1024 (powers of two)
               and every compiled variant (loads in flight, rows per block);
  headline     each stage's best configuration from the sweep, timed again round-robin beside
               torch.matmul and the read ceiling: the stage table;
  steps        stage 4 taken apart (stage 3, + shuffle reduction, + loads in flight, + __ldcg)
               at small blocks at the headline shape, and at M = 16 and M = 128, round-robin;
  shapes       the ten shapes of the reference sweep, stages 2 to 5 at a few block sizes;
  shape_best   per shape, each stage's best configuration and the dispatcher (gemv) re-timed
               round-robin beside torch.matmul and the read ceiling;
  explorer     gemv, torch.matmul and the read ceiling on a grid of shapes and on shapes outside
               the sweep (notebook 05's shape explorer and the dispatcher's bar);
and, beside the rows: the memory latency (machine.memory), the kernels torch.matmul launches at
the headline shape (profiles), Nsight Compute counters there (counters), the cost of a gemv
call (overhead) and the pitfall transcripts.
"""

from __future__ import annotations

import datetime as _dt
import platform
import time

import torch

from ..api import gemv
from ..checks import GemvInputError
from ..gpu import occupancy
from ..kernels import build_all
from ..measure import bench, ceiling
from ..measure.accuracy import random_inputs, reference
from ..measure.timing import MIN_LAUNCHES, TIMER
from ..native import toolchain
from ..stages import STAGES, get_stage
from . import schema as results
from . import views
from .studies import (
    BLOCKS,
    HEADLINE,
    HEADLINE_ROUNDS,
    HEADLINE_TIMING,
    HEADLINE_VARIANTS,
    NAIVE_LIMIT_S,
    SHAPE_BLOCKS,
    SHAPE_ROUNDS,
    SHAPE_VARIANTS,
    SHAPES,
    STEP_SHAPES,
    STEPS,
    SWEEP_TIMING,
    WARPS,
    explorer_shapes,
)


def say(*args):
    print(*args, flush=True)


def machine_info() -> dict:
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    driver = toolchain.driver_version() or "unknown"
    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    return {
        "gpu": p.name, "sm_count": p.multi_processor_count, "l2_bytes": p.L2_cache_size,
        "memory_bytes": p.total_memory, "compute_capability": f"{p.major}.{p.minor}", "driver": driver,
        "torch": torch.__version__, "cuda": torch.version.cuda, "nvcc": toolchain.nvcc_version(),
        "triton": triton_version, "python": platform.python_version(),
        "datasheet_GBps": results.DATASHEET_GBPS.get(p.name),
        "sm_limits": occupancy.limits_of_device().as_dict(), "memory": None,
    }


def new_doc(source: str) -> dict:
    return {
        "schema": results.SCHEMA, "source": source,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "seconds": None,
        "machine": machine_info(),
        "timer": {"name": TIMER, "statistic": "median",
                  "min_launches": MIN_LAUNCHES, "l2_flushed": True},
        "headline": {"M": HEADLINE[0], "K": HEADLINE[1]}, "runs": [], "resources": {}, "sass": None,
    }


def row(study, kind, stage, M, K, status="ok", note="", measured: dict | None = None, **fields) -> dict:
    """A row with every key of the schema: the identity given here, the numbers from `measured`
    (a gemvlab.measure.bench measurement) and any other `fields` (block, variant)."""
    out = {k: None for k in results.ROW_KEYS}
    out.update({k: v for k, v in {**(measured or {}), **fields}.items() if k in results.ROW_KEYS})
    number = get_stage(stage).number if kind == "stage" else None
    out.update(study=study, kind=kind, stage=stage, number=number, M=M, K=K,
               status=(measured or {}).get("status", status), note=note)
    return out


def measure(study, stage, A, B, ref, block, variant, **timing) -> dict:
    """One stage configuration as a row: measured, or the reason it cannot run here."""
    st = get_stage(stage)
    M, K = A.shape
    var = variant if st.variant_name else None
    try:
        m = bench.measure_stage(st, A, B, block, variant, ref, **timing)
    except GemvInputError as e:
        status = "does not fit" if "registers" in str(e) else "unsupported"
        return row(study, "stage", st.name, M, K, status, str(e), block=block, variant=var)
    return as_row(study, m)


def as_row(study: str, m: dict) -> dict:
    """A bench measurement as a schema row (the read ceiling's grid goes into the note)."""
    note = ""
    if m["kind"] == "read_ceiling":
        how = "one block per row" if m["variant"] == 0 else f"a grid of {m['variant']} blocks striding over A"
        note = (f"the fastest of {len(ceiling.ceiling_configs(m['M'], m['K']))} read-only passes: {how}, "
                f"{m['block']} threads per block")
        m = {**m, "variant": None}
    elif m["n"] < MIN_LAUNCHES:
        note = f"only {m['n']} launches: each takes {m['ms']:.0f} ms"
    return row(study, m["kind"], m["stage"], m["M"], m["K"], note=note, measured=m)


def compare_study(study, A, B, ref, configs, rounds: int, gemv: bool = False, peers: bool = True,
                  **timing) -> list[dict]:
    """Each stage at its configuration (a dict stage -> (block, variant), or a list of (stage,
    block, variant)), with `gemv` the dispatcher, torch.matmul and the read ceiling, on the same
    inputs, timed round-robin: the rows a stage table and a ranking are read from."""
    cfg = [(name, block, variant) for name, (block, variant) in configs.items()] if isinstance(configs, dict) \
        else list(configs)
    out = [as_row(study, m) for m in bench.compare(A, B, cfg, ref, rounds=rounds, budget_s=30, gemv=gemv,
                                                   peers=peers, **timing)]
    for r in out:
        say(_line(r))
    return out


def naive_blocks(M: int, blocks=BLOCKS) -> list[int]:
    """Block sizes that give different launches of the naive kernel: once one block covers
    all M rows, larger blocks only add idle threads."""
    out = []
    for b in blocks:
        out.append(b)
        if b >= M:
            break
    return out


def naive_launch_seconds(A, B, block) -> float:
    """How long one naive launch on A would take, timed on the first 1/16 of K and scaled
    (one thread per row walks its row serially, so the time is proportional to K)."""
    _M, K = A.shape
    k = max(1024, K // 16)
    a, b = A[:, :k].contiguous(), B[:k].contiguous()
    gemv(a, b, "naive", block)
    torch.cuda.synchronize()
    t = time.perf_counter()
    gemv(a, b, "naive", block)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * K / k


def sweep(study, A, B, ref, variants: dict, blocks=BLOCKS, naive: bool = True, **timing) -> list[dict]:
    M, K = A.shape
    out = []
    for st in STAGES:
        if st.name == "naive" and not naive:
            continue
        if st.name == "naive":
            for block in naive_blocks(M, blocks):
                secs = naive_launch_seconds(A, B, block)
                if secs > NAIVE_LIMIT_S:
                    out.append(row(study, "stage", "naive", M, K, "skipped",
                                   f"one launch would take about {secs:.1f} s (timed on K/16 and scaled); "
                                   f"not timed", block=block))
                else:
                    out.append(measure(study, st, A, B, ref, block, 0, budget_s=30, **timing))
                say(_line(out[-1]))
            continue
        for variant in variants.get(st.name, (st.default,)):
            for block in blocks:
                out.append(measure(study, st, A, B, ref, block, variant, **timing))
                say(_line(out[-1]))
    return out


def _line(r: dict) -> str:
    what = f"{r['stage']:<15} M={r['M']:<8} K={r['K']:<9} block={r['block']} variant={r['variant']}"
    if r.get("chosen"):
        what += f" [{r['chosen']}]"
    if r["status"] != "ok":
        return f"  {what}: {r['status']}"
    err = "" if r["rel_err"] is None else f", err {r['rel_err']:.1e}"
    return f"  {what}: {r['ms']:.4f} ms, {r['GBps']:.0f} GB/s{err}, n={r['n']}"


def best_configs(sweep_rows: list[dict]) -> dict:
    """stage -> (block, variant) of its fastest ok row."""
    out = {}
    for st in STAGES:
        b = views.best([r for r in sweep_rows if r["stage"] == st.name])
        if b:
            out[st.name] = (b["block"], b["variant"] or 0)
    return out


def build_reports(doc: dict) -> None:
    for name, built in build_all().items():
        doc["resources"][name] = {k: {f: getattr(v, f) for f in ("registers", "shared_bytes",
                                  "stack_bytes", "spill_store_bytes", "spill_load_bytes")}
                                  for k, v in built.resources.items()}
        if built.sass is not None:
            doc["sass"] = doc["sass"] or {}
            doc["sass"][name] = {k: {"global_loads": {str(w): n for w, n in v.global_loads.items()},
                                     "local_loads": v.local_loads, "local_stores": v.local_stores,
                                     "shuffles": v.shuffles, "barriers": v.barriers,
                                     "l2_only_loads": v.l2_only_loads}
                                 for k, v in built.sass.items()}


def _try(what: str, fn):
    """Run one of the record's side studies; a failure is written down, not fatal."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the rest of the record is worth keeping
        say(f"  {what} failed: {type(e).__name__}: {e}")
        return {"error": f"{type(e).__name__}: {e}"}


def steps_study(A, B, ref, blocks, study: str = "steps") -> list[dict]:
    """Stage 4 taken apart at one shape: STEPS at each block size, all round-robin together."""
    configs = [(stage, block, variant) for block in blocks for _, stage, variant in STEPS]
    return compare_study(study, A, B, ref, configs, rounds=5, peers=False, warmup_ms=10, rep_ms=80)





def _fresh(M: int, K: int):
    """Fresh inputs and their float64 reference, with the GPU's cache of freed memory emptied first."""
    torch.cuda.empty_cache()
    A, B = random_inputs(M, K)
    return A, B, reference(A, B)


def headline_studies(doc: dict, headline) -> list[dict]:
    """At the headline shape: the block sweep, the stage table, what torch.matmul launches, and stage
    2's two changes taken apart. Returns the sweep's rows (the shape sweep reuses them)."""
    from ..measure import profile

    M, K = headline
    A, B, ref = _fresh(M, K)
    say(f"headline shape M={M} K={K}: block sweep")
    swept = sweep("block_sweep", A, B, ref, HEADLINE_VARIANTS, **SWEEP_TIMING)
    doc["runs"] += swept
    say("headline: best configurations, torch.matmul and the read ceiling, round-robin")
    doc["runs"] += compare_study("headline", A, B, ref, best_configs(swept), HEADLINE_ROUNDS, **HEADLINE_TIMING)
    say("headline: stage 2's two changes apart (coalesced loads, more warps)")
    doc["runs"] += compare_study("warps", A, B, ref, WARPS, rounds=3, peers=False, **SWEEP_TIMING)
    say("headline: the kernels torch.matmul launches (torch.profiler)")
    doc["profiles"] = {"torch.matmul": _try("profile", lambda: {
        "M": M, "K": K, "kernels": profile.kernels_of(lambda: torch.matmul(A, B))})}
    return swept


def steps_studies(doc: dict) -> None:
    """Stage 4 taken apart at each of STEP_SHAPES, twice, minutes apart: a step is real when it repeats."""
    for study in ("steps", "steps_repeat"):
        for (M, K), blocks in STEP_SHAPES:
            say(f"stage 4 taken apart at M={M} K={K} ({study})")
            A, B, ref = _fresh(M, K)
            doc["runs"] += steps_study(A, B, ref, blocks, study)


def shape_studies(doc: dict, shapes, headline, swept: list[dict], partial: str) -> None:
    """The reference sweep: stages 2 to 5 at a few block sizes per shape, then each at its best, the
    dispatcher, torch.matmul and the read ceiling round-robin."""
    for M, K in shapes:
        say(f"shape M={M} K={K}")
        A, B, ref = _fresh(M, K)
        if (M, K) == tuple(headline):  # the stages were swept above, in this run: not again
            note = "the headline shape: copied from this run's block sweep"
            rows_ = [dict(r, study="shapes", note=r["note"] or note) for r in swept
                     if r["variant"] in SHAPE_VARIANTS.get(r["stage"], (r["variant"],)) and r["stage"] != "naive"]
        else:
            rows_ = sweep("shapes", A, B, ref, SHAPE_VARIANTS, blocks=SHAPE_BLOCKS, naive=False, **SWEEP_TIMING)
        doc["runs"] += rows_
        doc["runs"] += compare_study("shape_best", A, B, ref, best_configs(rows_), SHAPE_ROUNDS, gemv=True,
                                     **SWEEP_TIMING)
        results.save(doc, partial)


def explorer_study(doc: dict, explorer) -> None:
    for M, K in (explorer_shapes() if explorer is None else explorer):
        say(f"explorer M={M} K={K}")
        A, B, ref = _fresh(M, K)
        doc["runs"] += compare_study("explorer", A, B, ref, [], SHAPE_ROUNDS, gemv=True, warmup_ms=5, rep_ms=30)


def side_studies(doc: dict, headline, counters: bool, pitfalls: bool) -> None:
    """Beside the rows: the cost of a call, Nsight Compute's counters, the pitfall transcripts."""
    from ..measure import overhead

    say("the cost of a gemv call")
    doc["overhead"] = [_try("overhead", lambda m=m, k=k: overhead.measure(m, k)) for m, k in ((4096, 4096), (1024, 1024))]
    if counters:
        from ..measure import counters as ncu

        say("Nsight Compute counters at the headline shape")
        doc["counters"] = _try("ncu", lambda: {"M": headline[0], "K": headline[1],
                                               "rows": ncu.run(*headline, timeout=150), "kernels": [k[0] for k in ncu.KERNELS]})
    if pitfalls:
        from .. import pitfalls as pf

        say("pitfalls, each in a child process")
        doc["pitfalls"] = pf.run_all()


def record(path, shapes=SHAPES, headline=HEADLINE, pitfalls: bool = True, explorer=None,
           counters: bool = True) -> dict:
    """Run every study on this GPU and save the document to `path` (and, as each study ends,
    to `path`.partial, so that an interrupted run keeps what it measured)."""
    if not torch.cuda.is_available():
        raise SystemExit("gemvlab record needs a CUDA GPU; on this machine `python -m gemvlab table` "
                         "shows the recorded results instead")
    from ..measure import latency

    start = time.time()
    doc = new_doc("recorded")
    doc["headline"] = {"M": headline[0], "K": headline[1]}
    partial = f"{path}.partial"
    say(f"gemvlab record on {doc['machine']['gpu']}, {doc['date']}")
    build_reports(doc)
    doc["machine"]["memory"] = latency.measure(far_bytes=4 * headline[0] * headline[1])
    say(f"memory: {doc['machine']['memory']}")
    swept = headline_studies(doc, headline)
    results.save(doc, partial)
    steps_studies(doc)
    results.save(doc, partial)
    shape_studies(doc, shapes, headline, swept, partial)
    explorer_study(doc, explorer)
    results.save(doc, partial)
    side_studies(doc, headline, counters, pitfalls)
    doc["seconds"] = round(time.time() - start, 1)
    results.save(doc, path)
    say(f"wrote {path} ({doc['seconds']} s)")
    return doc


def live_headline(upto: int = 5, M: int | None = None, K: int | None = None, configs: dict | None = None,
                  rounds: int = 3, **timing) -> dict:
    """A live results document with only the headline study, for stages 1..upto: each stage at
    its best configuration from the recorded file when that came from this GPU, else at the
    stage's default. Used by the notebooks and `gemvlab table` on a GPU."""
    from ..measure import latency

    doc = new_doc("live")
    full = HEADLINE if M is None else (M, K)
    M, K = bench.fit_shape(*full)
    doc["headline"] = {"M": M, "K": K}
    if (M, K) != tuple(full):
        doc["headline"]["scaled_from"] = list(full)
    doc["machine"]["memory"] = latency.measure(far_bytes=4 * M * K)
    configs = dict(configs or {})
    try:
        recorded = results.load()
    except (OSError, results.SchemaError):
        recorded = None
    for st in STAGES[:upto]:
        if st.name in configs:
            continue
        if recorded and recorded["machine"]["gpu"] == doc["machine"]["gpu"]:
            r = next((r for r in views.headline(recorded)["stages"] if r["stage"] == st.name), None)
            if r:
                configs[st.name] = (r["block"], r["variant"] or 0)
                continue
        configs[st.name] = (st.default_block, st.default)
    A, B = random_inputs(M, K)
    ref = reference(A, B)
    chosen = {k: v for k, v in configs.items() if get_stage(k).number <= upto}
    doc["runs"] = compare_study("headline", A, B, ref, chosen, rounds, **(timing or HEADLINE_TIMING))
    return doc
