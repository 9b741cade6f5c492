"""Exploration round 39 on the H200 (issue 9, not part of gemvlab), logged in round39/round39.txt.

Session 18's record (tools/explore/final18) misses one of its 72 shapes: 1,024 x 1,048,576 at
0.98x torch.matmul (960.6 against 943.6 us, quartiles apart), where session 17's record tied
(939.8 against 940.2) and round 28 found splitting for 8 waves 0.6 to 1.4% faster at 1,000 to
1,056 such rows but 2.4% slower at 900 x 1,000,000. The rule runs these unsplit: 1,024 rows are
0.97 of a wave of 1,056 blocks (132 SMs x 8), so 100 SMs get 8 rows and 32 get 7. Here, twice in
one run (to see how far a ratio moves between two timings), the rule against 2, 4 and 8 stretches
per row, at 768 to 2,048 rows of 1,048,576 floats and at 1,024 rows of 262,144 and 524,288. Every
plan is checked against float64 and timed round-robin beside the rule, torch.matmul and the read
ceiling (round 7's timing).

What it found (round39/round39.txt): at 1,024 x 1,048,576 the rule took 942.6 and 945.6 us in the two
passes against torch.matmul's 938.2 and 940.1, quartiles overlapping both times: a tie, where the
record had 0.98x. 8 stretches per row took 0.2 to 1.4% less than the rule at 768 to 2,048 rows of
1,048,576 floats (beyond the quartiles only at 2,048 rows, 1.3 and 1.4%), tied at 1024 x 524,288 and
took 0.7% more at 1024 x 262,144 in both passes; 2 and 4 stretches were slower than 8 everywhere. Not
adopted: gains near the 0.79% drift of the record, and a loss at shorter rows.

    python tools/explore/round39.py OUT_DIR
"""
import time

import torch

from gemvlab import dispatch

from round28 import compare
from round7 import device, say, t_start

GUARD_S = 200  # start no shape after this many seconds


def split_plans(M, K):
    rule = dispatch.choose(M, K, K, 0, 0, device)
    out = {}
    for splits in (2, 4, 8):
        if splits != rule.splits:
            plan = dispatch.make_plan(M, K, "split_k", device, rule.b_vec, 256, 2, splits)
            out[f"x {plan.splits} ({plan.grid / (device.sms * 8):.2f} waves)"] = plan
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    shapes = [(1024, 1_048_576), (1000, 1_048_576), (900, 1_048_576), (1056, 1_048_576), (960, 1_048_576),
              (768, 1_048_576), (2048, 1_048_576), (1024, 524_288), (1024, 262_144)]
    for rep in (1, 2):
        for M, K in shapes:
            if time.time() - t_start > GUARD_S * rep:
                say(f"time guard: stopped before {M:,} x {K} (pass {rep})")
                break
            compare(M, K, f"about one wave, split or not (pass {rep})", split_plans(M, K))
            say(f"  [at {time.time() - t_start:.0f} s]")
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
