"""Exploration round 1 on the H200 for the dispatcher (issue 9), the model's latency (issue 7) and
what stage 4's steps and torch.matmul do (issue 8). One run, logged to tools/explore/h200-dispatch-round1.txt.

    python tools/explore/dispatch_round1.py OUT_DIR

1. memory latency (pointer chase), the SM clock and an empty launch;
2. per shape (the reference sweep and shapes outside it): torch.matmul, the read ceiling, the
   rule's plan and the plans around it, each checked against float64, timed round-robin
   (L2 flushed by reading before each launch), 3 rounds;
3. what a gemv call costs beyond its kernel;
4. the kernels torch.matmul launches at the headline shape (torch.profiler);
5. stage 4 taken apart at small blocks (headline, M = 16, M = 128).
"""
import json
import sys
import time

import torch

from gemvlab import bench, dispatch, latency, overhead, profile

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
SECTIONS = set(sys.argv[2:]) or {"latency", "shapes", "overhead", "profile", "steps", "pitfalls", "ncu"}
log = open(f"{OUT}/dispatch_round1.jsonl", "w")


def say(*a):
    print(*a, flush=True)


def record(**row):
    log.write(json.dumps(row) + "\n")
    log.flush()


SWEEP = [(16, 16777216), (128, 2097152), (1024, 262144), (16384, 16384), (262144, 1024),
         (2097152, 128), (4096, 4099), (1, 67108864), (8192, 8192)]
OUTSIDE = [(3, 50_000_001), (50, 5_000_000), (700, 400_000), (100_000, 3000), (1_000_000, 257),
           (64, 1_000_003), (4096, 4096)]

t0 = time.time()
def section_latency():
    say("== latency")
    mem = latency.measure()
    say(mem)
    record(kind="latency", **mem)


