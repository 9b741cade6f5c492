"""Exploration round 24 on the H200 (issue 9, not part of gemvlab), logged in round24/round24.txt.

Part A checks the rule as changed after rounds 19 to 23, gemvlab as it now is, against the rule and
kernels before the change (round24/before/: split_k.cu and any_alignment.cuh at the last commit):
* split_k with one row per block reads B with the widest aligned loads its offset allows
  (any_alignment.cuh, dot_stretch_block; round 20's MODE 2);
* rows that keep the SMs busy are split anyway where one block per row ends in a last wave under
  FULL_LAST_WAVE full, or, for rows at different offsets from B (odd K), where a round number of
  stretches for TARGET_WAVES waves is more than 1 (gemvlab/dispatch.py, choose_splits).
(In the run, "the rule now" and "kernels now" were gemvlab's split_k with round24/now/'s kernels;
this script, rerun, builds those for "kernels now", but its "rule" is gemvlab as it is.) Each
shape: the rule now; the kernels before at the plan before (the old rule: no split where
the rows keep the SMs busy); the kernels before at the plan now, and the kernels now at the plan
before, which separate the two changes.

Part B: row_tiles with R rows per group of lanes (round24.cu) against the rule.

Every candidate is checked against float64 and timed round-robin beside torch.matmul and the
read ceiling (round 7's timing).

What it found (round24/round24.txt): the widest loads of B (round24/now/, as gemvlab's kernels
stood in the run) were not adopted: at the plan before, against the kernels before, they took 3.8%
more time at 4,096 x 4,099, 3.4% at 300 x 100,003, 1.6% at 3,000 x 80,001, 14% at 600 x 400,003
unsplit, and 3.0 and 10% less at 1,024 x 262,147 and 1,200 x 200,003 unsplit; within 0.6% at the
sweep's aligned shapes. gemvlab's kernels went back to round24/before/. The plan change, with the
kernels before: 11% less time at 1,100 x 240,000, 27% at 1,200 x 200,003, 5.3% at 1,024 x 262,147,
3.4% at 2,200 x 100,001, ties at 600 x 400,003 and 2,048 x 131,075, and 3.7% more at 1,500 x
160,000 (229.1 against 221.1 us; round 23 had that shape 10% faster split), adopted with the rest
of the wave rule. Part B: two rows per group took 17.5 to 18.6% less time at 10,000,000 x 8 (0.918
and 0.905 of the ceiling against 0.747), 4.5% less at K = 17 and 1.7% at K = 33 (tiles over
4,096 floats there), a tie at 45, and more at K = 16, 24, 32, 50 and 63; adopted where the rows fit gemvlab's
tile twice over (K <= 8: 512 rows, 256 threads).

    python tools/explore/round24.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import build, dispatch

import round19
from round20 import study
from round7 import device, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
before_fn = build.build("before24_split_k", (here / "round24" / "before" / "split_k.cu").read_text(),
                        headers={"any_alignment.cuh": (here / "round24" / "before" / "any_alignment.cuh").read_text(),
                                 "launch_args.cuh": (cuda / "launch_args.cuh").read_text()}).function("launch_split_k")
lib = build.build("round24", (here / "round24.cu").read_text(),
                  headers={"round20.cu": (here / "round20.cu").read_text(),
                           "round19.cu": (here / "round19.cu").read_text(),
                           "row_tiles.cu": (here / "round19" / "row_tiles.cu").read_text(),  # as rounds 19 to 24 ran it
                           **{n: (cuda / n).read_text() for n in ("split_k.cu", "any_alignment.cuh", "launch_args.cuh")}})
# gemvlab's split_k as it stood during the run (not adopted; gemvlab/cuda went back to round24/before)
now_fn = build.build("now24_split_k", (here / "round24" / "now" / "split_k.cu").read_text(),
                     headers={"any_alignment.cuh": (here / "round24" / "now" / "any_alignment.cuh").read_text(),
                              "launch_args.cuh": (cuda / "launch_args.cuh").read_text()}).function("launch_split_k")
tiles_fn, blocks_fn = lib.function("launch_round24_tiles"), lib.function("round24_tiles_blocks_per_sm")
before_fn.argtypes = now_fn.argtypes = tiles_fn.argtypes = dispatch._ARGTYPES
blocks_fn.argtypes, blocks_fn.restype = [ctypes.c_void_p], ctypes.c_int
MAX_TILE_20 = 12 * 1024 - 4


def old_splits(plan):
    """The rule before this change: one block per row wherever the rows keep half the warp slots busy."""
    bps = 8  # split_k<2, *, 1>: 32 registers, 8 blocks of 256 per SM
    busy = min(bps, plan.M / device.sms) * 8 >= dispatch.BUSY_WARPS * 64
    return 1 if busy and plan.rows_per_block == 1 and 4 * plan.K <= dispatch.B_SHARE_OF_L2 * device.l2_bytes \
        else plan.splits


def split_cands(A, plan):
    assert plan.kernel == "split_k", plan.name
    out = {}
    for name, fn, splits in (("before: kernels and plan", before_fn, old_splits(plan)),
                             ("kernels before, plan now", before_fn, plan.splits),
                             ("kernels now, plan before", now_fn, old_splits(plan))):
        p = dispatch.make_plan(plan.M, plan.K, "split_k", device, plan.b_vec, plan.block, plan.loads, splits,
                               rows_per_block=plan.rows_per_block)
        out[f"{name} (x {p.splits})"] = (fn, dispatch.LaunchArgs(A.stride(0), p.M, p.K, p.chunk, p.splits, p.block,
                                                                  p.variant, p.grid))
    return out


def tile_cands(A, plan):
    assert plan.kernel == "row_tiles", plan.name
    K, lda, G = plan.K, A.stride(0), plan.lanes_per_row
    out = {}
    for block in sorted({plan.block, plan.block // 2}):
        for R in (1, 2, 4):
            if block >= 64 and (block // G * R - 1) * lda + K <= MAX_TILE_20 and (R > 1 or block != plan.block):
                args = dispatch.LaunchArgs(lda, plan.M, K, 0, 1, block, G + 64 * R, 0)
                out[f"R={R} G={G} b={block} rows={block // G * R} ({blocks_fn(ctypes.addressof(args))}/SM)"] = (
                    tiles_fn, args)
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for M, K in ((128, 2_097_152), (1024, 262_144), (2048, 1_048_576), (16_384, 16_384), (4096, 4099),
                 (1, 67_108_864), (8192, 8192), (64, 1_000_003), (64, 1_000_000), (700, 400_000), (20_000, 20_001),
                 (300, 3_000_000), (100_000, 3000), (1024, 262_147), (1100, 240_000), (1200, 200_003),
                 (1500, 160_000), (2200, 100_001), (600, 400_003), (2048, 131_075), (128, 2_097_153),
                 (500, 1_000_001), (3000, 80_001), (16, 65_537), (300, 100_003)):
        study(M, K, 0, "split_k now and before", split_cands)
    for M, K in ((10_000_000, 8), (6_000_000, 16), (6_000_000, 17), (5_000_000, 24), (4_000_000, 32),
                 (3_000_000, 33), (2_000_000, 45), (4_000_000, 50), (3_000_000, 63)):
        study(M, K, 0, "tiles, R rows per group", tile_cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
