"""Exploration round 23 on the H200 (issue 9, not part of gemvlab), logged in round23/round23.txt.

Round 22 (round22/round22.txt) found the rule far under the bar, and slower than torch.matmul,
at odd-K shapes with just over one wave of rows: 1,200 x 200,003 (0.675 of the read ceiling,
0.78x torch.matmul) and 1,500 x 160,001 (0.814, 0.93x), where it leaves rows unsplit (one block
per row: 1.14 and 1.42 waves of 1,056 blocks). Split for about four waves, the same rows took 27
and 14% less time. Is that the last, part-full wave (which would hit aligned rows too), or blocks
of different speeds in one wave (odd K gives rows different offsets from B)? Here gemvlab's own
split_k (make_plan, make_launch: no new kernel) unsplit and split at aligned K, from 0.66 to 2.8
waves, and at odd K beside round 20's MODE 2. Checked against float64 and timed round-robin
beside torch.matmul and the read ceiling (round 7's timing).

What it found (round23/round23.txt): aligned rows lose unsplit too where the last wave is part
full: 0.830 of the ceiling at 1,100 rows (1.04 waves), 0.872 at 1,200 (1.14), 0.874 at 1,500 (1.42),
0.906 at 2,200 (2.08), all but the last slower than torch.matmul; split for about 4 waves, 0.935
to 0.973. With a full last wave they did not: 0.989 unsplit at 700 rows (0.66 waves) against 0.967
split, 0.980 at 2,048 (1.94) against 0.975, 0.971 at 3,000 (2.84) against 0.961 to 0.977. The
rule's FULL_LAST_WAVE (gemvlab/dispatch.py) comes from here.

    python tools/explore/round23.py OUT_DIR
"""
import ctypes
import time

import torch

from gemvlab import bench, dispatch

from round20 import split_fn
from round7 import device, rnd, say, t_start


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    slots = device.sms * 8
    for M, K in ((700, 400_000), (1024, 262_144), (1100, 240_000), (1200, 200_000), (1300, 180_000),
                 (1500, 160_000), (2048, 131_072), (2200, 100_000), (3000, 80_000), (1200, 200_003),
                 (1500, 160_001), (2200, 100_001)):
        A, B, ref = rnd.inputs(M, K, "waves")
        C = torch.empty(M, 1, device="cuda")
        rule = dispatch.launcher(A, B)
        b_vec = rule.plan.b_vec
        fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
        errs, cands = {}, {}
        P = torch.empty(M * 16, device="cuda")
        stream = torch.cuda.current_stream().cuda_stream
        for splits in sorted({1, 2, 3, 4, max(1, round(dispatch.TARGET_WAVES * slots / M))}):
            plan = dispatch.make_plan(M, K, "split_k", device, b_vec, 256, loads=2, splits=splits)
            launch = dispatch.make_launch(plan, K, True, A.device)
            cands[f"gemvlab x {plan.splits} ({M * plan.splits / slots:.2f} waves)"] = lambda launch=launch: launch(A, B, C)
            if not b_vec:
                args = dispatch.LaunchArgs(K, M, K, plan.chunk, plan.splits, 256, 16 * 2 + 2 * 2, 0)

                def f(args=args):
                    assert split_fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr(), ctypes.addressof(args),
                                    stream) == 0
                cands[f"MODE 2 x {plan.splits}"] = f
        for name, f in cands.items():
            C.fill_(float("nan"))
            f()
            torch.cuda.synchronize()
            errs[name] = bench.relative_error(C, ref)
            if errs[name] < 1e-5:
                fns[name] = f
            else:
                say(f"  {name}: WRONG {errs[name]:.2e}")
        rnd.time_and_log(M, K, "waves", fns, errs, {}, A)
        del A, B, ref, C, P
        torch.cuda.empty_cache()
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
