"""Exploration round 31 on the H200 (issue 9, not part of gemvlab), logged in round31/round31.txt.
Written at the end of session 16, not yet run.

Round 30 found one-trip row tiles (256 threads, as many rows as the 4,096-float tile holds) 1.7 to
12.2% faster than the rule at every K from 17 to 23. Built into gemvlab (commit b4db86c), the
record made with them (final16/second) had the row tiles they left alone 5 to 18% slower than the
record before, and 6,000,000 x 17 no faster; reverted (d825b2a). Machine start or code? Here, in
one run, round-robin, at every row-tile shape of gemvlab's record and at K = 14 to 40 (M =
90,000,000 / K):
* the rule (gemvlab's row_tiles as it is);
* b4db86c's row_tiles (round31.cu) with the rule's own plan: if it is slower than the rule, the
  code change slowed the row tiles; if it ties, the machine start did;
* b4db86c's row_tiles with the one-trip plan, where the rule's tile would take a second trip
  under half full (one lane per row, K = 17 to 23 at lda = K).
Every candidate is checked against float64 and timed beside torch.matmul and the read ceiling
(round 7's timing). Build without a GPU first (tools/explore/prebuild.py).

    python tools/explore/round31.py OUT_DIR
"""
import time
from pathlib import Path

import torch

from gemvlab import build, dispatch
from gemvlab.kernels import row_tiles_variant

from round20 import study
from round7 import device, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
tiles_fn = build.build("round31", (here / "round31.cu").read_text(),
                       headers={"launch_args.cuh": (cuda / "launch_args.cuh").read_text()}
                       ).function("launch_round31_tiles")
tiles_fn.argtypes = dispatch._ARGTYPES
ONE_TRIP_BLOCK = 256
RECORDED = ((10_000_000, 8), (6_000_000, 17), (4_736_842, 19), (5_000_000, 24), (3_000_000, 33),
            (2_307_692, 39), (2_000_000, 45), (4_000_000, 50))


def cands(A, plan):
    assert plan.kernel == "row_tiles", plan.name
    M, K, lda = plan.M, plan.K, A.stride(0)
    G, R = plan.lanes_per_row, plan.rows_per_group
    rows = plan.block // G * R
    out = {f"b4db86c, the rule's plan ({rows} rows, {plan.block} threads)": (
        tiles_fn, dispatch.LaunchArgs(lda, M, K, rows, 1, plan.block, plan.variant, 0))}
    trips = ((rows - 1) * lda + K) / (16 * plan.block)
    if G == 1 and R == 1 and 1 < trips < 1.5:
        fill = min(ONE_TRIP_BLOCK, (dispatch.TILE_FLOATS - K) // lda + 1)
        out[f"b4db86c, one trip ({fill} rows, {ONE_TRIP_BLOCK} threads; rule {trips:.2f} trips)"] = (
            tiles_fn, dispatch.LaunchArgs(lda, M, K, fill, 1, ONE_TRIP_BLOCK, row_tiles_variant(1, 1), 0))
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    shapes = list(RECORDED) + [(90_000_000 // K, K) for K in range(14, 41)]
    for M, K in shapes:
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K, 0, "tiles, b4db86c against now", cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
