"""Exploration round 29 on the H200 (issue 9, not part of gemvlab), logged in round29/round29.txt.

Row tiles with a persistent grid that keeps the next tile's loads in flight while it sums the
current one (round29.cu says why, and how it differs from round 10's MODE 2), at M = 90,000,000 / K
for the K of round 28: for the natural G (1 to K = 16, 2 to 32, 4 to 64; rows near the block's
groups) and half of it, the tile cut to one trip of 256 threads, at 6 and at 8 blocks per SM
(__launch_bounds__), and the same kernel as one block per tile (grid = tiles: no persistence, B
copied per block), against the rule. Every candidate is checked against float64 and timed
round-robin beside the rule, torch.matmul and the read ceiling (round 7's timing).

What it found (round29/round29.txt): the persistent grid lost. Its best version took 2.1 to 50%
more time than the rule at 36 of the 37 K, 1.8% less at K = 17 and tied at 19; 6 and 8 blocks per
SM made no difference that matters. Keeping the next tile in flight is not what these shapes lack
(round 10's MODE 2 found the same). The same kernel as one block per tile, one lane per row at 256
threads with as many rows as one trip of the 4,096-float tile holds, took 6.9 and 6.7% less time
than the rule at K = 17 and 19 (0.956 and 0.949 of the read ceiling against 0.890 and 0.886),
where the rule's 128 rows at 128 threads take two trips, the second under a third full; 1.8 to
2.3% less at 21, 23 and 27, 3.9% less at 32; and 1.1 to 36% more at K <= 13, 16, 24, 25 and 31.
With two lanes per row (K = 33 to 63) it took 2.3 to 5.3% less at 33, 37 and 39 and up to 8.9%
more at 13 other K. The rule itself ran about 1 to 4% nearer the ceiling here than in rounds 27 and 28
(K = 45: 0.905 against 0.882 and 0.895; each round a fresh machine start): between machine starts
these shapes move by more than a timing's quartiles. At K = 17 to 23 one-trip tiles of 256 threads
were the lead (rounds 26 and 27 also beat the rule only there and at 39); round 30 timed every K.

    python tools/explore/round29.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import build, dispatch

from round20 import study
from round7 import device, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
lib = build.build("round29", (here / "round29.cu").read_text(),
                  headers={"row_tiles.cu": (here / "round34" / "row_tiles.cu").read_text(),  # as rounds 27 to 34 ran it
                               "launch_args.cuh": (cuda / "launch_args.cuh").read_text()})
tiles_fn, blocks_fn = lib.function("launch_round29_tiles"), lib.function("round29_blocks_per_sm")
tiles_fn.argtypes = dispatch._ARGTYPES
blocks_fn.argtypes, blocks_fn.restype = [ctypes.c_int], ctypes.c_int
BLOCK = 256


def one_trip_rows(G, K, lda):
    return min(BLOCK // G, (16 * BLOCK - K - 3) // lda + 1)


def cands(A, plan):
    M, K, lda = plan.M, plan.K, A.stride(0)
    natural = 1 if K <= 16 else 2 if K <= 32 else 4
    out = {}
    for G in sorted({natural, max(1, natural // 2)}):
        rows = one_trip_rows(G, K, lda)
        tiles = -(-M // rows)
        for bound in (6, 8):
            variant = G + 16 * (bound == 8)
            per_sm = blocks_fn(variant)
            grid = min(tiles, per_sm * device.sms)
            out[f"persistent G={G} rows={rows} {per_sm}/SM"] = (
                tiles_fn, dispatch.LaunchArgs(lda, M, K, rows, 1, BLOCK, variant, grid))
        out[f"block per tile G={G} rows={rows}"] = (
            tiles_fn, dispatch.LaunchArgs(lda, M, K, rows, 1, BLOCK, G + 16, tiles))
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for K in list(range(9, 64, 2)) + [8, 10, 16, 24, 32, 40, 48, 50, 56, 64]:
        M = 90_000_000 // K
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K, 0, "tiles, persistent", cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
