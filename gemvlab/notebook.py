"""What the notebooks call: one function per kind of cell, live on a GPU, recorded otherwise.

Every number printed says where it comes from ("live on ..." or "recorded on ..."); compiler
facts (registers, spills, SASS) are computed on this machine either way.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

import torch

from . import bench, model, occupancy, results, toolchain
from .kernels import build_stage, get_stage, stage_occupancy
from .table import format_table, quartiles_overlap, stage_table, step_verdict


@dataclass
class Context:
    live: bool
    doc: dict  # the stage table's source: a live run here, or the recorded file
    recorded: dict  # the recorded file (sweeps, shapes, pitfalls)
    predictions: dict = field(default_factory=dict)  # stage name -> model.Prediction, made before measuring

    @property
    def label(self) -> str:
        return results.label(self.doc)


def setup(upto: int) -> Context:
    """Configure the build, load the recorded results and, on a GPU, measure stages 1..upto live
    at the headline shape (round-robin with torch.matmul and the read ceiling), scaled down to
    fit the GPU's memory when needed (and said so)."""
    toolchain.configure()  # sets CUDA_HOME and friends where missing, and says so once
    recorded = results.load()
    live = torch.cuda.is_available()
    if live:
        from .record import live_headline

        doc = live_headline(upto=upto, rounds=3, warmup_ms=10, rep_ms=150)
        head = doc["headline"]
        what = f"Stages 1 to {upto}, torch.matmul" if upto else "torch.matmul"
        print(f"Live: {torch.cuda.get_device_name()}. {what} and the read ceiling measured just now; sweeps, "
              f"shapes and pitfall transcripts below are {results.label(recorded)} unless a cell says live.")
        if head.get("scaled_from"):
            M0, K0 = head["scaled_from"]
            print(f"Scaled to fit this GPU's memory: M = {head['M']:,}, K = {head['K']:,} (A is "
                  f"{4 * head['M'] * head['K'] / 2**30:.1f} GiB) instead of M = {M0:,}, K = {K0:,} "
                  f"({4 * M0 * K0 / 2**30:.0f} GiB). Live numbers are for the scaled shape; recorded ones for the full one.")
    else:
        doc = recorded
        print(f"No CUDA GPU here: numbers are {results.label(recorded)}; compiler facts are computed here.")
    return Context(live, doc, recorded)


# ---- the two numbers ----------------------------------------------------------------------

def two_numbers(ctx: Context) -> None:
    """Bytes the headline GEMV must move, and the floor times they imply."""
    M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
    nbytes = bench.bytes_moved(M, K)
    peak = ctx.doc["machine"].get("datasheet_GBps")
    ceiling = results.headline(ctx.doc)["ceiling"]
    print(f"M = {M:,}, K = {K:,}: A is {4 * M * K / 2**30:.2f} GiB; bytes moved 4*(M*K + K + M) = {nbytes / 1e9:.3f} GB")
    print(f"arithmetic: 2*M*K = {2 * M * K / 1e9:.2f} GFLOP, {2 * M * K / nbytes:.2f} FLOP per byte: memory-bound")
    if peak:
        print(f"floor at the datasheet peak ({peak} GB/s): {nbytes / peak / 1e6:.3f} ms")
    if ceiling:
        bw = ceiling["GBps"]
        print(f"floor at the measured read ceiling ({bw:.0f} GB/s): {nbytes / bw / 1e6:.3f} ms  [{ctx.label}]")


# ---- sources -------------------------------------------------------------------------------

def show_source(stage):
    """The stage's .cu file, highlighted."""
    from IPython.display import Code

    st = get_stage(stage)
    return Code(st.source(), language="cuda")


def _kernel_body(text: str) -> list[str]:
    """The file without its leading comment block, for a diff that shows code, not prose."""
    lines = text.splitlines()
    while lines and (lines[0].startswith("//") or not lines[0].strip()):
        lines.pop(0)
    return lines


def show_diff(old, new):
    """What changed in the code from one stage to the next (a unified diff)."""
    from IPython.display import Code

    a, b = get_stage(old), get_stage(new)
    diff = difflib.unified_diff(_kernel_body(a.source()), _kernel_body(b.source()),
                                a.source_file, b.source_file, lineterm="", n=2)
    return Code("\n".join(diff), language="diff")


