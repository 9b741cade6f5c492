"""Exploration round 7 on the H200 (issue 9, not part of gemvlab), logged in round7/round7.txt.

Session 12's record left four outside shapes under 0.91 of the read ceiling: 3 x 50,000,001
(0.882), 8 x 30,000,000 (0.890), 64 x 1,000,003 (0.877) and 4,000,000 x 50 (0.769). Two new
designs, timed here as gemvlab builds them (dispatch.make_plan and make_launch on gemvlab/cuda):
* split_k with ROWS rows per block: the rows share each stretch of B in one block (B loaded once
  per trip where the rows are aligned like B), against one row per block, where every row's
  block reads B again, from the L2 at best;
* row_tiles: a block loads its rows as one flat stretch into shared memory, then G lanes sum
  each row, against rows_per_warp at short K.
Controls: split_k and rows_per_warp as committed before this round (round7/before/, launched with
their old argument list), so that a change in the one-row code shows. Every candidate is checked
against float64 and timed round-robin beside torch.matmul, the read ceiling and the rule's plan,
the L2 flushed by reading before each launch (gemvlab.bench's timer). Then the per-call cost.

    python tools/explore/round7.py OUT_DIR
"""
import sys
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch, kernels, overhead
from gemvlab.kernels import SPLIT_K, stage_occupancy

from dispatch_harness import OLD_ARGTYPES, Round

rnd = Round(Path(sys.argv[0]).stem, None, rounds=5, target_ms=60.0)  # the log: round7.jsonl, or round8.jsonl from round8.py
say, device, t_start = rnd.say, rnd.device, rnd.t_start
before_dir = Path(__file__).parent / "round7" / "before"
before = {}
for name in ("split_k", "rows_per_warp"):
    built = build.build(f"before_{name}", (before_dir / f"{name}.cu").read_text(),
                        headers={"any_alignment.cuh": (before_dir / "any_alignment.cuh").read_text()})
    before[name] = built.function(f"launch_{name}")
    before[name].argtypes = OLD_ARGTYPES


def before_launch(plan, A, B, C, P):
    """The plan (one row per block) run by the kernels as committed before this round."""
    M, K = A.shape
    variant = 2 * plan.loads + plan.b_vec if plan.kernel == "split_k" else plan.variant
    args = (A.data_ptr(), K, B.data_ptr(), C.data_ptr(), P.data_ptr(), M, K, plan.chunk, plan.splits, plan.block,
            variant, torch.cuda.current_stream().cuda_stream)
    fn = before[plan.kernel]
    return lambda: fn(*args)


def study(M, K, cands, label, offset=0):
    """cands: name -> Plan, or ("before", Plan)."""
    A, B, ref = rnd.inputs(M, K, label, offset)
    C = torch.empty(M, 1, device="cuda")
    P = torch.empty(max(1, M * max([getattr(c if not isinstance(c, tuple) else c[1], "splits", 1)
                                     for c in cands.values()] + [1])), device="cuda")
    rule = dispatch.launcher(A, B)
    fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    errs, meta = {}, {}
    for name, c in cands.items():
        if isinstance(c, tuple):
            f = before_launch(c[1], A, B, C, P)
            plan = c[1]
        else:
            launch = dispatch.make_launch(c, A.stride(0), True, A.device)
            f = (lambda launch: lambda: launch(A, B, C))(launch)
            plan = c
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        meta[name] = dict(kernel=plan.kernel, variant=plan.variant, block=plan.block, splits=plan.splits,
                          rows=plan.rows_per_block, G=plan.lanes_per_row, loads=plan.loads, before=isinstance(c, tuple))
        if not errs[name] < 1e-4:
            say(f"  {name}: WRONG, relative error {errs[name]:.2e}")
            continue
        fns[name] = f
    rnd.time_and_log(M, K, label, fns, errs, meta, A, ceiling=offset == 0)
    del A, B, ref, C, P
    torch.cuda.empty_cache()


