"""Timing harness for the exploration rounds on the H200 (not part of gemvlab). Round 2 asked:
  1. How much does the timer's L2 flush (do_bench writes 256 MB of zeros before each launch,
     leaving dirty lines that the kernel then has to write back) add, at 8 GiB and at 1 GiB?
  2. Is the grid-stride read ceiling the fastest way to read A, or does one block per row read faster?
  3. Which stage-4 design (loads in flight, block, load hint, persistent grid) beats stage 3 in
     every round, not just in the median?
  4. For short rows (K = 1024, K = 128), does ROWS rows per warp beat stage 4 and today's stage 5?
Every configuration is visited in turn, `rounds` times; per-round ratios show how consistent a win is."""
import statistics, subprocess, sys, time
from pathlib import Path
import torch
from triton.testing import do_bench
from gemvlab import bench, build
from gemvlab.kernels import prepare, read_ceiling_launcher

here = Path(__file__).parent
fn = build.build("round2", (here / "round2.cu").read_text()).function("launch_round2")
SMS = torch.cuda.get_device_properties(0).multi_processor_count
FLUSH = torch.empty(256 * 2**20 // 4, dtype=torch.float32, device="cuda").uniform_()
SCALAR = torch.empty((), device="cuda")


def raw(A, B, C, block, variant):
    M, K = A.shape
    s = torch.cuda.current_stream().cuda_stream
    args = (A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, block, variant, s)
    def f():
        rc = fn(*args)
        assert rc == 0, rc
    return f


def events(f, n, flush):
    f(); torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in ev:
        if flush == "zero":
            FLUSH.zero_()
        elif flush == "read":
            torch.sum(FLUSH, dim=0, out=SCALAR)
        s.record(); f(); e.record()
    torch.cuda.synchronize()
    if flush == "zero":
        FLUSH.uniform_()
    return [s.elapsed_time(e) for s, e in ev]


TIMERS = {
    "read": lambda f, n: events(f, n, "read"),     # L2 flushed by reading 256 MB: clean lines
    "zero": lambda f, n: events(f, n, "zero"),     # what do_bench does: 256 MB of zeros written
    "none": lambda f, n: events(f, n, None),       # back to back
    "do_bench": lambda f, n: do_bench(f, warmup=5, rep=max(1, int(n * est_ms[0])), return_mode="all"),
}
est_ms = [1.0]


def run(M, K, configs, rounds, timers=("read",), subset_timers=(), subset=(), spacer_gb=0, label=""):
    spacer = torch.empty(int(spacer_gb * 2**30), dtype=torch.uint8, device="cuda") if spacer_gb else None
    A, B = bench.random_inputs(M, K, seed=1)
    ref = bench.reference(A, B)
    C = torch.empty(M, device="cuda")
    launches = {}
    for name, kind, block, variant in configs:
        err = None
        if kind == "x":
            C.fill_(float("nan"))
            f = raw(A, B, C, block, variant)
            f(); torch.cuda.synchronize()
            if variant // 1000 in (1, 4):
                err = bench.relative_error(C, ref)
        elif kind == "ceiling":
            f = read_ceiling_launcher(A, block, SMS * variant)
        elif kind == "torch":
            f = lambda: torch.matmul(A, B)
        else:
            f, Cv = prepare(A, B, kind, block, variant)
            Cv.fill_(float("nan")); f(); torch.cuda.synchronize()
            err = bench.relative_error(Cv, ref)
        launches[name] = (f, err)
    t0 = time.perf_counter()
    one = {n: statistics.median(events(f, 3, None)) for n, (f, _) in launches.items()}
    times = {(n, t): [] for n in launches for t in set(timers) | set(subset_timers)}
    per_round = {(n, t): [] for (n, t) in times}
    for r in range(rounds):
        for n, (f, _) in launches.items():
            reps = max(10, int(40 / one[n]))
            est_ms[0] = one[n]
            for t in timers + (subset_timers if n in subset else ()):
                x = TIMERS[t](f, reps)
                times[(n, t)] += x
                per_round[(n, t)].append(statistics.median(x))
    first = configs[0][0]
    print(f"\n{label} M={M} K={K} rounds={rounds} ({time.perf_counter() - t0:.0f} s); "
          f"floor at 4.8 TB/s {bench.bytes_moved(M, K) / 4.8e9:.4f} ms")
    for t in TIMERS:
        if (first, t) not in times:
            continue
        print(f"  timer {t}: median ms, iqr, vs '{first}' (median; worst and best round)")
        for n in launches:
            if (n, t) not in times or not times[(n, t)]:
                continue
            x = times[(n, t)]
            med = statistics.median(x)
            q = statistics.quantiles(x, n=4)
            ratios = [a / b for a, b in zip(per_round[(first, t)], per_round[(n, t)])]
            e = launches[n][1]
            es = "" if e is None else f" err {e:.1e}"
            print(f"    {n:30} {med:8.4f}  {q[0]:.4f}-{q[2]:.4f}  {bench.gbps(bench.bytes_moved(M, K), med):6.0f} GB/s"
                  f"  x{statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]{es}")
    sys.stdout.flush()
    del A, B, C, spacer, launches
    torch.cuda.empty_cache()


def smi():
    print(subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip(), flush=True)


