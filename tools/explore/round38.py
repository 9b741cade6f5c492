"""Exploration round 38 on the H200 (issue 9, not part of gemvlab), logged in round38/round38.txt.

Checks the rule as changed after rounds 36 and 37, with gemvlab's own launcher, against the plans
the rule took before (session 17's record):
* row tiles at K <= 8: 512 rows for 128 threads, 4 rows per thread (U = K loads), against 512 rows
  for 256 threads, 2 rows per thread (U = 4), at K = 1 to 8 (round 37 timed only K = 8);
* row tiles at K = 33 to 48: 64 rows for 64 threads, one lane per row (U = ceil(K / 4), 9 to 12),
  against 64 rows for 128 threads, two lanes per row (U = 5 or 6);
* rows_per_warp at 64 threads against 128 at the sweep's and the record's rows_per_warp shapes;
* the record's row-tile shapes.
M = 90,000,000 / K unless named. Every plan is checked against float64 and timed round-robin beside
the rule, torch.matmul and the read ceiling (round 7's timing).

What it found (round38/round38.txt): the new rule took less time than the plans of the rule before at
every changed shape but K = 7 (0.8%, about the drift between two timings of a record: not counted): 3.7 to 23.0% at K = 1 to 6
and 8 (10,000,000 x 8: 89.6 against 93.0 us, 0.944 of the
read ceiling against 0.909), 2.2 to 5.4% at K = 33 to 47, 0.4% at K = 48 (quartiles overlapping: a
tie), 1.7% at 123,457 x 777 (rows_per_warp at 64 threads); ties at 262,144 x 1024, 2,097,152 x 128,
1024 x 1024 and 4096 x 1027. round38/bank_passes.txt counts the shared-memory passes of sum_row at K =
33 to 48 for one and two lanes per row (cuda/row_tiles.cu cites it).

    python tools/explore/round38.py OUT_DIR
"""
import time

import torch

from gemvlab import dispatch

from round28 import compare
from round7 import device, say, t_start

GUARD_S = 240  # start no shape after this many seconds


def old_plan(M, K):
    """The plan session 17's rule (tools/explore/final17) took for M x K (row stride K)."""
    new = dispatch.choose(M, K, K, 0, 0, device)
    if new.kernel == "rows_per_warp":
        return {"before: 128 threads": dispatch.make_plan(M, K, "rows_per_warp", device, new.b_vec, 128,
                                                          lanes_per_row=new.lanes_per_row)}
    if new.kernel != "row_tiles":
        return {}
    if K <= 8:
        return {"before: 512 rows, 256 threads, R = 2": dispatch.make_plan(M, K, "row_tiles", device, False, 256, 4,
                                                                            lanes_per_row=1, rows_per_group=2)}
    if 33 <= K <= 48:
        loads = dispatch.tile_loads(64, K, 128)
        return {f"before: 64 rows, 128 threads, G = 2, U = {loads}": dispatch.make_plan(
            M, K, "row_tiles", device, False, 128, loads, lanes_per_row=2)}
    return {}


def main():
    say(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    shapes = [(90_000_000 // K, K) for K in (8, 4, 1, 2, 3, 5, 6, 7, 33, 39, 42, 47, 48, 36)]
    shapes += [(10_000_000, 8), (3_000_000, 33), (2_307_692, 39), (2_000_000, 45), (123_457, 777),
               (262_144, 1024), (2_097_152, 128), (1024, 1024), (4096, 4099 - 3 * 1024)]
    for M, K in shapes:
        if time.time() - t_start > GUARD_S:
            say(f"time guard: stopped before {M:,} x {K}")
            break
        plans = old_plan(M, K)
        if not plans:
            say(f"{M:,} x {K}: {dispatch.choose(M, K, K, 0, 0, device).name}, unchanged, skipped")
            continue
        compare(M, K, "the rule now against before", plans)
        say(f"  [at {time.time() - t_start:.0f} s]")
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
