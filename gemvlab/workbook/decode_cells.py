"""What notebook 06 calls: the decode study's tables, the accumulation error, cuBLAS's kernels, the
ridge point, the time against n, and the explorer. Recorded numbers say so; on a GPU the tables
are measured now (without torch.compile, whose autotuning takes seconds per shape)."""

from __future__ import annotations

import csv
from pathlib import Path

import torch

from ..measure import decode as md
from ..results import decode as study
from .context import Context

#: fp32 FMA lanes per SM, by compute capability (NVIDIA's CUDA C++ Programming Guide, arithmetic
#: instructions table).
FP32_LANES = {"7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128,
              "12.0": 128}
#: Dense fp16/bf16 tensor-core FLOP per SM per clock with fp32 sums, the architecture's peak rate
#: from datacenter datasheets: H100/H200 989 TFLOP/s (wgmma; at 1.83 GHz), A100 312, L4 121, T4 65
#: (fp16 only: Turing has no bf16). GeForce cards of 8.6 and 8.9 do fp32 sums at half this rate.
TENSOR_FLOP = {"7.5": 1024, "8.0": 2048, "8.6": 1024, "8.9": 1024, "9.0": 4096}


def show_function(kernel, name: str, first: str | None = None, last: str | None = None):
    """One function of a decode kernel's .cu file (or of a header it includes), with the comment
    above it, highlighted: the few lines a step is about. `first`, `last`: only the lines from the
    one containing `first` to the one containing `last`."""
    from IPython.display import Code

    from ..decode import KERNELS

    k = KERNELS[kernel]
    for text in (k.source(), *k.headers().values()):
        lines = text.splitlines()
        at = next((i for i, ln in enumerate(lines) if f" {name}(" in ln and not ln.startswith((" ", "//"))), None)
        if at is None:
            continue
        start = at
        while start > 0 and (lines[start - 1].startswith(("template", "//"))):
            start -= 1
        end = next(i for i in range(at, len(lines)) if lines[i] == "}")
        if first is not None:
            start = next(i for i in range(start, end) if first in lines[i])
        if last is not None:
            end = next(i for i in range(start, end + 1) if last in lines[i])
        return Code("\n".join(lines[start:end + 1]), language="cuda")
    raise ValueError(f"no function {name} in {k.source_file}")


#: The decode tuning run (bench/tune_dispatch.py --decode): the rule's plan beside its neighbours.
TUNING = Path(__file__).resolve().parents[2] / "bench" / "results" / "h200-decode.csv"


def _tuning(N: int, K: int, dtype: str, path: Path):
    """(the run's GPU, n -> candidate -> row) from the tuning run at one shape, or None without it."""
    if not path.is_file():
        print(f"no tuning results here ({path}): they come with a clone of gemvlab")
        return None
    with open(path) as f:
        head = f.readline().lstrip("# ").split(",")[0]
        rows = [r for r in csv.DictReader(f) if (int(r["N"]), int(r["K"]), r["dtype"]) == (N, K, dtype)]
    by_n: dict = {}
    for r in rows:
        by_n.setdefault(int(r["n"]), {})[r["candidate"]] = r
    return head, by_n


def _plan(row: dict) -> tuple[str, int]:
    """(kernel name, warps per block) of a tuning row's plan, e.g. ("decode_mma<2, 2, 4, 2>", 1)."""
    name, threads = row["plan"].rsplit(", ", 1)
    return name, int(threads.split()[0]) // 32