# ---- compiler facts ------------------------------------------------------------------------

def build_report(*stages, variants=None) -> None:
    """Registers, shared memory, spills (ptxas) and global loads by width (SASS) per kernel (of
    every compiled variant, or of `variants`)."""
    print(f"{'kernel':<24}{'registers':>10}{'static smem':>13}{'spills':>9}  global loads in SASS")
    for stage in stages:
        st = get_stage(stage)
        built = build_stage(st)
        for v in (variants or st.variants if st.variant_name else (None,)):
            name = st.kernel_name(v)
            r = built.resources[name]
            s = built.sass.get(name) if built.sass else None
            loads = ", ".join(f"{n} x LDG {w}-bit" for w, n in sorted(s.global_loads.items(), reverse=True)) \
                if s else "(no disassembler: install triton or the CUDA toolkit)"
            spill = f"{r.spill_store_bytes} B" if r.spills else "none"
            print(f"{name:<24}{r.registers:>10}{r.shared_bytes:>11} B{spill:>9}  {loads}")


def _sass(st) -> str | None:
    """The stage's disassembly, or None after saying that no disassembler was found."""
    text = build_stage(st).disassembly()
    if text is None:
        print("no disassembler found (cuobjdump: CUDA toolkit, or pip install triton)")
    return text


def sass_lines(stage, variant=None, pattern=r"LDG|SHFL|BAR|LDL|STL", limit: int = 12) -> None:
    """The memory instructions of one kernel's SASS, as the disassembler prints them."""
    st = get_stage(stage)
    text = _sass(st)
    if text is None:
        return
    want = st.kernel_name(variant)
    current, shown = None, 0
    from .build import demangle

    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = demangle(m.group(1))
            continue
        if current == want and re.search(pattern, line):
            ins = re.sub(r"\s*/\*\s*0x[0-9a-f]+\s*\*/\s*$", "", line).strip()  # the encoding
            ins = re.sub(r"^/\*[0-9a-f]+\*/\s*", "", ins)  # the address
            print(ins)
            shown += 1
            if shown >= limit:
                break


def sm_limits(recorded: dict | None = None) -> occupancy.SMLimits:
    """This GPU's per-SM limits, or the recorded GPU's when there is no GPU here."""
    if torch.cuda.is_available():
        return occupancy.limits_of_device()
    return occupancy.SMLimits.from_dict((recorded or results.load())["machine"]["sm_limits"])


def occupancy_table(stage, variant=None, limits: occupancy.SMLimits | None = None, M: int = 2048,
                    sms: int | None = None, recorded: dict | None = None) -> None:
    """For every block size: what the occupancy calculator allows (blocks and warps per SM, and
    the limiter) and what a grid for M rows really leaves on the SMs (waves, the last wave's fill,
    resident warps per SM), on the recorded GPU (or this one)."""
    st = get_stage(stage)
    res = build_stage(st).resources[st.kernel_name(variant)]
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
        o = stage_occupancy(st, block, variant, limits)
        r = occupancy.residency(o, st.grid(M, block, variant or 0), sms)
        last = f"{r.last_wave_fill:.0%}" if r.waves > 1 else (f"{r.busy_sms} SMs" if r.busy_sms < sms
                                                              else f"{r.last_wave_fill:.0%}")
        print(f"{block:>6}{o.blocks_per_sm:>11}{o.warps_per_sm:>10}  {o.limiter:<11}  {r.grid:>7}{r.waves:>7}"
              f"{last:>11}{r.warps_per_sm:>10.1f}{r.occupancy:>8.0%}")


