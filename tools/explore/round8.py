"""Exploration round 8 on the H200 (issue 9, not part of gemvlab), logged in round8/round8.txt.

Round 7 (round7/round7.txt) found: several rows per split_k block gained 2 to 5% where the rows
are aligned like B, and lost or tied at odd K; the one-row code rewritten for it was 8% slower
at 4096 x 4099 and 4% at 20,000 x 20,001 than before (its head and tail multiplied before the
body), so one row per block is back on the code as it was, and several rows now multiply their
edges after the body. row_tiles beat rows_per_warp 1.1x to 2.3x at K = 8 to 50 with 1 or 2 lanes
per row, and lost from K = 96 on. Here: split_k rows again after that change, and row_tiles with
a tile of 8,192 floats beside 4,096, at K from 8 to 96. The timing is round 7's (round7.py).

    python tools/explore/round8.py OUT_DIR
"""
import time

import torch

from gemvlab import dispatch, overhead

from round7 import device, rnd, say, study, t_start


def split_cands(M, K, b_vec):
    out = {}
    for rows in (1, 2, 4):
        if rows > dispatch._next_pow2(M):
            continue
        for loads in ((2,) if rows == 1 else (1, 2)):
            variant = 16 * rows + 2 * loads + b_vec
            slots = device.sms * dispatch.stage_occupancy(dispatch.SPLIT_K, 256, variant, device.limits).blocks_per_sm
            groups = -(-M // rows)
            for waves in (2, 4):
                s = min(max(1, K // dispatch.MIN_CHUNK), max(1, waves * slots // groups))
                plan = dispatch.make_plan(M, K, "split_k", device, b_vec, 256, loads, s, rows_per_block=rows)
                out[f"split R={rows} L={loads} S={plan.splits} ({waves} waves of {slots})"] = plan
    return out


def tile_cands(M, K):
    out = {}
    for tile in (4096, 8192):
        for block in (128, 256):
            for G in (1, 2, 4):
                if dispatch.tile_fits(block // G, K, K, tile) and G + tile // 64 in dispatch.ROW_TILES.variants:
                    out[f"tiles G={G} b={block} T={tile}"] = dispatch.make_plan(
                        M, K, "row_tiles", device, False, block, lanes_per_row=G, tile=tile)
    for G in (4, 8):
        out[f"rows G={G} b=128"] = dispatch.make_plan(M, K, "rows_per_warp", device, K % 4 == 0, 128, lanes_per_row=G)
    return out


for M, K in ((3, 50_000_001), (8, 30_000_000), (5, 20_000_003), (12, 10_000_001), (64, 1_000_003),
             (16, 16_777_216), (50, 5_000_000), (2, 40_000_000), (300, 3_000_000), (128, 2_097_152),
             (7, 9_999_999), (24, 4_000_001), (1, 67_108_864), (4096, 4099), (20_000, 20_001)):
    study(M, K, split_cands(M, K, K % 4 == 0 or M == 1), "few rows")
say(f"few rows done at {time.time() - t_start:.0f} s")
for M, K in ((10_000_000, 8), (6_000_000, 17), (3_000_000, 33), (4_000_000, 50), (3_000_000, 64),
             (2_500_000, 80), (2_000_000, 96), (100_000, 50), (20_000, 33)):
    study(M, K, tile_cands(M, K), "short rows")
say(f"short rows done at {time.time() - t_start:.0f} s")
for M, K in ((4096, 4096), (1024, 1024)):
    for _ in range(3):
        r = overhead.measure(M, K)
        say(f"overhead {M}x{K}: launch alone {r['kernel_us']:.2f} us, gemv call {r['gemv_us']:.2f}, added (paired) "
            f"{r['added_us']:.2f}, torch.matmul {r['torch_us']:.2f}; host per call {r['host_us_per_call']:.2f} us "
            f"(torch {r['torch_host_us_per_call']:.2f}) [{r['plan']}]")
torch.cuda.synchronize()
say(f"all done at {time.time() - t_start:.0f} s")