def stages(N: int, K: int, dtype: str = "bfloat16", path: Path = TUNING) -> None:
    """Per n, from the tuning run: the fastest decode_mma plan with two trips in flight (U = 4,
    STAGES = 2) beside the same plan with one, and beside the fastest plan with one at any warps
    and loads per trip."""
    got = _tuning(N, K, dtype, path)
    if got is None:
        return
    head, by_n = got
    print(f"{N:,} x {K:,} {dtype}  [tuning run, {head}]: ms, and the ratio to STAGES = 2")
    print(f"{'n':>3}  {'STAGES = 2':<20}{'STAGES = 1':<17}STAGES = 1 at its fastest U and warps")
    print(f"{'':>5}{'':<20}(same warps)")
    for n, c in sorted(by_n.items()):
        twos = [(float(r["ms"]), _plan(r)[1]) for r in c.values() if r["plan"] and _plan(r)[0].endswith(", 4, 2>")]
        ones = [(float(r["ms"]), name) for name, r in c.items() if "STAGES=1" in name]
        if not twos or not ones:
            continue
        ms, warps = min(twos)
        same = c.get(f"U=4 STAGES=1 warps={warps}")
        if same is None:
            continue
        best, name = min(ones)
        u, w = (int(x.split("=")[1]) for x in name.split(" ") if x.startswith(("U=", "warps=")))
        print(f"{n:>3}  {ms:.4f} ({warps} warp{'s' if warps > 1 else ''}){'':<{7 - len(str(warps)) - (warps > 1)}}"
              f"{float(same['ms']):.4f} {float(same['ms']) / ms:.2f}x     {best:.4f} {best / ms:.2f}x (U = {u}, {w} warp{'s' if w > 1 else ''})")


def late_b(N: int, K: int, n: int = 16, dtype: str = "bfloat16", path: Path = TUNING) -> None:
    """From the tuning run at one n (two n-tiles): U = 4 with STAGES = 2 and 3 at 1 to 4 warps per
    block, beside each variant's registers and the one-warp blocks an SM of the recorded GPU
    holds at them."""
    import torch

    from ..decode import MMA
    from ..decode.kernels import DTYPE_CODES
    from ..gpu.device import Device
    from ..native.kernel import encode

    got = _tuning(N, K, dtype, path)
    if got is None:
        return
    head, by_n = got
    by_plan = {_plan(r): float(r["ms"]) for r in by_n.get(n, {}).values() if r["plan"]}
    device = Device.recorded()
    print(f"{N:,} x {K:,} {dtype}, n = {n}  [tuning run, {head}]: ms at 1 to 4 warps per block of 16 rows; "
          f"{-(-N // 16):,} such tiles, {device.sms} SMs")
    print(f"{'':<12}{'registers':>10}{'warps/SM':>10}{'1 warp':>10}" + "".join(f"{f'{w} warps':>10}" for w in (2, 3, 4)))
    for stages in (2, 3):
        v = encode(DTYPE_CODES[getattr(torch, dtype)], 2, 4, stages)
        name = MMA.kernel_name(v).removeprefix("gemv_")
        ms = "".join(f"{by_plan[(name, w)]:>10.4f}" if (name, w) in by_plan else f"{'-':>10}" for w in (1, 2, 3, 4))
        print(f"{'STAGES = ' + str(stages):<12}{MMA.resources(v).registers:>10}"
              f"{MMA.occupancy(32, v, device.limits).warps_per_sm:>10}{ms}")


def _rows(doc: dict, N: int, K: int, dtype: str) -> dict:
    """n -> kernel -> row of the decode study at one shape."""
    out: dict = {}
    for r in study.rows(doc):
        if (r["M"], r["K"], r["dtype"]) == (N, K, dtype):
            out.setdefault(r["n"], {})[r["kernel"]] = r
    return out


def ceiling_at(doc: dict, N: int, K: int, dtype: str = "bfloat16") -> float:
    """The read ceiling's bandwidth at one shape (GB/s): the median of its timings there, one per n."""
    import statistics

    got = [k["read ceiling"]["GBps"] for k in _rows(doc, N, K, dtype).values() if "read ceiling" in k]
    return statistics.median(got)


def live_vectors(ctx: Context, N: int, K: int, dtype: str = "bfloat16", vectors=study.VECTORS) -> dict:
    """The decode study at one shape: measured now on a GPU (gemv, torch.matmul, the read ceiling),
    else the recorded file. Returns a results document with a decode section."""
    if not ctx.live:
        return ctx.recorded
    from ..results.record import new_doc

    doc = new_doc("live")
    doc["decode"] = {"date": doc["date"], "machine": doc["machine"], "rows": []}
    for n in vectors:
        doc["decode"]["rows"] += study.measure_case(N, K, n, dtype, "live", False)
    return doc


