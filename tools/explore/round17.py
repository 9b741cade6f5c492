"""Exploration round 17 on the H200 (issue 9, not part of gemvlab), logged in round17/round17.txt.

A check, not a search. After the record of session 14 (tools/explore/final14), a cold read found
that dot_rows_shuffled multiplied A's zeros (past a row's last float4) by B, so an infinity in B
gave NaN where torch.matmul gives the infinity; gemvlab's kernel now skips those products. Here
the rule's plan (gemvlab's kernel as it now is) against round 15's kernel as the record measured
it (round15.cu, 4 rows per block, 1 load), at the shapes where the rule shares B through
shuffles, and at 64 x 1,000,003 (one row per block, unchanged), each checked against float64 and
timed round-robin beside torch.matmul and the read ceiling (round 7's timing).

    python tools/explore/round17.py OUT_DIR
"""
import time

import torch

from gemvlab import bench, dispatch

import round15
from round7 import rnd, say, t_start


def main():
    for M, K, offset in ((3, 50_000_001, 0), (40, 6_000_001, 0), (16, 16_777_217, 0), (12, 10_000_001, 0),
                         (8, 30_000_000, 2), (64, 1_000_003, 0)):
        A, B, ref = rnd.inputs(M, K, "check", offset)
        C = torch.empty(M, 1, device="cuda")
        rule = dispatch.launcher(A, B)
        fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
        errs = {"rule " + rule.plan.name: bench.relative_error(rule(A, B), ref)}
        if rule.plan.rows_per_block > 1:
            plan = round15.split_plan(M, K, 4, 1)
            P = torch.empty(M * plan.splits, device="cuda")
            f = round15.x_launch("split", plan, A, B, C, P)
            C.fill_(float("nan"))
            f()
            torch.cuda.synchronize()
            errs["round 15 R=4 L=1"] = bench.relative_error(C, ref)
            fns["round 15 R=4 L=1"] = f
        for name, e in errs.items():
            if not e < 1e-5:
                say(f"  {name}: WRONG {e:.2e}")
        rnd.time_and_log(M, K, "check", fns, errs, {}, A, ceiling=offset == 0)
        del A, B, ref, C
        torch.cuda.empty_cache()
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
