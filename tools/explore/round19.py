"""Exploration round 19 on the H200 (issue 9, not part of gemvlab), logged in round19/round19.txt.

The two shapes session 14's record left under the bandwidth bar (round19.cu says what each
candidate changes):
* part A, 64 x 1,000,003 (0.898) and other shapes where split_k keeps one row per block with B
  not aligned like the row: B read with the widest loads the block's offset D allows, against 4
  scalars per float4;
* part B, 2,000,000 x 45 (0.891) and other row_tiles shapes: the tile sized to what it holds
  (more blocks per SM), and B's load moved off the tile's path.
Every candidate is checked against float64 and timed round-robin beside the rule's plan,
torch.matmul and the read ceiling (round 7's timing), at the rule's stretches (part A) or its
rows, block and lanes per row (part B).

What it found (round19/round19.txt; its candidates ran their reduce as a plain launch, the rule
as a dependent launch): part A, at 64 x 1,000,003 no candidate beat the rule (69.4 us; MODE 2 with
2 loads 69.9, MODE 0 70.5, MODE 1 70.8); MODE 2 with 4 loads took 3.2% less than MODE 0 at 1,024 x
262,147 and 1.6% less at 128 x 2,097,153, and 5.1% more at 4,096 x 4,099. Part B: DYN tied at
2,000,000 x 45 (95.6 against 96.2 us), took 1.2% less at 5,000,000 x 24, 3.5% less at 3,000,000 x
33 with one lane per row, and 15% more at 6,000,000 x 17 (130.6 against 113.6); BLATE took more
time at every shape, 1.3 to 17%. Nothing adopted from this round.

    python tools/explore/round19.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

from round7 import rnd, say, t_start

here = Path(__file__).parent
lib = build.build("round19", (here / "round19.cu").read_text(),
                  headers={name: (here.parent.parent / "gemvlab" / "cuda" / name).read_text()
                           for name in ("split_k.cu", "any_alignment.cuh", "launch_args.cuh")}
                  | {"row_tiles.cu": (here / "round19" / "row_tiles.cu").read_text()})  # as the round ran it
split_fn, tiles_fn = lib.function("launch_round19_split"), lib.function("launch_round19_tiles")
split_fn.argtypes = tiles_fn.argtypes = dispatch._ARGTYPES
blocks_fn = lib.function("round19_tiles_blocks_per_sm")
blocks_fn.argtypes, blocks_fn.restype = [ctypes.c_void_p], ctypes.c_int


def candidate(fn, A, B, C, P, args):
    stream = torch.cuda.current_stream().cuda_stream

    def f():
        assert fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr(), ctypes.addressof(args), stream) == 0
    return f


def study(M, K, offset, label, make_cands):
    A, B, ref = rnd.inputs(M, K, label, offset)
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    plan = rule.plan
    P = torch.empty(M * max(plan.splits, 1), device="cuda")
    fns = {"rule " + plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    errs, cands = {}, {}
    for name, (fn, args) in make_cands(A, plan).items():
        f = candidate(fn, A, B, C, P, args)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        cands[name] = [args.variant, args.block]
        if errs[name] < 1e-5:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, label, fns, errs, cands, A, ceiling=offset == 0)
    del A, B, ref, C, P
    torch.cuda.empty_cache()


def split_cands(A, plan):
    assert plan.kernel == "split_k" and plan.rows_per_block == 1 and not plan.b_vec, plan.name
    out = {}
    for mode, loads, what in ((0, 2, "scalars, 1 edge float"), (1, 2, "float4 at D=0"), (2, 2, "widest"),
                              (2, 4, "widest")):
        args = dispatch.LaunchArgs(A.stride(0), plan.M, plan.K, plan.chunk, plan.splits, 256, 16 * mode + 2 * loads, 0)
        out[f"MODE {mode} L={loads} ({what})"] = (split_fn, args)
    return out


def tile_cands(A, plan):
    assert plan.kernel == "row_tiles", plan.name
    out = {}
    for dyn in (0, 1):
        for blate in (0, 1):
            for block, G in {(plan.block, plan.lanes_per_row), (plan.block // plan.lanes_per_row, 1)}:
                if dispatch.tile_fits(block // G, plan.K, A.stride(0)) and block >= 64:
                    args = dispatch.LaunchArgs(A.stride(0), plan.M, plan.K, 0, 1, block, G + 64 * dyn + 128 * blate, 0)
                    bps = blocks_fn(ctypes.addressof(args))
                    out[f"tiles G={G} b={block}{' dyn' if dyn else ''}{' Blate' if blate else ''} ({bps}/SM)"] = (
                        tiles_fn, args)
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for M, K, offset in ((64, 1_000_003, 0), (64, 1_000_001, 0), (64, 1_000_000, 1), (32, 2_000_003, 0),
                         (128, 2_097_153, 0), (1024, 262_147, 0), (4096, 4099, 0), (20_000, 20_001, 0)):
        study(M, K, offset, "one row, B not aligned", split_cands)
    for M, K in ((2_000_000, 45), (4_000_000, 50), (5_000_000, 24), (3_000_000, 33), (3_000_000, 63),
                 (4_000_000, 32), (10_000_000, 8), (6_000_000, 17)):
        study(M, K, 0, "tiles", tile_cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
