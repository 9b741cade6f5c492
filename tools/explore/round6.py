"""Exploration round 6 on the H200 (issue 9, not part of gemvlab), logged in round6/round6.txt:
MODE 2 of round 5 (the head and tail loaded first, a predicated last trip) against MODE 3 (the
same, with a head that runs to the next 128-byte line, so that the body starts on a line), at
rows that do not start on a line and at controls that do, with G near the rule's. The timing
machinery is round4.py's, copied as it ran.
Every candidate is checked against float64 and timed round-robin beside torch.matmul, the read
ceiling and the rule's own plan, the L2 flushed by reading before each launch (gemvlab.bench's timer).

    python tools/explore/round6.py OUT_DIR
"""
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch
from gemvlab.kernels import read_ceiling_launcher

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp")
log = open(OUT / "round6.jsonl", "w")
fn = build.build("round6", (Path(__file__).parent / "round6.cu").read_text()).function("launch_round6")
fn.argtypes = dispatch._ARGTYPES
device = dispatch.Device.of()
t_start = time.time()


def say(*a):
    print(*a, flush=True)


def x_launch(A, B, C, P, kind, block, G=0, L=2, BM=1, splits=1, MODE=0):
    M, K = A.shape
    if kind == "empty":
        variant, chunk = 9, 0
    elif kind == "split":
        chunk = -(-(-(-K // splits)) // 4) * 4
        splits = -(-K // chunk)
        variant = 1000 + 100 * L + 10 * BM + MODE
    else:
        variant, chunk = 200000 + 1000 * G + 100 * L + 10 * BM + MODE, 0
    s = torch.cuda.current_stream().cuda_stream
    args = (A.data_ptr(), K, B.data_ptr(), C.data_ptr(), P.data_ptr(), M, K, chunk, splits, block, variant, s)

    def f():
        rc = fn(*args)
        assert rc == 0, (kind, block, G, L, BM, splits, rc)
    return f


def timed(fns, rounds=5, target_ms=60.0):
    """name -> (median, q25, q75, n): every launch alone, L2 flushed before it, round-robin."""
    n = {}
    for name, f in fns.items():
        f()
        torch.cuda.synchronize()
        est = max(bench._one_launch_ms(f), 0.002)
        n[name] = max(20, min(300, int(target_ms / (est + 0.06) / rounds)))
        for _ in range(3):
            f()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, f in fns.items():
            times[name] += bench._timed_launches(f, n[name])
    out = {}
    for name, t in times.items():
        q = statistics.quantiles(t, n=4)
        out[name] = (statistics.median(t), q[0], q[2], len(t))
    return out


def unflushed(f, n=300):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in ev:
        s.record(); f(); e.record()
    torch.cuda.synchronize()
    return statistics.median([s.elapsed_time(e) for s, e in ev])


def study(M, K, cands, label, offset=0, ceiling=True):
    """cands: name -> dict(kind=..., block=..., G, L, BM, splits). offset: A starts this many
    floats into its allocation (0: aligned)."""
    say(f"== {label}: M={M:,} K={K:,}")
    base = torch.rand(M * K + offset + 4, device="cuda")
    A = base[offset:offset + M * K].view(M, K)
    B = torch.rand(K, 1, device="cuda")
    ref = bench.reference(A, B)
    C = torch.empty(M, 1, device="cuda")
    P = torch.empty(max(1, M * max([c.get("splits", 1) for c in cands.values()] + [1])), device="cuda")
    fns, errs, plans = {}, {}, {}
    rule_plan = dispatch.plan_for(A, B)
    rule = dispatch.launcher(A, B)
    fns["rule " + rule_plan.name] = lambda: rule(A, B)
    fns["torch.matmul"] = lambda: torch.matmul(A, B)
    for name, c in cands.items():
        try:
            f = x_launch(A, B, C, P, **c)
            C.fill_(float("nan"))
            f()
            torch.cuda.synchronize()
        except AssertionError as e:
            say(f"  {name}: launch failed {e}")
            continue
        errs[name] = bench.relative_error(C, ref) if c["kind"] != "empty" else 0.0
        if not errs[name] < 1e-4:
            say(f"  {name}: WRONG, relative error {errs[name]:.2e}")
            continue
        fns[name] = f
    ceiling_ms = None
    if (M * K) % 4 == 0 and offset == 0 and ceiling:
        pick = bench.measure_read_ceiling(A, warmup_ms=3, rep_ms=15)
        fns["read ceiling"] = read_ceiling_launcher(A, pick["block"], pick["variant"])
    t = timed(fns)
    nbytes = bench.bytes_moved(M, K)
    if "read ceiling" in t:
        ceiling_ms = t["read ceiling"][0]
    torch_ms = t["torch.matmul"][0]
    for name, (ms, q25, q75, n) in sorted(t.items(), key=lambda kv: kv[1][0]):
        of_ceiling = (nbytes / ms) / (4 * M * K / ceiling_ms) if ceiling_ms and name != "read ceiling" else None
        say(f"  {name:<34} {ms * 1e3:9.2f} us [{q25 * 1e3:.2f} {q75 * 1e3:.2f}] n={n:4} vs torch {torch_ms / ms:5.2f}x"
            + (f"  of ceiling {of_ceiling:.3f}" if of_ceiling else ""))
        log.write(json.dumps(dict(M=M, K=K, label=label, name=name, ms=ms, q25=q25, q75=q75, n=n, vs_torch=torch_ms / ms,
                                  of_ceiling=of_ceiling, err=errs.get(name), cand=cands.get(name))) + "\n")
    log.flush()
    return A, B, rule, fns


def rows(G, L, block, BM=1, MODE=0):
    return dict(kind="rows", G=G, L=L, block=block, BM=BM, MODE=MODE)


def split(splits, L, block, BM=1, MODE=0):
    return dict(kind="split", splits=splits, L=L, block=block, BM=BM, MODE=MODE)


def near_pow2(x):
    import math
    return 1 << max(0, round(math.log2(max(x, 1))))


# Rows that do not start on a 128-byte line (K * 4 not a multiple of 128, or a view): MODE 2 (body
# from the first 16-byte boundary) against MODE 3 (body from the first 128-byte boundary), with
# rows whose every start is a line as controls (K = 96, 1024, 1,000,000).
for M, K, BM in ((1_000_000, 257, 0), (1_000_000, 260, 1), (1_000_000, 256, 1), (2_000_000, 96, 1), (1_000_000, 100, 1),
                 (3_000_000, 33, 0), (1_000_000, 513, 0), (1000, 500, 1), (16, 128, 1), (1024, 1024, 1), (100, 100, 1),
                 (200_000, 1000, 1), (131_072, 2047, 0)):
    G = min(32, max(4, near_pow2(K / 16)))
    c = {}
    for g in sorted({G, max(4, G // 2), min(32, G * 2)}):
        for mode in (2, 3):
            c[f"rows G={g} L=4 b=128 B{BM} m{mode}"] = rows(g, 4, 128, BM, mode)
    study(M, K, c, "rows")
    torch.cuda.empty_cache()
for M, K, BM, s, offset in ((64, 1_000_003, 0, 66, 0), (64, 1_000_000, 1, 66, 0), (64, 1_000_000, 0, 66, 1),
                            (4096, 4099, 0, 1, 0), (4096, 4096, 1, 1, 0), (4096, 4100, 1, 1, 0), (20_000, 20_001, 0, 1, 0),
                            (3, 50_000_001, 0, 1408, 0), (3, 50_000_000, 1, 1408, 0), (16, 16_777_216, 1, 264, 0),
                            (2048, 1_048_576, 1, 1, 0), (100_000, 3000, 1, 1, 0), (30_000, 30_001, 0, 1, 0)):
    c = {f"split S={s} L=2 b=256 B{BM} m{mode}": split(s, 2, 256, BM, mode) for mode in (2, 3)}
    study(M, K, c, "long rows", offset=offset, ceiling=M * K < 2**31)
    torch.cuda.empty_cache()
say(f"all done at {time.time() - t_start:.0f} s")