def candidates(M, K, b_vec):
    rule = dispatch.choose(M, K, K, 0, 0 if b_vec else 4, device)
    plans = {"rule": rule}
    if K <= 8192:
        for g in (4, 8, 16, 32):
            if g * 4 <= max(4, K) * 2:
                plans[f"rows G={g}"] = dispatch.make_plan(M, K, "rows_per_warp", device, b_vec, 256, lanes_per_row=g)
    if K >= 1024:
        for loads in (2, 4):
            for block in (256, 512):
                plans[f"split S=1 L={loads} b={block}"] = dispatch.make_plan(M, K, "split_k", device, b_vec, block, loads, 1)
        if M < 4000:
            for loads in (2, 4):
                bps = dispatch.stage_occupancy(dispatch.SPLIT_K, 256, 2 * loads + b_vec, device.limits).blocks_per_sm
                slots = device.sms * bps
                for waves in (1, 2, 4):
                    s = max(2, (waves * slots) // M)
                    if K // s >= 1024:
                        plans[f"split S={s} L={loads} w={waves}"] = dispatch.make_plan(M, K, "split_k", device, b_vec,
                                                                                       256, loads, s)
    return plans



def section_shapes():
    global A, B
    for M, K in SWEEP + OUTSIDE:
        say(f"== M={M} K={K}")
        A, B = bench.random_inputs(M, K)
        ref = bench.reference(A, B)
        b_vec = K % 4 == 0
        fns = {"torch.matmul": lambda: torch.matmul(A, B)}
        errs = {"torch.matmul": bench.relative_error(torch.matmul(A, B), ref)}
        plans = candidates(M, K, b_vec)
        for name, plan in plans.items():
            launch = dispatch.make_launch(plan, K, True, A.device)
            C = torch.full((M, 1), float("nan"), device="cuda")
            launch(A, B, C)
            errs[name] = bench.relative_error(C, ref)
            fns[name] = (lambda launch=launch: launch(A, B))
        if (M * K) % 4 == 0:
            pick = bench.measure_read_ceiling(A, warmup_ms=5, rep_ms=20)
            from gemvlab.kernels import read_ceiling_launcher
            fns["read ceiling"] = read_ceiling_launcher(A, pick["block"], pick["variant"])
        timed = bench.time_round_robin(fns, rounds=3, warmup_ms=5, rep_ms=40, budget_s=10)
        nbytes = bench.bytes_moved(M, K)
        torch_ms = timed["torch.matmul"].ms
        ceil = timed.get("read ceiling")
        for name, t in sorted(timed.items(), key=lambda kv: kv[1].ms):
            gbps = (4 * M * K if name == "read ceiling" else nbytes) / (t.ms * 1e-3) / 1e9
            plan = plans.get(name)
            say(f"  {name:<26} {t.ms:8.4f} ms [{t.q25_ms:.4f} {t.q75_ms:.4f}] {gbps:6.0f} GB/s "
                f"vs torch {torch_ms / t.ms:5.2f}x" + (f" of ceiling(BW) {gbps / (4 * M * K / (ceil.ms * 1e-3) / 1e9):5.3f}" if ceil else "")
                + (f" err {errs[name]:.1e}" if name in errs else "") + (f"  {plan.name} grid {plan.grid}" if plan else ""))
            record(kind="time", M=M, K=K, name=name, plan=plan.name if plan else None, ms=t.ms, q25=t.q25_ms, q75=t.q75_ms,
                   n=t.n, GBps=gbps, err=errs.get(name))
        del A, B, ref, fns
        torch.cuda.empty_cache()
    say(f"shapes done at {time.time() - t0:.0f} s")


def section_overhead():
    global A, B
    say("== overhead")
    for M, K in ((4096, 4096), (1024, 1024), (8192, 8192)):
        r = overhead.measure(M, K)
        say(r)
        record(kind="overhead", **r)


def section_profile():
    global A, B
    say("== torch.matmul at the headline (torch.profiler)")
    A, B = bench.random_inputs(2048, 1048576)
    ks = profile.kernels_of(lambda: torch.matmul(A, B))
    profile.show(ks)
    record(kind="profile", kernels=ks)


def section_steps():
    global A, B
    say("== stage 4 taken apart")
    from gemvlab.kernels import STAGE4_STEP  # noqa: E402

    for M, K, blocks in ((2048, 1048576, (32, 64, 128, 256)),):  # M = 16 and 128: in the record
        A = B = None
        torch.cuda.empty_cache()
        A, B = bench.random_inputs(M, K)
        launch = {}
        for block in blocks:
            for name, st, v in (("3 vectorized", "vectorized", 0), ("4a shuffle", STAGE4_STEP, 1),
                                ("4b +2 loads", STAGE4_STEP, 2), ("4 +ldcg", "warp_shuffle", 2)):
                from gemvlab.kernels import prepare
                launch[(block, name)], _ = prepare(A, B, st, block, v)
        timed = bench.time_round_robin(launch, rounds=5, warmup_ms=5, rep_ms=60, budget_s=20)
        for (block, name), t in timed.items():
            say(f"  M={M} block {block:4} {name:<14} {t.ms:8.4f} ms [{t.q25_ms:.4f} {t.q75_ms:.4f}] n={t.n}")
            record(kind="steps", M=M, K=K, block=block, name=name, ms=t.ms, q25=t.q25_ms, q75=t.q75_ms, n=t.n)
    say(f"done at {time.time() - t0:.0f} s")


def section_pitfalls():
    global A, B
    say("== pitfall demos changed for issue 7")
    from gemvlab import pitfalls  # noqa: E402

    for demo in ("sticky_error", "small_overrun", "smem_sanitizer", "missing_sync"):
        try:
            r = pitfalls.run(demo)
            pitfalls.show(r)
            record(kind="pitfall", demo=demo, result=r)
        except Exception as e:  # noqa: BLE001 - an exploration: keep going
            say(f"  {demo} failed: {e}")


def section_ncu():
    global A, B
    say("== ncu smoke test (M = 256, K = 65536) and the wavefront metrics ncu knows")
    import subprocess  # noqa: E402

    from gemvlab import counters, toolchain  # noqa: E402

    try:
        rows = counters.run(256, 65536)
        counters.show(rows)
        record(kind="counters_smoke", rows=rows)
        q = subprocess.run([toolchain.find_tool("ncu") or "ncu", "--query-metrics", "--chip", "gh100"],
                           capture_output=True, text=True, timeout=120)
        say("\n".join(ln for ln in q.stdout.splitlines() if "wavefront" in ln and "l1tex__data" in ln)[:3000])
    except Exception as e:  # noqa: BLE001
        say(f"  ncu failed: {e}")
    say(f"all done at {time.time() - t0:.0f} s")


device = dispatch.Device.of()
for name in ("latency", "shapes", "overhead", "profile", "steps", "pitfalls", "ncu"):
    if name in SECTIONS:
        try:
            globals()[f"section_{name}"]()
        except Exception as e:  # noqa: BLE001 - an exploration: report and go on
            import traceback
            say(f"section {name} failed: {e}")
            traceback.print_exc()
say(f"all done at {time.time() - t0:.0f} s")
