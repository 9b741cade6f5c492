"""Exploration round 4 on the H200 (issue 9, not part of gemvlab): the shapes where the dispatcher
still misses its bar (tools/explore/final, gemvlab/recorded/h200.json: 7 of 49), with the
dispatcher kernels' fixed choices left open (round4.cu): lanes per row G, loads in flight, block
size, splits, and how B is read when it is not aligned like A (four scalars, or two aligned
float4s shifted into place). Every candidate is checked against float64 and timed round-robin
beside torch.matmul, the read ceiling and the rule's own plan, L2 flushed by reading before each
launch (gemvlab.bench's timer).

    python tools/explore/round4.py OUT_DIR
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
log = open(OUT / "round4.jsonl", "w")
fn = build.build("round4", (Path(__file__).parent / "round4.cu").read_text()).function("launch_round4")
fn.argtypes = dispatch._ARGTYPES
device = dispatch.Device.of()
t_start = time.time()


def say(*a):
    print(*a, flush=True)


def x_launch(A, B, C, P, kind, block, G=0, L=2, BM=1, splits=1):
    M, K = A.shape
    if kind == "empty":
        variant, chunk = 9, 0
    elif kind == "split":
        chunk = -(-(-(-K // splits)) // 4) * 4
        splits = -(-K // chunk)
        variant = 100 + 10 * L + BM
    else:
        variant, chunk = 20000 + 100 * G + 10 * L + BM, 0
    s = torch.cuda.current_stream().cuda_stream
    args = (A.data_ptr(), K, B.data_ptr(), C.data_ptr(), P.data_ptr(), M, K, chunk, splits, block, variant, s)

    def f():
        rc = fn(*args)
        assert rc == 0, (kind, block, G, L, BM, splits, rc)
    return f


def timed(fns, rounds=3, target_ms=40.0):
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


def study(M, K, cands, label, offset=0):
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
    if (M * K) % 4 == 0 and offset == 0:
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


def rows(G, L, block, BM=1):
    return dict(kind="rows", G=G, L=L, block=block, BM=BM)


def split(splits, L, block, BM=1):
    return dict(kind="split", splits=splits, L=L, block=block, BM=BM)


# 1. Small shapes (latency-bound: far less data than the GPU can have in flight). What does a
#    launch with nothing to do cost under this timer, and how few round trips can a plan make?
A0 = torch.zeros(16, 128, device="cuda")
for M, K in ((16, 128), (128, 128), (1024, 128), (8192, 128), (16, 1024), (128, 1024), (1024, 1024), (8192, 1024)):
    cands = {"empty kernel": dict(kind="empty", block=32)}
    for G in (4, 8, 16, 32):
        for L in (1, 2, 4, 8):
            if (K // 4) // G >= L:  # every lane has L float4s at least
                for block in (128, 256):
                    cands[f"rows G={G} L={L} b={block}"] = rows(G, L, block)
    if M <= 1024 and K >= 1024:
        for block in (64, 128, 256):
            cands[f"split S=1 L=2 b={block}"] = split(1, 2, block)
    A, B, rule, fns = study(M, K, cands, "small")
    if (M, K) in ((16, 128), (1024, 1024)):
        for name in ("empty kernel", "torch.matmul", next(n for n in fns if n.startswith("rule"))):
            say(f"  no flush: {name:<30} {unflushed(fns[name]) * 1e3:7.2f} us")
    del A, B, rule, fns
for M, K in ((1, 8192), (16, 8192), (1, 65536), (16, 65536), (128, 65536), (1, 1048576), (16, 1048576)):
    cands = {}
    for s in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        if K // s >= 1024 and M * s <= 8 * 132 * 8:
            for block in (64, 128, 256, 512):
                for L in (2, 4):
                    if K // s // 4 // block >= L:
                        cands[f"split S={s} L={L} b={block}"] = split(s, L, block)
    study(M, K, cands, "small, long rows")
say(f"small done at {time.time() - t_start:.0f} s")
torch.cuda.empty_cache()

# 2. Many short rows: which G, loads and block reach the read ceiling?
for M, K, bms in ((2_000_000, 96, (1,)), (2_097_152, 128, (1,)), (524_288, 128, (1,)), (1_000_000, 256, (1,)),
                  (1_000_000, 257, (0, 2)), (1_000_000, 260, (1,)), (262_144, 1024, (1,))):
    cands = {}
    for G in (1, 2, 4, 8, 16, 32):
        for L in (1, 2, 4, 8):
            for BM in bms:
                if L in (1, 8) and BM == 0:
                    continue
                if (K // 4) // G >= L and G * 4 <= K:
                    for block in (128, 256, 512):
                        cands[f"rows G={G} L={L} b={block} B{BM}"] = rows(G, L, block, BM)
    study(M, K, cands, "short rows")
    torch.cuda.empty_cache()
say(f"short rows done at {time.time() - t_start:.0f} s")

# 3. Few long rows whose B is not aligned like A (K % 4 != 0): scalar B against the funnel, and
#    the same shape with K % 4 == 0 for what alignment costs.
for M, K, bms in ((3, 50_000_001, (0, 2)), (3, 50_000_000, (1, 2)), (64, 1_000_003, (0, 2)), (64, 1_000_000, (1, 2)),
                  (4096, 4099, (0, 2)), (20_000, 20_001, (0, 2))):
    cands = {}
    slots = device.sms * 8
    for waves in (1, 2, 4, 8):
        s = max(1, min(K // 8192, (waves * slots) // M))
        for L in (2, 4):
            for BM in bms:
                for block in (256, 512):
                    cands[f"split S={s} L={L} b={block} B{BM}"] = split(s, L, block, BM)
    study(M, K, cands, "few rows, odd K" if K % 4 else "few rows, K % 4 == 0")
    torch.cuda.empty_cache()
# a view that starts mid-row: B aligned, every row's A 4 bytes off (the funnel's other case)
study(64, 1_000_000, {f"split S=66 L=2 b=256 B{bm}": split(66, 2, 256, bm) for bm in (0, 2)}, "A one float in", offset=1)
say(f"all done at {time.time() - t_start:.0f} s")
