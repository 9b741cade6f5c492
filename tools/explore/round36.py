"""Exploration round 36 on the H200 (issue 9, not part of gemvlab), logged in round36/round36.txt.

Round 35 (part C) found rows_per_warp at 123,457 x 777 1.8% faster with blocks of 64 threads than
with the rule's 128 (95.1 against 96.9 us, quartiles apart; 0.931 against 0.914 of the read
ceiling). A reading to test: the H200 holds at most 32 blocks per SM, so 64 threads is the
smallest block that still fills the SM's 64 warp slots, and a block's slot is freed only when its
last warp ends; with one row per warp, smaller blocks leave fewer slots waiting on a slow warp.
Part A times rows_per_warp at 64, 128 (the rule) and 256 threads with the rule's lanes per row, at
M = 90,000,000 / K for K from 65 to 2,048 (aligned and not), at the sweep's 262,144 x 1,024 and at
small shapes (1,024 x 1,024, 1,000 x 500), each with the blocks per SM the occupancy API gives.
Part B: row tiles at K = 33 to 40 (two of the record's misses, 0.90 to 0.93 of the ceiling in round
35), where the rule takes 2 lanes per row at 128 threads (64 rows, 5 loads per thread), against
2 lanes at 64 threads (32 rows) and 4 lanes at 128 and 256 threads (4 loads). Every candidate is
checked against float64 and timed round-robin beside the rule, torch.matmul and the read ceiling
(round 7's timing).

What it found (round36/round36.txt): 64 threads took 0.8 to 2.7% less time than the rule's 128 at
all 9 K whose rows start at different offsets (K % 4 != 0: 65, 127, 150, 255, 333, 513, 777, 1023,
1537), quartiles apart, and tied (within 0.3%, quartiles overlapping) at the 11 aligned K from 96
to 2048 and at 262,144 x 1024, 1024 x 1024 and 1000 x 500; 256 threads took more time than 128 at
every unaligned K and tied or took more at the aligned ones. The waves printed beside each plan were the same at 64 and 128 threads (the same warps
per SM). Adopted: ROWS_BLOCK = 64. Part B: at K = 33 to 40 no other compiled (lanes, block) of
gemvlab's row tiles beat the rule (2 lanes at 64 and 96 threads 0.0 to 2.2% slower, 4 lanes 13 to
32% slower).

    python tools/explore/round36.py OUT_DIR
"""
import time

import torch

from gemvlab import dispatch

from round28 import compare
from round7 import device, say, t_start

GUARD_S = 240  # start no shape after this many seconds


def warp_plans(M, K):
    rule = dispatch.choose(M, K, K, 0, 0, device)
    if rule.kernel != "rows_per_warp":
        return None, rule
    plans = {}
    for block in (64, 256):
        plan = dispatch.make_plan(M, K, "rows_per_warp", device, rule.b_vec, block, lanes_per_row=rule.lanes_per_row)
        plans[f"warp G={rule.lanes_per_row} b={block} ({plan.waves} waves)"] = plan
    return plans, rule


def tile_plans(M, K):
    plans = {}
    for G, block in ((2, 64), (4, 128), (4, 256), (2, 96)):
        rows = block // G
        if not dispatch.tile_fits(rows, K, K):
            continue
        loads = max(dispatch.TILE_LOADS, -(-rows * K // (4 * block)))
        if loads > dispatch.TILE_MAX_LOADS or (loads > dispatch.TILE_LOADS and G > 2):
            continue
        plans[f"tiles G={G} b={block} U={loads}"] = dispatch.make_plan(M, K, "row_tiles", device, False, block,
                                                                        loads, lanes_per_row=G)
    return plans


def main():
    say(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    shapes = [(123_457, 777), (262_144, 1024), (1024, 1024), (1000, 500)]
    shapes += [(90_000_000 // K, K) for K in (65, 100, 127, 128, 200, 255, 256, 333, 512, 513, 777, 1000, 1023,
                                               1024, 1537, 2048, 96, 150, 384, 640)]
    for M, K in shapes:
        if time.time() - t_start > GUARD_S:
            say(f"time guard: stopped before {M:,} x {K}")
            break
        plans, rule = warp_plans(M, K)
        if plans is None:
            say(f"{M:,} x {K}: the rule takes {rule.kernel}, skipped")
            continue
        compare(M, K, f"rows per warp, block (rule: {rule.waves} waves)", plans)
        say(f"  [at {time.time() - t_start:.0f} s]")
    say(f"part A done at {time.time() - t_start:.0f} s")
    for K in (33, 39, 34, 36, 37, 40, 35, 38):
        if time.time() - t_start > GUARD_S + 60:
            say(f"time guard: stopped before K = {K}")
            break
        compare(90_000_000 // K, K, "tiles at K = 33 to 40", tile_plans(90_000_000 // K, K))
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