def floors(doc: dict, N: int, K: int) -> None:
    """W's bytes in float32 and in bf16, the floor time each implies at the read ceiling's bandwidth,
    and what gemv measured for both at n = 2."""
    half, full = _rows(doc, N, K, "bfloat16"), _rows(doc, N, K, "float32")
    for name, e, rows in (("float32", 4, full), ("bfloat16", 2, half)):
        ceiling = ceiling_at(doc, N, K, name)  # each dtype's read ceiling, timed in its own runs
        nbytes = md.bytes_moved(N, K, 2, md.DTYPES[name])
        measured = (f"gemv measured {rows[2]['gemv']['ms']:.4f} ms ({rows[2]['gemv']['chosen']})" if 2 in rows
                    else "not recorded")
        print(f"{name:>9}: W is {e * N * K / 1e6:.1f} MB; floor {nbytes / ceiling / 1e6:.4f} ms at {ceiling:.0f} GB/s "
              f"(its read ceiling, the median over n); {measured}")
    if 2 in full and 2 in half:
        print(f"bf16 takes {half[2]['gemv']['ms'] / full[2]['gemv']['ms']:.2f} of float32's time  [{study.label(doc)}]")


def accumulation(N: int = 512, K: int = 4096, seed: int = 0) -> None:
    """The error of summing bf16 products in fp32 (what gemv does) and in bf16 (rounding the running
    sum after every addition), against float64 of the same rounded inputs, on this machine's CPU."""
    g = torch.Generator().manual_seed(seed)
    W = torch.rand(N, K, generator=g).to(torch.bfloat16)
    x = torch.rand(K, generator=g).to(torch.bfloat16)
    exact = W.double() @ x.double()
    # Both sums run from k = 0 up, one element-wise addition per k: the same bits on every CPU and
    # thread count (a BLAS matmul's order of additions is not).
    fp32 = torch.zeros(N)
    running = torch.zeros(N, dtype=torch.bfloat16)
    products = W.float() * x.float()
    for k in range(K):
        fp32 = fp32 + products[:, k]
        running = (running.float() + products[:, k]).to(torch.bfloat16)

    def err(c):
        return (torch.linalg.vector_norm(c.double() - exact) / torch.linalg.vector_norm(exact)).item()

    print(f"N = {N}, K = {K}, bf16 inputs in [0, 1), relative error against float64:")
    print(f"  fp32 sums:                      {err(fp32):.1e}")
    print(f"  fp32 sums, rounded to bf16:     {err(fp32.to(torch.bfloat16)):.1e}   (gemv's arithmetic; gemv adds in another order)")
    print(f"  a bf16 running sum:             {err(running):.1e}")


def vectors_table(doc: dict, N: int, K: int, dtype: str = "bfloat16") -> None:
    """Per n: gemv, torch.matmul, torch.compile (where recorded) and the read ceiling, with ratios."""
    rows = _rows(doc, N, K, dtype)
    print(f"{N:,} x {K:,} {dtype}, B = x.t()  [{study.label(doc)}]")
    print(f"{'n':>3}{'gemv':>10}{'torch.matmul':>14}{'torch.compile':>15}{'read ceiling':>14}"
          f"{'torch.matmul / gemv':>21}  gemv's kernel (times in ms)")
    for n, k in sorted(rows.items()):
        c = f"{k['torch.compile']['ms']:.4f}" if "torch.compile" in k else "-"
        print(f"{n:>3}{k['gemv']['ms']:>10.4f}{k['torch.matmul']['ms']:>14.4f}{c:>15}{k['read ceiling']['ms']:>14.4f}"
              f"{k['torch.matmul']['ms'] / k['gemv']['ms']:>20.2f}x  {k['gemv']['chosen']}")


