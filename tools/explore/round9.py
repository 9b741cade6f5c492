"""Exploration round 9 on the H200 (issue 9, not part of gemvlab), logged in round9/round9.txt.

Round 8 left row_tiles at 0.58 to 0.87 of the read ceiling for K = 8 to 50 and far behind
rows_per_warp at K = 64. Two suspects, from the kernel's structure, not measured: a block waits
for its whole tile before summing and exits after (nothing of its own in flight while it sums),
and rows whose stride is a multiple of a large power of two start on the same shared-memory bank.
Here row_tiles' MODE 1 (each row's sum starts at column r % K) and MODE 2 (MODE 1 with a
persistent grid that copies its next tile with cp.async while it sums the current one) against
MODE 0 (round 8's). And split_k for few rows at 128 and 512 threads beside 256, one and two rows
per block. The timing is round 7's (round7.py).

    python tools/explore/round9.py OUT_DIR
"""
import time

from gemvlab import dispatch

from round7 import device, say, study, t_start


def tile_cands(M, K):
    out = {}
    for mode in (0, 1, 2):
        for block in (128, 256):
            for G in (1, 2, 4):
                if dispatch.tile_fits(block // G, K, K):
                    out[f"tiles G={G} b={block} m{mode}"] = dispatch.make_plan(
                        M, K, "row_tiles", device, False, block, lanes_per_row=G, mode=mode)
    for G in (4, 8):
        out[f"rows G={G} b=128"] = dispatch.make_plan(M, K, "rows_per_warp", device, K % 4 == 0, 128, lanes_per_row=G)
    return out


def split_cands(M, K, b_vec):
    out = {}
    for rows in (1, 2):
        if rows > dispatch._next_pow2(M):
            continue
        for loads in (1, 2):
            for block in (128, 256, 512):
                variant = 16 * rows + 2 * loads + b_vec
                occ = dispatch.stage_occupancy(dispatch.SPLIT_K, block, variant, device.limits)
                slots = device.sms * occ.blocks_per_sm
                s = min(max(1, K // dispatch.MIN_CHUNK), max(1, 4 * slots // -(-M // rows)))
                plan = dispatch.make_plan(M, K, "split_k", device, b_vec, block, loads, s, rows_per_block=rows)
                out[f"split R={rows} L={loads} b={block} S={plan.splits}"] = plan
    return out


for M, K in ((10_000_000, 8), (6_000_000, 17), (4_000_000, 32), (3_000_000, 33), (4_000_000, 50),
             (3_000_000, 63), (3_000_000, 64), (2_500_000, 80), (2_000_000, 96), (1_500_000, 128),
             (100_000, 50), (20_000, 33)):
    study(M, K, tile_cands(M, K), "short rows")
say(f"short rows done at {time.time() - t_start:.0f} s")
for M, K in ((3, 50_000_000), (3, 50_000_001), (8, 30_000_000), (64, 1_000_003), (64, 1_000_000),
             (16, 16_777_216), (1, 67_108_864)):
    study(M, K, split_cands(M, K, K % 4 == 0 or M == 1), "few rows")
say(f"all done at {time.time() - t_start:.0f} s")
