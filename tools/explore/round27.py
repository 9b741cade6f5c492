"""Exploration round 27 on the H200 (issue 9, not part of gemvlab), logged in round27/round27.txt.

Round 26 (round26/round26.txt) found that row_tiles at odd K misses the bar far beyond the three
recorded shapes: at M = 90,000,000 / K, 0.79 to 0.89 of the read ceiling at K = 9, 11, 17, 19 and
33 to 47. Round 20's counters at 2,000,000 x 45 gave about 0.7 warp instructions per cycle per
scheduler, and the SASS of sum_row spends 45 instructions on 4 columns (8 LDS, 4 FFMA, the rest
the per-column wrap check, dead at odd strides). So:
* part B, gemvlab's row_tiles with the sum as straight runs of columns (round27.cu: same columns,
  same order, same bits; about 17 instructions for 4 columns), at the rule's tile, block and G,
  at every K from 8 to 64, M = 90,000,000 / K, against the rule;
* part A, few rows not aligned like B (the rule: about 4 waves of blocks): split into 2 to 16
  waves, at 500 x 1,000,001 (0.98x torch.matmul in session 15's record), 64 x 1,000,003 (0.894)
  and their kind, with two aligned shapes for comparison.
Every candidate is checked against float64 and timed round-robin beside the rule, torch.matmul and
the read ceiling (round 7's timing).

What it found (round27/round27.txt): part B, the straight runs did not pay. At the 28 odd K
they took 2.2 to 4.7% less time than the rule at K = 17, 19, 21, 23 and 39, tied (within 0.5%)
at 15, 25, 27, 29 and 33, and took 1.7 to 6.6% more at 16 others and 15% more at K = 9 and 11; at
even K, where the rotation makes the second run, 14 to 83% more. Fewer instructions per column is
not what limits row tiles at odd K (as round 20's SEG found). The rule itself ran under 0.91 of
the read ceiling at 52 of the 57 K, 0.78 at K = 39. Part A: at
all 8 shapes not aligned like B, splits for 12 waves or more (or as many as MIN_CHUNK allows)
ran faster than the rule's 4: 500 x 1,000,001 at 0.954 of the read ceiling against 0.916
(torch.matmul 0.937), 400 x 1,000,001 0.954 against 0.913, 300 x 1,000,001 0.954 against 0.919,
200 x 2,000,001 0.942 against 0.899, 128 x 2,097,153 0.924 (99 stretches; 132 gave 0.935) against
0.900, 100 x 1,000,001 0.918 against 0.894, 64 x 1,000,003 0.897 against 0.885 and 32 x 2,000,003
0.884 against 0.877 (the last three at MIN_CHUNK's limit). Aligned, 500 x 1,000,000 gained too
(0.982 at 25 stretches against 0.943 at 8) but 64 x 1,000,000 did best at 2 to 3 waves (0.926;
0.909 at 7.4, 0.915 at the rule's 4). gemvlab/dispatch.py's UNEVEN_WAVES (12) comes from here.

    python tools/explore/round27.py OUT_DIR
"""
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

from round20 import study
from round7 import device, rnd, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
runs_fn = build.build("round27", (here / "round27.cu").read_text(),
                      headers={"row_tiles.cu": (here / "round34" / "row_tiles.cu").read_text(),  # as rounds 27 to 34 ran it
                               "launch_args.cuh": (cuda / "launch_args.cuh").read_text()}
                      ).function("launch_round27_tiles")
runs_fn.argtypes = dispatch._ARGTYPES


def runs_cands(A, plan):
    assert plan.kernel == "row_tiles", plan.name
    args = dispatch.LaunchArgs(A.stride(0), plan.M, plan.K, 0, 1, plan.block, plan.variant, 0)
    return {f"runs {plan.name} b={plan.block}": (runs_fn, args)}


def waves_study(M, K):
    """round25's comparison: gemvlab's split_k at several stretch counts, against the rule."""
    A, B, ref = rnd.inputs(M, K, "few rows, waves")
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    slots = device.sms * 8
    most = max(1, K // dispatch.MIN_CHUNK)
    errs, cands = {}, {}
    for waves in (2, 3, 6, 8, 12, 16):
        splits = min(most, max(1, round(waves * slots / M)))
        if splits == rule.plan.splits or any(c == splits for c in cands.values()):
            continue
        plan = dispatch.make_plan(M, K, "split_k", device, rule.plan.b_vec, 256, loads=2, splits=splits)
        launch = dispatch.make_launch(plan, K, True, A.device)
        name = f"x {plan.splits} ({M * plan.splits / slots:.2f} waves)"
        cands[name] = splits
        f = lambda launch=launch: launch(A, B, C)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        if errs[name] < 1e-5:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, "few rows, waves", fns, errs, cands, A)
    del A, B, ref, C
    torch.cuda.empty_cache()


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for K in range(8, 65):
        M = 90_000_000 // K
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K, 0, "tiles, straight runs", runs_cands)
    say(f"part B done at {time.time() - t_start:.0f} s")
    for M, K in ((500, 1_000_001), (400, 1_000_001), (300, 1_000_001), (200, 2_000_001), (100, 1_000_001),
                 (64, 1_000_003), (32, 2_000_003), (128, 2_097_153), (500, 1_000_000), (64, 1_000_000)):
        waves_study(M, K)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
