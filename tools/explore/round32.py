"""Exploration round 32 on the H200 (issue 9, not part of gemvlab), logged in round32/round32.txt.

Row tiles (cuda/row_tiles.cu) miss 0.91 of the read ceiling at most K from 8 to 64 (round 27). In
the SASS of row_tiles (sm_90, nvcc 13.0) the threads t < K wait for their load of B before they
issue any load of the tile, and where a tile is more than 4 float4s per thread, the loads past the
fourth wait a memory latency for the first four (K = 39: 4.9 per thread, the second trip under a
quarter full). round32.cu takes these away one at a time:
* "sync": row_tiles as it is, with a __syncwarp between the loads and the stores to shared memory
  (round32.cu needs it to keep ptxas from putting stores between the loads; this checks that it
  costs nothing by itself);
* "hoist": and B loaded into a register before the tile's loads, stored to shared memory after them;
* "hoist + U=n": and n loads per thread per trip, as many as make the tile one trip (where over 4);
* "... dyn": and the tile in dynamic shared memory sized to its rows, so more blocks fit an SM.
Also round 31's candidates (round31.py, not run on its own): b4db86c's row_tiles with the rule's
plan (did the code or the machine start slow final16/second's row tiles?) and with its one-trip plan
(256 threads, K = 17 to 23).
At every row-tile shape of gemvlab's record and every K from 8 to 64 at M = 90,000,000 / K, each
checked against float64 and timed round-robin beside the rule, torch.matmul and the read ceiling
(round 7's timing). Build without a GPU first (tools/explore/prebuild.py).

What it found (round32/round32.txt): the device call's limit (420 s) killed it at 3,000,000 x 33,
after 5 shapes; round 33 found why (a __syncwarp in a loop whose trips differ between a warp's
lanes). At 6,000,000 x 17, 4,736,842 x 19 and 5,000,000 x 24, "hoist + U=n dyn" took 7.9, 9.9 and
4.9% less time than the rule; "hoist" and "hoist + U=n" with the static tile were within 1% of the
rule; "sync" tied with it. Round 31's question: b4db86c's row_tiles at the rule's own plan took 7.2,
9.6 and 12.8% more time than the rule at those three shapes, and tied at 10,000,000 x 8 (0.3% less),
where its plan is two rows per thread: the code change, not the machine start, slowed
final16/second's row tiles (why is not separated). b4db86c's one-trip plan took 0.6% and 0.4% less
than the rule at K = 17 and 19, where round 30 had 1.7 to 12.2% less at K = 17 to 23.

    python tools/explore/round32.py OUT_DIR
"""
import time
from pathlib import Path

import torch

from gemvlab import build, dispatch

import round31
from round20 import study
from round7 import device, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
tiles_fn = build.build("round32", (here / "round32.cu").read_text(),
                       headers={"row_tiles.cu": (here / "round34" / "row_tiles.cu").read_text(),  # as rounds 27 to 34 ran it
                               "launch_args.cuh": (cuda / "launch_args.cuh").read_text()}
                       ).function("launch_round32_tiles")
tiles_fn.argtypes = dispatch._ARGTYPES


def variant(G, R, U, hoist, dyn):
    return G + 64 * (R - 1) + 128 * U + 2048 * hoist + 4096 * dyn


def cands(A, plan):
    M, K, lda = plan.M, plan.K, A.stride(0)
    G, R, block = plan.lanes_per_row, plan.rows_per_group, plan.block
    floats = (block // G * R - 1) * lda + K
    one_trip = max(4, -(-floats // (4 * block)))
    assert one_trip <= 8, (M, K, one_trip)

    def args(U, hoist, dyn):
        return tiles_fn, dispatch.LaunchArgs(lda, M, K, 0, 1, block, variant(G, R, U, hoist, dyn), 0)

    out = {"sync": args(4, 0, 0), "hoist": args(4, 1, 0)}
    if one_trip > 4:
        out[f"hoist + U={one_trip} ({floats / (16 * block):.2f} trips at U=4)"] = args(one_trip, 1, 0)
    out[f"hoist + U={one_trip} dyn ({floats} floats)"] = args(one_trip, 1, 1)
    out.update(round31.cands(A, plan))
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    shapes = list(round31.RECORDED) + [(90_000_000 // K, K) for K in range(8, 65)]
    for M, K in shapes:
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K, 0, "tiles, round 32", cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
