"""Exploration round 22 on the H200 (issue 9, not part of gemvlab), logged in round22/round22.txt.

Round 21 (round21/round21.txt) at 1,024 x 262,147, which the rule leaves unsplit (its rows alone
fill more than half of the SMs' warp slots: one block per row, 0.97 of a wave): B read with the
widest loads (round 20's MODE 2) took 6% less time split in 4 than unsplit (254.7 against 266.2
us). With B aligned, unsplit was faster at 700 rows (3.5%, gemvlab/dispatch.py, BUSY_WARPS). So
here, for rows not aligned like B, from just over half a wave of rows to a few waves: MODE 2 with
2 loads, unsplit and split for about TARGET_WAVES waves (and in 2), against the rule. Rows not
aligned like B by odd K, or by A starting one float into its storage. Checked against float64
and timed round-robin beside torch.matmul and the read ceiling (round 7's timing).

What it found (round22/round22.txt): split for about four waves took less time than the rule at 9
of 12 shapes, up to 27% at 1,200 x 200,003 (where the rule, unsplit in 1.14 waves, ran at 0.675 of
the read ceiling and 0.78x torch.matmul) and 14% at 1,500 x 160,001; 1.6% more at 900 x 300,007;
ties at 700 x 400,001 and at 700 x 400,000 one float in (rows at one offset). Round 23 asks
whether aligned rows lose the same way.

    python tools/explore/round22.py OUT_DIR
"""
import time

import torch

from gemvlab import dispatch

from round20 import split_fn, study
from round7 import device, say, t_start


def split_cands(A, plan):
    assert plan.kernel == "split_k" and plan.rows_per_block == 1 and not plan.b_vec, plan.name
    M, K = plan.M, plan.K
    slots = device.sms * 8
    waves = max(1, min(K // dispatch.MIN_CHUNK, dispatch.TARGET_WAVES * slots // M))
    out = {}
    for splits in sorted({1, 2, waves}):
        p = dispatch.make_plan(M, K, "split_k", device, False, 256, loads=2, splits=splits)
        args = dispatch.LaunchArgs(A.stride(0), M, K, p.chunk, p.splits, 256, 16 * 2 + 2 * 2, 0)
        out[f"MODE 2 L=2 x {p.splits} ({M * p.splits / slots:.2f} waves)"] = (split_fn, args)
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for M, K, offset in ((600, 400_003, 0), (700, 400_001, 0), (800, 300_001, 0), (900, 300_007, 0),
                         (1000, 250_001, 0), (1024, 262_147, 0), (1056, 250_001, 0), (1200, 200_003, 0),
                         (1500, 160_001, 0), (2048, 131_075, 0), (1024, 262_144, 1), (700, 400_000, 1)):
        study(M, K, offset, "one row, B not aligned", split_cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
