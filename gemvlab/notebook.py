"""What the notebooks call: one function per kind of cell, live on a GPU, recorded otherwise.

Every number printed says where it comes from ("live on ..." or "recorded on ..."); compiler
facts (registers, spills, SASS) are computed on this machine either way.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import torch

from . import bench, occupancy, results, toolchain
from .kernels import build_stage, get_stage, stage_occupancy
from .table import format_table, stage_table


@dataclass
class Context:
    live: bool
    doc: dict  # the stage table's source: a live run here, or the recorded file
    recorded: dict  # the recorded file (sweeps, shapes, pitfalls)

    @property
    def label(self) -> str:
        return results.label(self.doc)


def setup(upto: int) -> Context:
    """Configure the build, load the recorded results and, on a GPU, measure stages 1..upto live
    at the headline shape (round-robin with torch.matmul and the read ceiling)."""
    toolchain.configure()  # sets CUDA_HOME and friends where missing, and says so once
    recorded = results.load()
    live = torch.cuda.is_available()
    if live:
        from .record import live_headline

        doc = live_headline(upto=upto, rounds=3, warmup_ms=10, rep_ms=150)
        print(f"Live: {torch.cuda.get_device_name()}. Stages 1 to {upto} measured just now; sweeps, "
              f"shapes and pitfall transcripts below are {results.label(recorded)} unless a cell says live.")
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

def build_report(*stages) -> None:
    """Registers, shared memory, spills (ptxas) and global loads by width (SASS) per kernel."""
    print(f"{'kernel':<24}{'registers':>10}{'static smem':>13}{'spills':>9}  global loads in SASS")
    for stage in stages:
        st = get_stage(stage)
        built = build_stage(st)
        for v in (st.variants if st.variant_name else (None,)):
            name = st.kernel_name(v)
            r = built.resources[name]
            s = built.sass.get(name) if built.sass else None
            loads = ", ".join(f"{n} x LDG {w}-bit" for w, n in sorted(s.global_loads.items(), reverse=True)) \
                if s else "(no disassembler: install triton or the CUDA toolkit)"
            spill = f"{r.spill_store_bytes} B" if r.spills else "none"
            print(f"{name:<24}{r.registers:>10}{r.shared_bytes:>11} B{spill:>9}  {loads}")


def sass_lines(stage, variant=None, pattern=r"LDG|SHFL|BAR|LDL|STL", limit: int = 12) -> None:
    """The memory instructions of one kernel's SASS, as the disassembler prints them."""
    from .build import sass_text

    st = get_stage(stage)
    built = build_stage(st)
    text = sass_text(built.path) if built.sass is not None else None
    if text is None:
        print("no disassembler found (cuobjdump: CUDA toolkit, or pip install triton)")
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
    return occupancy.SMLimits(**(recorded or results.load())["machine"]["sm_limits"])


def occupancy_table(stage, variant=None, limits: occupancy.SMLimits | None = None) -> None:
    """Resident blocks and warps per SM for every block size, from the resource report and the
    recorded GPU's limits (or this GPU's)."""
    st = get_stage(stage)
    res = build_stage(st).resources[st.kernel_name(variant)]
    limits = limits or sm_limits()
    print(f"{st.kernel_name(variant)}: {res.registers} registers/thread, {res.shared_bytes} B static shared"
          + (f" + {st.shared_per_thread} B/thread dynamic" if st.shared_per_thread else "")
          + f"; SM limits of compute capability {limits.compute_capability}")
    print(f"{'block':>6}{'blocks/SM':>11}{'warps/SM':>10}{'occupancy':>11}  limited by")
    for block in (32, 64, 128, 256, 512, 1024):
        o = stage_occupancy(st, block, variant, limits)
        print(f"{block:>6}{o.blocks_per_sm:>11}{o.warps_per_sm:>10}{o.occupancy:>10.0%}  {o.limiter}")


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
    print(f"{st.name}, M = {doc['headline']['M']}, K = {doc['headline']['K']}: ms (GB/s) by block size  "
          f"[{results.label(doc)}]")
    print(f"{'':>9}" + "".join(f"{b:>15}" for b in blocks))
    for v in (variants or found):
        cells = []
        for b in blocks:
            r = next((r for r in rows if r["variant"] == v and r["block"] == b), None)
            cells.append("" if r is None else (f"{r['ms']:.3f} ({r['GBps']:.0f})" if r["status"] == "ok"
                                              else r["status"]))
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


def block_slider(ctx: Context, stage, variant=None):
    """A block-size slider. On a GPU it times the stage at the chosen block size now, at the
    headline shape; without one it shows the recorded sweep there and the occupancy implied."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from .plots import plot_block_sweep

    st = get_stage(stage)
    variant = st.default_variant if variant is None else variant
    limits = sm_limits(ctx.recorded)
    state = {}

    def show(block):
        o = stage_occupancy(st, block, variant, limits)
        print(f"block {block}: {o.blocks_per_sm} blocks and {o.warps_per_sm} warps per SM "
              f"({o.occupancy:.0%} occupancy, limited by {o.limiter})")
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
        _ = plot_block_sweep(ctx.recorded, st.name, variants=[variant if st.variant_name else None],
                             mark_block=block)
        plt.show()

    widgets.interact(show, block=widgets.SelectionSlider(
        options=[32, 64, 128, 256, 512, 1024], value=st.default_block, description="block"))


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


def look_back(ctx: Context, stage, predicted_ms: float) -> None:
    """The prediction made before measuring, beside the measurement."""
    st = get_stage(stage)
    t = next(t for t in stage_table(ctx.doc) if t["stage"] == st.name)
    ceiling = results.headline(ctx.doc)["ceiling"]
    print(f"predicted: about {predicted_ms:g} ms; measured: {t['ms']:.3f} ms "
          f"({t['ms'] / predicted_ms:.2f}x the prediction)  [{ctx.label}]")
    if ceiling:
        print(f"{st.name} runs at {t['vs_ceiling']:.3f} of the read ceiling ({ceiling['ms']:.3f} ms)")


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