def split_cands(M, K, b_vec):
    """split_k at ROWS 1, 2, 4, 8 (up to M's next power of two), 1 or 2 loads per trip, and splits
    for about 2 and 4 waves of blocks (the rule's TARGET_WAVES is 4)."""
    out = {}
    for rows in (1, 2, 4, 8):
        if rows > 1 and rows > dispatch._next_pow2(M):
            continue
        for loads in ((2,) if rows == 1 else (1, 2)):
            variant = 16 * rows + 2 * loads + b_vec
            slots = device.sms * stage_occupancy(SPLIT_K, 256, variant, device.limits).blocks_per_sm
            if slots == 0:
                continue
            groups = -(-M // rows)
            for waves in (2, 4):
                s = min(max(1, K // dispatch.MIN_CHUNK), max(1, waves * slots // groups))
                plan = dispatch.make_plan(M, K, "split_k", device, b_vec, 256, loads, s, rows_per_block=rows)
                out[f"split R={rows} L={loads} S={plan.splits} ({waves} waves of {slots})"] = plan
                if rows == 1 and waves == 4:
                    out[f"before split R=1 L=2 S={plan.splits}"] = ("before", plan)
    return out


def tile_cands(M, K, b_vec):
    out = {}
    for block in (128, 256):
        for G in (1, 2, 4, 8, 16, 32):
            if G <= block // 2 and dispatch.tile_fits(block // G, K, K) and G <= max(1, K):
                out[f"tiles G={G} b={block}"] = dispatch.make_plan(M, K, "row_tiles", device, False, block,
                                                                   lanes_per_row=G)
    for G in sorted({4, 8, min(32, max(4, dispatch._nearest_pow2(K / 32)))}):
        plan = dispatch.make_plan(M, K, "rows_per_warp", device, b_vec, 128, lanes_per_row=G)
        out[f"rows G={G} b=128"] = plan
        out[f"before rows G={G} b=128"] = ("before", plan)
    return out


def main():
    # 1. Few rows, long K: ROWS rows per block.
    for M, K in ((3, 50_000_001), (8, 30_000_000), (2, 40_000_000), (5, 20_000_003), (16, 16_777_216),
                 (12, 10_000_001), (50, 5_000_000), (64, 1_000_003), (128, 2_097_152), (300, 3_000_000),
                 (16, 1_048_576), (1, 67_108_864)):
        b_vec = K % 4 == 0 or M == 1
        study(M, K, split_cands(M, K, b_vec), "few rows")
    say(f"few rows done at {time.time() - t_start:.0f} s")
    # controls: one block per row, many rows (the headline and 4096 x 4099)
    for M, K in ((2048, 1_048_576), (4096, 4099), (20_000, 20_001)):
        b_vec = K % 4 == 0
        plan = dispatch.make_plan(M, K, "split_k", device, b_vec, 256, 2, 1)
        study(M, K, {"split R=1 L=2 S=1": plan, "before split R=1 L=2 S=1": ("before", plan)}, "one row per block")

    # 2. Short rows: row_tiles against rows_per_warp.
    for M, K in ((4_000_000, 50), (3_000_000, 33), (2_000_000, 96), (2_097_152, 128), (500_000, 200),
                 (1_000_000, 256), (1_000_000, 257), (300_000, 513), (6_000_000, 17), (10_000_000, 8),
                 (1024, 128), (16, 128), (100_000, 50)):
        study(M, K, tile_cands(M, K, K % 4 == 0), "short rows")
    say(f"short rows done at {time.time() - t_start:.0f} s")

    # 3. What a call costs beyond its kernel (paired), three times per shape.
    for M, K in ((4096, 4096), (1024, 1024)):
        for _ in range(3):
            r = overhead.measure(M, K)
            say(f"overhead {M}x{K}: launch alone {r['kernel_us']:.2f} us, gemv call {r['gemv_us']:.2f}, added (paired) "
                f"{r['added_us']:.2f}, torch.matmul {r['torch_us']:.2f}; host per call {r['host_us_per_call']:.2f} us "
                f"(torch {r['torch_host_us_per_call']:.2f}) [{r['plan']}]")
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