def cublas_kernels(doc: dict) -> None:
    """The kernels torch.matmul launched at each n (torch.profiler), recorded with the decode study."""
    prof = (doc.get("decode") or {}).get("profiles")
    if not prof:
        print("no profiles recorded")
        return
    print(f"{prof['M']:,} x {prof['K']:,} {prof['dtype']}, the kernels torch.matmul launches  [{study.label(doc)}]")
    for n, kernels in prof["kernels"].items():
        for k in kernels:
            name = k["name"].split("(")[0].removeprefix("void ")
            print(f"  n = {n:>2}: {k['us']:7.1f} us, grid {k['grid']}, block {k['block']}, {name[:72]}")


def _max_sm_clock_mhz() -> float | None:
    """This GPU's highest SM clock, from nvidia-smi (None where it cannot say)."""
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20, check=False).stdout.split()
        return float(out[0]) if out else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def ridge(doc: dict, N: int, K: int, live: bool = False) -> tuple[float, float, float]:
    """(bandwidth GB/s, CUDA-core fp32 TFLOP/s, tensor-core TFLOP/s) for the recorded GPU (or this
    one, live), the bandwidth the read ceiling's at N x K, printed with the ridge points: the FLOP per
    byte where arithmetic takes as long as reading W."""
    m = doc["machine"]
    cc, sms, mhz = m["compute_capability"], m["sm_count"], (m.get("memory") or {}).get("sm_clock_mhz")
    if live:
        p = torch.cuda.get_device_properties(0)
        cc, sms, mhz = f"{p.major}.{p.minor}", p.multi_processor_count, _max_sm_clock_mhz() or mhz
    bw = ceiling_at(doc, N, K)
    cores = sms * FP32_LANES.get(cc, 64) * 2 * mhz * 1e6 / 1e12
    tensor = sms * TENSOR_FLOP.get(cc, 0) * mhz * 1e6 / 1e12
    print(f"{m['gpu'] if not live else torch.cuda.get_device_name()}: {sms} SMs at {mhz:.0f} MHz, "
          f"read ceiling {bw:.0f} GB/s at {N:,} x {K:,}")
    print(f"  CUDA cores: {sms} SMs x {FP32_LANES.get(cc, 64)} fp32 lanes x 2 FLOP (one FMA, a fused multiply-add) "
          f"x {mhz:.0f} MHz = {cores:.1f} TFLOP/s; ridge at {cores * 1e3 / bw:.1f} FLOP per byte")
    if tensor:
        kind = "fp16" if cc == "7.5" else "bf16"
        print(f"  tensor cores: {sms} SMs x {TENSOR_FLOP[cc]} {kind} FLOP per clock x {mhz:.0f} MHz = {tensor:.0f} "
              f"TFLOP/s, an upper bound (dense: no sparsity); ridge at {tensor * 1e3 / bw:.0f} FLOP per byte")
    return bw, cores, tensor


