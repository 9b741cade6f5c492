"""Exploration round 11 on the H200 (issue 9, not part of gemvlab), logged in round11/round11.txt.

The counters of round 10 (round10/counters.txt) timed split_k's reduce at 3 to 6 us: one warp per
row read a row's partial sums (4224 at M = 1, K = 2^26) in dependent trips. gemvlab's reduce now
takes one block of 256 threads per row. Here the rule's plans with it against the same plans run
by split_k.cu as it was before (round11/before/, one warp per row), and the same with about 2
waves of blocks instead of 4 (fewer partial sums). Then the rule's row_tiles plans against
rows_per_warp at K = 8 to 64, as a check of the rule as written. The timing is round 7's.

    python tools/explore/round11.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

from round7 import device, rnd, say, t_start

here = Path(__file__).parent / "round11" / "before"
before = build.build("round11_before_split_k", (here / "split_k.cu").read_text(),
                     headers={n: (here / n).read_text() for n in ("any_alignment.cuh", "launch_args.cuh")}
                     ).function("launch_split_k")
before.argtypes = dispatch._ARGTYPES


def before_launch(plan, A, B, C, P):
    M, K = A.shape
    args = dispatch.LaunchArgs(K, M, K, plan.chunk, plan.splits, plan.block, plan.variant, plan.grid)
    stream = torch.cuda.current_stream().cuda_stream
    return lambda: before(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr(), ctypes.addressof(args), stream)


def study(M, K, cands, label):
    """cands: name -> Plan (gemvlab's kernels) or ("before", Plan)."""
    A, B, ref = rnd.inputs(M, K, label)
    C = torch.empty(M, 1, device="cuda")
    P = torch.empty(M * max(c[1].splits if isinstance(c, tuple) else c.splits for c in cands.values()), device="cuda")
    fns, errs = {"torch.matmul": lambda: torch.matmul(A, B)}, {}
    for name, c in cands.items():
        if isinstance(c, tuple):
            f = before_launch(c[1], A, B, C, P)
        else:
            launch = dispatch.make_launch(c, K, True, A.device)
            f = (lambda launch: lambda: launch(A, B, C))(launch)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        if errs[name] < 1e-4:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, label, fns, errs, {n: (c[1] if isinstance(c, tuple) else c).name for n, c in cands.items()},
                     A)
    del A, B, ref, C, P
    torch.cuda.empty_cache()


for M, K in ((1, 67_108_864), (1, 16_777_216), (1, 1_048_576), (1, 65_536), (3, 50_000_000), (3, 50_000_001),
             (8, 30_000_000), (16, 16_777_216), (16, 1_048_576), (16, 65_536), (128, 2_097_152), (64, 1_000_003)):
    rule = dispatch.choose(M, K, K, 0, 0, device)
    cands = {"rule " + rule.name: rule, "before " + rule.name: ("before", rule)}
    if rule.splits > 1:
        variant = rule.variant
        slots = device.sms * dispatch.stage_occupancy(dispatch.SPLIT_K, rule.block, variant, device.limits).blocks_per_sm
        s2 = max(1, min(K // dispatch.MIN_CHUNK, 2 * slots // -(-M // rule.rows_per_block)))
        two = dispatch.make_plan(M, K, "split_k", device, rule.b_vec, rule.block, rule.loads, s2,
                                 rows_per_block=rule.rows_per_block)
        cands[f"2 waves {two.name}"] = two
        cands[f"before 2 waves {two.name}"] = ("before", two)
    study(M, K, cands, "reduce")
say(f"reduce done at {time.time() - t_start:.0f} s")
for M, K in ((10_000_000, 8), (6_000_000, 16), (6_000_000, 17), (4_000_000, 32), (3_000_000, 33),
             (4_000_000, 50), (3_000_000, 63), (3_000_000, 64), (2_500_000, 65), (100_000, 50)):
    rule = dispatch.choose(M, K, K, 0, 0, device)
    cands = {"rule " + rule.name: rule,
             "rows G=4 b=128": dispatch.make_plan(M, K, "rows_per_warp", device, K % 4 == 0, 128, lanes_per_row=4)}
    study(M, K, cands, "tiles")
say(f"all done at {time.time() - t_start:.0f} s")