def model_inputs(ctx: Context) -> None:
    """The measured numbers the model runs on (from this GPU live, or the recorded run)."""
    m = ctx.doc["machine"]
    mem = m["memory"]
    ceiling = results.headline(ctx.doc)["ceiling"]
    latency = mem.get("far_latency_ns") or mem["dram_latency_ns"]
    l2 = m["l2_bytes"]
    if mem.get("far_latency_ns"):
        print(f"memory latency, one dependent load at a time, random 128-byte lines over {mem['far_bytes'] / 2**30:.0f} GiB "
              f"(at most {l2 / mem['far_bytes']:.1%} of them can be in the {l2 / 2**20:.0f} MiB L2): "
              f"{mem['far_latency_ns']:.0f} ns, the latency the model uses for coalesced loads (a random chase may also "
              f"miss in the TLB, which streaming loads mostly do not: not separated)")
        print(f"  over 256 MiB instead: {mem['dram_latency_ns']:.0f} ns ({mem['dram_latency_cycles']:.0f} SM clocks at "
              f"{mem['sm_clock_mhz']} MHz); at most about {l2 / 2**28:.0%} of those loads can hit the L2 (its share of the buffer, not measured)")
    else:
        print(f"memory latency, one dependent load at a time: {latency:.0f} ns")
    if mem.get("warp_latency_ns"):
        over = f", over {mem['far_bytes'] / 2**30:.0f} GiB, same TLB caveat" if mem.get("far_bytes") else ""
        print(f"  one load instruction whose 32 lanes read 32 unrelated lines (a warp chasing at once{over}): "
              f"{mem['warp_latency_ns']:.0f} ns" + (f"  [{mem['warp_latency_note']}]" if mem.get("warp_latency_note") else ""))
    print(f"L2 latency: {mem['l2_latency_ns']:.0f} ns; read ceiling: {ceiling['GBps']:,.0f} GB/s; "
          f"{m['sm_count']} SMs")
    need = ceiling["GBps"] * 1e9 * latency * 1e-9
    print(f"Little's law: to read at the ceiling, {ceiling['GBps']:,.0f} GB/s x {latency:.0f} ns = "
          f"{need / 2**20:.2f} MiB must be in flight, {need / m['sm_count'] / 1024:.1f} KiB per SM  [{ctx.label}]")


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
        variant = row["variant"] if row and row["variant"] is not None else st.default_variant
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
            implied = w.in_flight_bytes / (bench.bytes_moved(M, K) / (measured * 1e-3)) * 1e9
            line += f"{measured:>10.3f}{measured / p.ms:>7.2f}{implied:>13.0f} ns"
        print(line)


# ---- measurements --------------------------------------------------------------------------

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


def _slider_view(sliders: dict, show):
    """Sliders above an Output area; each change clears the area and calls show(**values) in it.
    Figures are displayed explicitly and closed (no reliance on the inline backend noticing an
    open figure), so every move leaves exactly one plot. Returns the box for the cell to display."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    from IPython.display import clear_output, display

    out = widgets.Output()

    def redraw(_=None):
        with out:
            clear_output(wait=True)
            fig = show(**{name: s.value for name, s in sliders.items()})
            if fig is not None:
                display(fig)
                plt.close(fig)

    for s in sliders.values():
        s.observe(redraw, names="value")
    redraw()
    return widgets.VBox([*sliders.values(), out])


def block_slider(ctx: Context, stage, variant=None):
    """A block-size slider. On a GPU it times the stage at the chosen block size now, at the
    headline shape; without one it shows the recorded sweep there and the occupancy implied."""
    import ipywidgets as widgets

    from .plots import plot_block_sweep

    st = get_stage(stage)
    variant = st.default_variant if variant is None else variant
    limits = sm_limits(ctx.recorded)
    state = {}

    sms = (torch.cuda.get_device_properties(0).multi_processor_count if ctx.live
           else ctx.recorded["machine"]["sm_count"])

    def show(block):
        o = stage_occupancy(st, block, variant, limits)
        M = ctx.doc["headline"]["M"]
        r = occupancy.residency(o, st.grid(M, block, variant or 0), sms)
        print(f"block {block}: the occupancy calculator allows {o.blocks_per_sm} blocks ({o.warps_per_sm} warps) "
              f"per SM, limited by {o.limiter}")
        print(f"  the grid for M = {M:,}: {r.describe()}")
        if ctx.live:
            if "inputs" not in state:
                M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
                state["inputs"] = bench.random_inputs(M, K)
            A, B = state["inputs"]
            try:
                m = bench.measure_stage(st, A, B, block, variant, warmup_ms=5, rep_ms=50, min_launches=5)
                print(f"live: {m['ms']:.3f} ms, {m['GBps']:.0f} GB/s (median of {m['n']} launches), "
                      f"relative error {m['rel_err']:.1e}")
            except Exception as e:  # noqa: BLE001 - a block the stage refuses: show why
                print(f"not launched: {e}")
        else:
            r = next((r for r in results.block_sweep(ctx.recorded, st.name)
                      if r["block"] == block and r["variant"] == (variant if st.variant_name else None)), None)
            if r and r["status"] == "ok":
                print(f"recorded: {r['ms']:.3f} ms, {r['GBps']:.0f} GB/s  [{results.label(ctx.recorded)}]")
            elif r:
                print(f"recorded: {r['status']}: {r['note']}")
        return plot_block_sweep(ctx.recorded, st.name, variants=[variant if st.variant_name else None],
                                mark_block=block)

    return _slider_view({"block": widgets.SelectionSlider(options=[32, 64, 128, 256, 512, 1024],
                                                          value=st.default_block, description="block")}, show)


def pitfall(ctx: Context, demo: str) -> None:
    """Run a pitfall demo in a child process (on a GPU), or show the recorded GPU's transcript."""
    from . import pitfalls

    print(pitfalls.DEMOS[demo])
    if ctx.live:
        result = pitfalls.run(demo)
        result["label"] = f"live on {torch.cuda.get_device_name()}, in a child process"
    else:
        result = pitfalls.recorded(demo, ctx.recorded)
    pitfalls.show(result)


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


