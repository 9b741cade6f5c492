"""Exploration round 26 on the H200 (issue 9, not part of gemvlab), logged in round26/round26.txt.
Written at the end of session 15, run in session 16.

The misses session 15's record left (tools/explore/final15/second):
* part A, 64 x 1,000,003 (0.894) and other shapes where split_k keeps one row per block with B not
  aligned like the row: B's stretch staged in shared memory as four component arrays
  (round26.cu), 1 and 2 loads, at the rule's stretches, against the rule; 500 x 1,000,001
  (0.98x torch.matmul) among them;
* part B, row tiles at odd K (2,000,000 x 45: 0.893, 6,000,000 x 17: 0.883, 3,000,000 x 33: 0.863):
  round 24's two rows per group of lanes (round24.cu, tiles in dynamic shared memory sized to
  their rows) at every odd K from 9 to 63 it can take, about 360 MB of A each, with the rule's
  block and G and with half the block, against the rule: is there a rule in K for it?
Every candidate is checked against float64 and timed round-robin beside the rule, torch.matmul and
the read ceiling (round 7's timing).

What it found (round26/round26.txt): part A, B in shared memory lost or tied everywhere: 2 loads at
8 blocks per SM took 1.1% more time than the rule at 64 x 1,000,003 (70.05 against 69.28 us),
from 0.6% less (100 x 1,000,001) to 1.7% more at five other shapes, 5.8% more at 4,096 x 4,099,
and 1.7% less at 500 x 1,000,001 (474.3 against 482.4 us, torch.matmul 472.2); 1 load and 5
blocks per SM lost everywhere. Not adopted. Part B: at M = 90,000,000 / K, the rule's row tiles ran under 0.91 of
the read ceiling at most odd K (0.79 at K = 39, 0.85 to 0.89 at 9, 11, 17, 19, 33 to 47). Two rows
per thread in larger tiles took 1 to 5% less time at K = 11 and 17 to 23, 1 to 10% less at 33 to 39
(10% at 39), about the same at 13 and 41 to 47, and 2 to 6% more at 9, 15, 25 to 31 and 49 to 63: no
rule in K that a mechanism explains.
Not adopted.

    python tools/explore/round26.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import build, dispatch

import round24
from round20 import study
from round7 import device, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
soa_fn = build.build("round26", (here / "round26.cu").read_text(),
                     headers={n: (cuda / n).read_text() for n in ("split_k.cu", "any_alignment.cuh", "launch_args.cuh")}
                     ).function("launch_round26_split")
soa_fn.argtypes = dispatch._ARGTYPES
MAX_TILE_20 = 12 * 1024 - 4


def split_cands(A, plan):
    assert plan.kernel == "split_k" and plan.rows_per_block == 1 and not plan.b_vec, plan.name
    return {f"B in shared memory, {what}": (soa_fn, dispatch.LaunchArgs(A.stride(0), plan.M, plan.K, plan.chunk,
                                                                         plan.splits, 256, variant, 0))
            for variant, what in ((2, "1 load"), (4, "2 loads, 5 blocks/SM"), (5, "2 loads, 8 blocks/SM"))}


def tile_cands(A, plan):
    assert plan.kernel == "row_tiles", plan.name
    K, lda, G = plan.K, A.stride(0), plan.lanes_per_row
    out = {}
    for block in sorted({plan.block, plan.block // 2}):
        if block >= 64 and (block // G * 2 - 1) * lda + K <= MAX_TILE_20:
            args = dispatch.LaunchArgs(lda, plan.M, K, 0, 1, block, G + 64 * 2, 0)
            out[f"R=2 G={G} b={block} rows={block // G * 2} ({round24.blocks_fn(ctypes.addressof(args))}/SM)"] = (
                round24.tiles_fn, args)
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for M, K in ((64, 1_000_003), (64, 1_000_001), (32, 2_000_003), (100, 1_000_001), (128, 2_097_153),
                 (500, 1_000_001), (4096, 4099), (20_000, 20_001)):
        plan = dispatch.choose(M, K, K, 0, 0, device)
        if plan.rows_per_block == 1 and plan.kernel == "split_k":
            study(M, K, 0, "one row, B in shared memory", split_cands)
    for K in range(9, 64, 2):
        M = 90_000_000 // K
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K, 0, "tiles, two rows per group", tile_cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
