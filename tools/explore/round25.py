"""Exploration round 25 on the H200 (issue 9, not part of gemvlab), logged in round25/round25.txt.

The record after the wave rule (final15/) left 2,200 x 100,001 at 0.878 of the read ceiling: the rule
splits its rows in round(4 x 1,056 / 2,200) = 2 (4.2 waves), where round 23 had 3 and 4 stretches at
0.953 and 0.960 in another run. How many stretches should rows that keep the SMs busy get? gemvlab's
split_k (make_plan, make_launch), rows aligned and at odd K, from 1.04 to 2.6 waves of rows, split
in 1 to 8, against the rule. Checked against float64 and timed round-robin beside torch.matmul and
the read ceiling (round 7's timing).

What it found (round25/round25.txt): at odd K, splits into 8 waves or more ran at 0.931 to 0.966 of
the read ceiling, against the rule's (then about 4 waves) 0.885 to 0.949, three of six under 0.91.
Aligned, unsplit lost where its last wave was nearly empty (1,100 and 1,300 rows: 0.842 and 0.910,
against up to 0.965 and 0.974 split), and won at 1,700 and 2,700 rows (0.960 and 0.982, last waves 61% and
56% full), where the rule's 2 stretches gave 0.923 at 1,700 (3.22 waves, the last 22% full) and
8 waves or more 0.946 to 0.976 at both. gemvlab/dispatch.py's BUSY_SPLIT_WAVES (8) comes from here:
every split into 8 waves or more, at every shape, ran at 0.931 to 0.976.

    python tools/explore/round25.py OUT_DIR
"""
import time

import torch

from gemvlab import bench, dispatch

from round7 import device, rnd, say, t_start


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    slots = device.sms * 8
    for M, K in ((1100, 240_000), (1100, 240_001), (1300, 180_000), (1300, 180_001), (1700, 140_000),
                 (1700, 140_001), (2200, 100_000), (2200, 100_001), (2500, 90_000), (2500, 90_001),
                 (2700, 80_000), (2700, 80_001)):
        A, B, ref = rnd.inputs(M, K, "busy rows, split")
        C = torch.empty(M, 1, device="cuda")
        rule = dispatch.launcher(A, B)
        fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
        errs, cands = {}, {}
        for splits in (1, 2, 3, 4, 6, 8):
            plan = dispatch.make_plan(M, K, "split_k", device, rule.plan.b_vec, 256, loads=2, splits=splits)
            launch = dispatch.make_launch(plan, K, True, A.device)
            cands[f"x {plan.splits} ({M * plan.splits / slots:.2f} waves)"] = lambda launch=launch: launch(A, B, C)
        for name, f in cands.items():
            C.fill_(float("nan"))
            f()
            torch.cuda.synchronize()
            errs[name] = bench.relative_error(C, ref)
            if errs[name] < 1e-5:
                fns[name] = f
            else:
                say(f"  {name}: WRONG {errs[name]:.2e}")
        rnd.time_and_log(M, K, "busy rows, split", fns, errs, {}, A)
        del A, B, ref, C
        torch.cuda.empty_cache()
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