# ---- stage 4 taken apart -------------------------------------------------------------------

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


# ---- what torch.matmul runs, and the counters ------------------------------------------------

def matmul_kernels(ctx: Context) -> None:
    """The kernels torch.matmul (cuBLAS) launches at the headline shape, with grids and times:
    torch.profiler, live on a GPU, recorded otherwise."""
    from . import profile

    if ctx.live:
        M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
        A, B = bench.random_inputs(M, K)
        kernels, label = profile.kernels_of(lambda: torch.matmul(A, B)), f"live on {torch.cuda.get_device_name()}"
        del A, B
    else:
        found = (ctx.recorded.get("profiles") or {}).get("torch.matmul") or {}
        kernels, label, M, K = found.get("kernels") or [], results.label(ctx.recorded), found.get("M"), found.get("K")
    print(f"torch.matmul(A, B), M = {M:,}, K = {K:,}: each kernel's median over 5 calls, L2 flushed before each")
    profile.show(kernels, f"[{label}]")


def counters(ctx: Context, only=None, live: bool = True) -> None:
    """Nsight Compute's counters for the stages and torch.matmul at the headline shape: with `live`,
    on a machine with a GPU and ncu, run now for stage 4, the dispatcher and torch.matmul (half a
    minute); the recorded H200's (every stage) otherwise."""
    from . import counters as ncu

    found, label = None, None
    if live and ctx.live and toolchain.find_tool("ncu"):
        M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
        try:
            found = {"M": M, "K": K, "rows": ncu.run(M, K, timeout=300, only=ncu.LIVE), "kernels": list(ncu.LIVE)}
            label = f"live on {torch.cuda.get_device_name()}"
        except Exception as e:  # noqa: BLE001 - no permission for counters, say so and show the recorded
            print(f"ncu did not run here ({str(e).splitlines()[0][:200]}); the recorded counters follow")
    if found is None:
        found, label = ctx.recorded.get("counters") or {}, results.label(ctx.recorded)
    if not found.get("rows"):
        print(f"no counters recorded ({found.get('error', 'not measured')})")
        return
    rows = [r for r in found["rows"] if not any(w in r["kernel"] for w in ("distribution", "elementwise", "fill"))]
    print(f"Nsight Compute, M = {found['M']:,}, K = {found['K']:,}, one launch each")
    ncu.show(rows, label=f"[{label}]", only=only)


# ---- which kernel for which shape (notebook 04) and the dispatcher (notebook 05) -------------

