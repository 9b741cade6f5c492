"""Exploration round 10 on the H200 (issue 9, not part of gemvlab), logged in round10/round10.txt.

Round 9 (round9/round9.txt): row_tiles with each row's sum rotated (MODE 1 there) was up to 40%
slower than without even where the rotation was zero (odd K), so the sum loop itself, not the
loads, may be what limits row_tiles. Here MODE 1 and 2 are rewritten: B copied to shared memory
once per block, 32-bit indices, two accumulators, rotation only for even row strides; MODE 2
adds a persistent grid that copies its next tile with cp.async while it sums the current one.
MODE 0 is round 8's. And split_k at few rows with 128, 256 and 512 threads (round 9's part that
failed on a variant not compiled). The timing is round 7's (round7.py).

    python tools/explore/round10.py OUT_DIR
"""
import time

from gemvlab import dispatch

from round7 import device, say, study, t_start


def tile_cands(M, K):
    out = {}
    for mode in (0, 1, 2):
        for block in (128, 256):
            for G in (1, 2, 4):
                if dispatch.tile_fits(block // G, K, K) and (mode == 0 or K <= 64):
                    out[f"tiles G={G} b={block} m{mode}"] = dispatch.make_plan(
                        M, K, "row_tiles", device, False, block, lanes_per_row=G, mode=mode)
    out["rows G=4 b=128"] = dispatch.make_plan(M, K, "rows_per_warp", device, K % 4 == 0, 128, lanes_per_row=4)
    return out


def split_cands(M, K, b_vec):
    out = {}
    for rows, loads in ((1, 2), (2, 1), (2, 2)):
        if rows > dispatch._next_pow2(M):
            continue
        for block in (128, 256, 512):
            variant = 16 * rows + 2 * loads + b_vec
            occ = dispatch.stage_occupancy(dispatch.SPLIT_K, block, variant, device.limits)
            slots = device.sms * occ.blocks_per_sm
            s = min(max(1, K // dispatch.MIN_CHUNK), max(1, 4 * slots // -(-M // rows)))
            plan = dispatch.make_plan(M, K, "split_k", device, b_vec, block, loads, s, rows_per_block=rows)
            out[f"split R={rows} L={loads} b={block} S={plan.splits}"] = plan
    return out


for M, K in ((10_000_000, 8), (6_000_000, 16), (6_000_000, 17), (4_000_000, 32), (3_000_000, 33),
             (4_000_000, 50), (3_000_000, 63), (3_000_000, 64), (100_000, 50), (20_000, 33)):
    study(M, K, tile_cands(M, K), "short rows")
say(f"short rows done at {time.time() - t_start:.0f} s")
for M, K in ((3, 50_000_000), (3, 50_000_001), (8, 30_000_000), (64, 1_000_003), (64, 1_000_000),
             (16, 16_777_216), (1, 67_108_864)):
    study(M, K, split_cands(M, K, K % 4 == 0 or M == 1), "few rows")
say(f"all done at {time.time() - t_start:.0f} s")
