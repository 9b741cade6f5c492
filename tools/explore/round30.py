"""Exploration round 30 on the H200 (issue 9, not part of gemvlab), logged in round30/round30.txt.

Round 29 (round29/round29.txt) found one-trip tiles (round29.cu as one block per tile: 256 threads,
as many rows as one trip of the 4,096-float tile holds) 6.9 and 6.7% faster than the rule at K = 17
and 19, where the rule's tiles take a second trip under a third full, and slower at K <= 13, 24,
25 and 31. Is the second trip's fill what decides? Here every K from 14 to 40, even and odd, at two
M (90,000,000 / K and 30,000,000 / K), the one-trip tile (one lane per row to K = 32, two above)
against the rule, each line labelled with the rule's trips per thread (float4s per thread / 4).
Checked against float64 and timed round-robin beside torch.matmul and the read ceiling (round 7's
timing).

What it found (round30/round30.txt): at every K from 17 to 23, where the rule's 128 rows at 128
threads take 1.06 to 1.44 trips, the one-trip tile took less time at both M (14 of 14 shapes,
1.7 to 12.2%; 6,000,000 x 17's kind at 0.939 of the read ceiling against 0.876). From 1.50 trips
(K = 24) to 1.94 (K = 31) it tied or lost at the larger M (up to 2.7% more) and tied or won at the
smaller; at K = 32 (two full trips) it won at both (3.8 and 5.4%), which the trip count does not
explain; at K <= 16 (under one trip) it lost or tied. Two lanes per row, K = 33 to 40 (1.03 to 1.25
trips): less time at both M at the odd K 33, 37 and 39, ties at 34 and 35 and losses at 36, 38 and
40 at the larger M. A rule from here (one lane per row where a second trip would be under half
full: 256 threads, as many rows as the tile holds) went into gemvlab (commit b4db86c) and was
reverted: the record made with it (tools/explore/final16/second) did not show the gain at
6,000,000 x 17 and had the row tiles it left alone 5 to 18% slower than the record before;
which of the machine start and the change did that is not separated. To re-time first.

    python tools/explore/round30.py OUT_DIR
"""
import time

import torch

from gemvlab import dispatch

import round29
from round20 import study
from round7 import device, say, t_start


def cands(A, plan):
    M, K, lda = plan.M, plan.K, A.stride(0)
    G = 1 if K <= 32 else 2
    rows = round29.one_trip_rows(G, K, lda)
    tiles = -(-M // rows)
    rule_floats = (plan.block // plan.lanes_per_row * plan.rows_per_group - 1) * lda + K
    trips = rule_floats / 4 / plan.block / 4
    return {f"one trip G={G} rows={rows} (rule: {trips:.2f} trips)": (
        round29.tiles_fn, dispatch.LaunchArgs(lda, M, K, rows, 1, round29.BLOCK, G + 16, tiles))}


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for K in range(14, 41):
        for M in (90_000_000 // K, 30_000_000 // K):
            if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
                study(M, K, 0, "tiles, one trip", cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