def which_kernel(doc: dict) -> None:
    """Per shape of the sweep: the fastest stage, stages 4 and 5 at their best, the dispatcher
    and torch.matmul, as ms and as a fraction of the read ceiling's time."""
    print(f"{'M x K':>20}{'fastest stage (ms)':>32}{'stage 4':>10}{'stage 5':>10}{'gemv':>9}{'torch':>9}{'ceiling':>9}"
          f"   [{results.label(doc)}; ms]")
    for M, K in results.shapes(doc):
        s = results.shape_summary(doc, M, K)
        ok = {n: r for n, r in s["stages"].items() if r["status"] == "ok"}
        best = min(ok.values(), key=lambda r: r["ms"]) if ok else None
        cell = lambda r: f"{r['ms']:.3f}" if r and r.get("status") == "ok" else "n/a"  # noqa: E731
        name = f"{best['stage']} {best['ms']:.3f}" if best else "none"
        tied = [r["stage"] for r in ok.values() if r is not best and r["q25_ms"] <= best["q75_ms"]] if best else []
        if tied:  # quartiles overlap: no single fastest
            name = "tie: " + ", ".join([best["stage"], *tied])
        print(f"{f'{M} x {K}':>20}{name:>32}{cell(ok.get('warp_shuffle')):>10}{cell(ok.get('multirow')):>10}"
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
        big = 4 * (M * K + K) >= 4 * l2
        vs_t = t["ms"] / g["ms"] if t else None
        vs_c = g["GBps"] / c["GBps"] if c else None
        bar = []
        if t is not None:
            bar.append("tie with torch" if quartiles_overlap(g, t) else "torch ok" if vs_t >= 1.0 else "SLOWER than torch")
        if big and vs_c is not None:
            bar.append("BW ok" if vs_c >= 0.91 else "BW below 0.91")
        vs_c_text = f"{vs_c:.3f}" if vs_c is not None else "n/a"
        t_text = f"{t['ms']:.4f} [{t['q25_ms']:.4f}-{t['q75_ms']:.4f}]" if t else "n/a"
        print(f"{M:>9}{K:>11}  {g['chosen'][:37]:<38}{g['ms']:>8.4f} [{g['q25_ms']:.4f}-{g['q75_ms']:.4f}]"
              f"{t_text:>28}{(vs_t or 0):>8.2f}x{vs_c_text:>14}  {', '.join(bar)}")
    print(f"bar: at least torch.matmul's speed (a tie where the quartiles overlap); where A and B are at least 4x "
          f"the L2 ({4 * l2 / 2**20:.0f} MiB), at least 0.91 of the read ceiling's bandwidth (the ceiling's counts A alone, "
          f"gemv's B and C too, as many bytes as A at M = 1, so the ratio can pass 1; on small shapes presumably fixed "
          f"costs dominate both times; within about 1% of 1 it is a tie with the ceiling)  [{results.label(doc)}]")
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
    from . import dispatch

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
        A, B = bench.random_inputs(M, K)
        from .kernels import gemv

        timed = bench.time_round_robin({"gemv": lambda: gemv(A, B), "torch.matmul": lambda: torch.matmul(A, B)},
                                       rounds=2, warmup_ms=5, rep_ms=20)
        print(f"live: gemv {timed['gemv'].ms:.4f} ms, torch.matmul {timed['torch.matmul'].ms:.4f} ms "
              f"({timed['torch.matmul'].ms / timed['gemv'].ms:.2f}x)  [live on {torch.cuda.get_device_name()}]")
        del A, B
    elif g:
        print(f"recorded: gemv {g['ms']:.4f} ms, torch.matmul {t['ms']:.4f} ms ({t['ms'] / g['ms']:.2f}x)"
              + (f", read ceiling {c['ms']:.4f} ms" if c else "") + f"  [{results.label(doc)}]")
    else:
        print("not in the recorded explorer grid")


def shape_slider(ctx: Context):
    """M and K sliders over the recorded explorer grid: the kernel chosen, the model's time, and
    the recorded (or live) time beside torch.matmul."""
    import ipywidgets as widgets

    from .record import EXPLORER_K, EXPLORER_M

    def show(M, K):
        if M * K > 2**30:
            print(f"M x K = {M * K:,} floats: larger than the explorer grid records (2^30); pick a smaller pair")
        else:
            explain_shape(ctx, M, K)
        return _explorer_map(ctx.recorded, M, K)

    return _slider_view({"M": widgets.SelectionSlider(options=list(EXPLORER_M), value=16, description="M"),
                         "K": widgets.SelectionSlider(options=list(EXPLORER_K), value=1048576, description="K")}, show)


# ---- small facts the prose quotes ---------------------------------------------------------------

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


def matmul_overhead(ctx: Context) -> None:
    """torch.matmul's first kernel at the headline shape: its blocks, their waves, and its time
    beyond reading A at the read ceiling, per wave of blocks."""
    doc = ctx.recorded
    prof = (doc.get("profiles") or {}).get("torch.matmul") or {}
    if not prof.get("kernels"):
        print("no torch.matmul profile recorded")
        return
    k = max(prof["kernels"], key=lambda k: k["us"])
    blocks = k["grid"][0] * k["grid"][1] * k["grid"][2]
    regs = k["registers"] or 32
    # The recorded GPU's limits (the profile is the recorded one, whatever GPU is here).
    o = occupancy.occupancy(regs, k["block"][0], occupancy.SMLimits.from_dict(doc["machine"]["sm_limits"]),
                            k["shared_bytes"] or 0)
    sms = doc["machine"]["sm_count"]
    slots = o.blocks_per_sm * sms
    waves = occupancy.residency(o, blocks, sms).waves
    M, K = prof["M"], prof["K"]
    at_ceiling = 4 * M * K / (results.headline(doc)["ceiling"]["GBps"] * 1e9) * 1e3
    extra = k["us"] / 1e3 - at_ceiling
    from .profile import short_name

    print(f"{short_name(k['name'])}: {blocks:,} blocks of {k['block'][0]} threads, {4 * M * K / blocks / 1024:.0f} KiB of A "
          f"each on average; {o.blocks_per_sm} blocks per SM fit ({regs} registers, limited by {o.limiter}; its shared "
          f"memory is not in the profile, assumed not to limit): {waves} waves of {slots:,}")
    print(f"{k['us'] / 1e3:.3f} ms, against {at_ceiling:.3f} ms to read A at the read ceiling: {extra:.3f} ms more, "
          f"{extra * 1e3 / waves:.2f} us per wave  [{results.label(doc)}]")
    st = next((r for r in results.headline(doc)["stages"] if r["stage"] == "warp_shuffle"), None)
    if st:
        print(f"stage 4 ({st['block']} threads): {M:,} blocks, one per row, {4 * K / 2**20:.0f} MiB of A each; "
              f"{st['ms']:.3f} ms, {st['ms'] - at_ceiling:.3f} ms beyond the read ceiling's time")


def one_kernel_every_shape(ctx: Context, stage="warp_shuffle") -> None:
    """Stage 4 (one block per row) on every shape of the sweep: what its grid leaves on the SMs,
    the model's time and the recorded one."""
    doc = ctx.recorded
    inputs = model.machine_inputs(doc)
    st = get_stage(stage)
    print(f"{st.name} at its best block size per shape  [model and measurement: {results.label(doc)}]")
    print("(model ms: A wave by wave at what its bytes in flight allow, capped by the read ceiling, plus B and C read "
          "once at the read ceiling; GB/s per busy SM counts A once and B once per block: every block reads all of B)")
    print(f"{'M':>9}{'K':>11}{'block':>7}{'grid':>11}{'SMs busy':>10}{'warps/busy SM':>15}{'waves':>7}"
          f"{'model ms':>10}{'measured':>10}{'ratio':>7}{'GB/s per busy SM':>18}")
    for M, K in results.shapes(doc):
        r = results.shape_summary(doc, M, K)["stages"].get(st.name)
        if not r or r["status"] != "ok":
            print(f"{M:>9}{K:>11}  {st.name} does not run here ({r['status'] if r else 'not measured'})")
            continue
        p = model.predict(st, M, K, r["block"], r["variant"], **inputs)
        print(f"{M:>9}{K:>11}{r['block']:>7}{p.grid:>11,}{p.res.busy_sms:>10}{p.res.first_wave_warps_per_sm:>15.1f}"
              f"{len(p.waves):>7}{p.ms:>10.3f}{r['ms']:>10.3f}{r['ms'] / p.ms:>7.2f}{4 * K * (M + p.grid) / (r['ms'] * 1e6) / p.res.busy_sms:>18.0f}")


def dispatch_look_back(ctx: Context) -> None:
    """The model's time for the plan gemv chose on each shape of the sweep, beside the recorded one."""
    from . import dispatch

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
    print("added us: the median of the differences between a gemv call and the launch alone timed just before it")
    for note in dict.fromkeys(r["note"] for r in rows if r.get("note")):
        print(f"note: {note}")


def _explorer_map(doc: dict, M: int, K: int):
    """The recorded explorer grid as a map: gemv's speed against torch.matmul's at each (M, K),
    the chosen pair outlined."""
    import matplotlib.pyplot as plt
    import numpy as np

    from .record import EXPLORER_K, EXPLORER_M

    ratio = np.full((len(EXPLORER_M), len(EXPLORER_K)), np.nan)
    for i, m in enumerate(EXPLORER_M):
        for j, k in enumerate(EXPLORER_K):
            kinds = results.by_kind(results.rows(doc, "explorer", M=m, K=k, ok=True))
            g, t = kinds.get("dispatch"), kinds.get("torch_matmul")
            if g and t:
                ratio[i, j] = t["ms"] / g["ms"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    im = ax.imshow(ratio, cmap="RdYlGn", vmin=0.5, vmax=1.5, aspect="auto")
    for i in range(len(EXPLORER_M)):
        for j in range(len(EXPLORER_K)):
            if not np.isnan(ratio[i, j]):
                ax.text(j, i, f"{ratio[i, j]:.2f}", ha="center", va="center", fontsize=7)
    if M in EXPLORER_M and K in EXPLORER_K:
        ax.add_patch(plt.Rectangle((EXPLORER_K.index(K) - 0.5, EXPLORER_M.index(M) - 0.5), 1, 1, fill=False,
                                   lw=2.5, color="black"))
    ax.set_xticks(range(len(EXPLORER_K)), [f"{k:,}" for k in EXPLORER_K], fontsize=7)
    ax.set_yticks(range(len(EXPLORER_M)), [f"{m:,}" for m in EXPLORER_M], fontsize=7)
    ax.set_xlabel("K")
    ax.set_ylabel("M")
    fig.colorbar(im, ax=ax, label="torch.matmul ms / gemv ms")
    ax.set_title(f"gemv against torch.matmul (blank: not recorded)  [{results.label(doc)}]", fontsize=9)
    fig.tight_layout()
    return fig


def dispatch_misses(doc: dict) -> None:
    """The shapes (sweep and explorer) where gemv misses its bar: slower than torch.matmul (beyond
    both quartile ranges), or, where A and B are at least 4x the L2, below 0.91 of the read
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
            if t and r["q25_ms"] > t["q75_ms"]:  # slower beyond the spread of both
                why.append(f"{t['ms'] / r['ms']:.2f}x torch.matmul ({r['ms'] * 1e3:.1f} against {t['ms'] * 1e3:.1f} us, "
                           f"quartiles {r['q25_ms'] * 1e3:.1f}-{r['q75_ms'] * 1e3:.1f} against "
                           f"{t['q25_ms'] * 1e3:.1f}-{t['q75_ms'] * 1e3:.1f})")
            if c and 4 * (r["M"] * r["K"] + r["K"]) >= 4 * l2 and r["GBps"] < 0.91 * c["GBps"]:
                why.append(f"{r['GBps'] / c['GBps']:.3f} of the read ceiling's bandwidth")
            if why:
                found.append((r["M"], r["K"], r["chosen"], why))
    print(f"{len(found)} of {len(seen)} shapes miss a mark  [{results.label(doc)}]")
    for M, K, chosen, why in found:
        print(f"  M = {M:,}, K = {K:,} ({chosen}): " + "; ".join(why))


def loads_in_flight(stage, variants=None) -> None:
    """For each variant of a stage (or each of `variants`): the independent loads of A its source
    writes per trip, and how many of them the compiled code (SASS) really issues before it first
    uses one."""
    st = get_stage(stage)
    if _sass(st) is None:
        return
    print(f"{'kernel':<30}{'in the source':>15}{'issued before the first use (SASS)':>38}")
    for v in (variants or st.variants if st.variant_name else (None,)):
        loads = model.loads_issued(st, v) or []
        a = model.a_loads(st, loads) if loads else 0
        written = model.loads_written(st, v)
        print(f"{st.kernel_name(v):<30}{written:>15}{a:>20} of A  ({len(loads)} loads in all)")


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