def plot_vs_n(doc: dict, N: int, K: int, dtype: str = "bfloat16", cores_TFLOPs: float | None = None):
    """Time against n at one shape: gemv, torch.matmul, torch.compile, the read ceiling, and what
    CUDA cores at their peak would need (the larger of reading W and doing 2 N K n FLOP), drawn on
    to n = 32 so that its rise past the ridge shows."""
    import matplotlib.pyplot as plt

    rows = _rows(doc, N, K, dtype)
    ns = sorted(rows)
    fig, ax = plt.subplots(figsize=(7, 3.4))
    if not rows:  # not recorded at this shape: the model alone, at the record's best read bandwidth
        bw = max(r["GBps"] for r in study.rows(doc) if r["kernel"] == "read ceiling")
        ns = list(study.VECTORS)
        ax.plot(ns, [md.bytes_moved(N, K, n, md.DTYPES[dtype]) / bw / 1e6 for n in ns], "k:",
                label=f"model: bytes moved over {bw:.0f} GB/s")
        return _finish(fig, ax, ns, f"{N:,} x {K:,} {dtype}: not recorded, the model only")
    for kernel, style in (("gemv", "o-"), ("torch.matmul", "s-"), ("torch.compile", "^--"), ("read ceiling", "k:")):
        pts = [(n, rows[n][kernel]["ms"]) for n in ns if kernel in rows[n]]
        if pts:
            ax.plot(*zip(*pts), style, label=kernel, ms=4)
    if cores_TFLOPs:
        bw = ceiling_at(doc, N, K, dtype)
        nbytes = N * K * md.DTYPES[dtype].itemsize
        model_ns = list(range(1, 33))
        floor = [max(nbytes / bw / 1e6, 2 * N * K * n / cores_TFLOPs / 1e9) for n in model_ns]
        ax.plot(model_ns, floor, color="#dd8452", lw=2, ls="--", label="CUDA cores at peak (model)")
        ns = [*ns, 24, 32]
        # 2 N K n FLOP over N K itemsize bytes: 2 n / itemsize FLOP per byte, equal to the peak's at the ridge
        ridge = cores_TFLOPs * 1e3 / bw * md.DTYPES[dtype].itemsize / 2
        ax.axvline(ridge, color="#dd8452", ls=":", lw=1)
        ax.text(ridge, ax.get_ylim()[1] * 0.97, f" ridge n = {ridge:.1f}", color="#dd8452", fontsize=8, va="top")
    return _finish(fig, ax, ns, f"{N:,} x {K:,} {dtype}  [{study.label(doc)}]")


def _finish(fig, ax, ns, title: str):
    """Axes of time against n, titled; the figure closed in pyplot (the cell shows it once)."""
    import matplotlib.pyplot as plt

    ax.set_xlabel("n (vectors)")
    ax.set_ylabel("ms")
    ax.set_xticks(ns)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    plt.close(fig)
    return fig


def explorer(ctx: Context):
    """Sliders for N, K, n and dtype: the kernel gemv chooses and why, the model's time (W's bytes and
    the vectors' over the read ceiling's bandwidth), and the recorded (or live) times."""
    import ipywidgets as widgets

    from ..api import explain
    from .sliders import _slider_view

    doc = ctx.recorded
    Ns = sorted({r["M"] for r in study.rows(doc)})
    Ks = sorted({r["K"] for r in study.rows(doc)})
    best = max(r["GBps"] for r in study.rows(doc) if r["kernel"] == "read ceiling")

    def show(N, K, n, dtype):
        dt = md.DTYPES[dtype]
        bw = ceiling_at(doc, N, K, dtype) if _rows(doc, N, K, dtype) else best  # this shape's, where recorded
        W = torch.empty(N, K, dtype=dt, device="cuda" if ctx.live else "meta")
        B = torch.empty(n, K, dtype=dt, device=W.device).t()
        if dt == torch.float32 and n == 1:
            print("float32 with one vector is notebook 05's dispatcher: pick n > 1 or a half dtype")
            return None
        print(explain(W, B))
        print(f"model: {md.bytes_moved(N, K, n, dt) / bw / 1e6:.4f} ms (the bytes moved over the read ceiling's "
              f"{bw:.0f} GB/s)")
        if ctx.live:
            got = study.measure_case(N, K, n, dtype, "live", False)
            print("live: " + ", ".join(f"{r['kernel']} {r['ms']:.4f} ms" for r in got))
        else:
            got = _rows(doc, N, K, dtype).get(n, {})
            print(("recorded: " + ", ".join(f"{k} {r['ms']:.4f} ms" for k, r in got.items())) if got else
                  "not recorded at this shape, dtype and n")
        return plot_vs_n(doc, N, K, dtype)

    return _slider_view({"N": widgets.SelectionSlider(options=Ns, value=14_336, description="N"),
                         "K": widgets.SelectionSlider(options=Ks, value=4096, description="K"),
                         "n": widgets.SelectionSlider(options=[1, 2, 3, 4, 8, 16], value=2, description="n"),
                         "dtype": widgets.Dropdown(options=list(md.DTYPES), value="bfloat16", description="dtype")},
                        show)
