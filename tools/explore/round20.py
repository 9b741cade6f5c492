"""Exploration round 20 on the H200 (issue 9, not part of gemvlab), logged in round20/round20.txt.

Round 19 (round19/round19.txt) found nothing for 64 x 1,000,003, but at the odd-K versions of two
sweep shapes, where the rule keeps one row per block with B not aligned like the row and is itself
at or under the bar (1,024 x 262,147: 0.873; 128 x 2,097,153: 0.911), B read with the widest loads
D allows and 4 loads per lane per trip took 5.2 and 1.8% less time than the rule. Its candidates
there ran the reduce as a plain launch, the rule as a dependent launch. So, here:
* part A, at more shapes of that kind (one row per block, B not aligned, A at least 4 times the
  L2): 4 scalar loads of B (MODE 0) or the widest (MODE 2), with 2 or 4 loads of A per lane per
  trip, all with the reduce launched as gemvlab launches it (round20.cu); with 4 loads at the
  rule's stretches and at the stretches the rule's wave count gives for 4 loads' 5 blocks per SM;
* part B, row_tiles with tiles of more rows than gemvlab's 4,096-float tile holds, in dynamic
  shared memory (round 19's "dyn": the tile sized to its rows).
Every candidate is checked against float64 and timed round-robin beside the rule, torch.matmul and
the read ceiling (round 7's timing). Then round20_counters.py runs under ncu (its docstring).

What it found (round20/round20.txt): part A, MODE 2 with 4 loads at the stretches for 5 blocks per
SM took less time than the rule at the 9 shapes the rule splits or runs in under a wave (0.7% at
32 x 2,000,003, a tie, to 5.4% at 1,024 x 262,147), and more at 2,048 x 131,075 (4.2%, 3.1 waves
against 1.9) and, by 0.5 to 0.7%, at the three shapes of 4 or more waves. The widest loads alone
(MODE 2 against MODE 0, both 2 loads) were within 1.3% at 12 of 13 shapes and 2.1% slower at 2,048
x 131,075. Part B: tiles of more rows in dynamic shared memory took 4.7% less time at 3,000,000 x
33 (one lane per row, 128 rows) and tied or lost elsewhere. The counters (round20/counters.txt):
row_tiles at 2,000,000 x 45 executes 538 warp instructions per warp, about 0.7 per cycle per
scheduler over the kernel, with no stall reason above 6.7 cycles per instruction (memory).

    python tools/explore/round20.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

import round19
from round19 import candidate
from round7 import device, rnd, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
lib = build.build("round20", (here / "round20.cu").read_text(),
                  headers={"round19.cu": (here / "round19.cu").read_text(),
                           "row_tiles.cu": (here / "round19" / "row_tiles.cu").read_text(),  # as rounds 19 to 24 ran it
                           **{n: (cuda / n).read_text() for n in ("split_k.cu", "any_alignment.cuh", "launch_args.cuh")}})
split_fn, tiles_fn = lib.function("launch_round20_split"), lib.function("launch_round20_tiles")
split_fn.argtypes = tiles_fn.argtypes = dispatch._ARGTYPES
MAX_TILE_20 = 12 * 1024 - 4


def study(M, K, offset, label, make_cands):
    """round19.study, with room for partials at any stretch count the candidates take."""
    A, B, ref = rnd.inputs(M, K, label, offset)
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    cands_made = make_cands(A, rule.plan)
    P = torch.empty(M * max([1, rule.plan.splits] + [a.splits for _, a in cands_made.values()]), device="cuda")
    fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    errs, cands = {}, {}
    for name, (fn, args) in cands_made.items():
        f = candidate(fn, A, B, C, P, args)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        cands[name] = [args.variant, args.block, args.splits]
        if errs[name] < 1e-5:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, label, fns, errs, cands, A, ceiling=offset == 0)
    del A, B, ref, C, P
    torch.cuda.empty_cache()


def splits_for(M, K, blocks_per_sm):
    """The rule's stretch count for one row per block at `blocks_per_sm` (choose_splits)."""
    slots = device.sms * blocks_per_sm
    warps = min(blocks_per_sm, M / device.sms) * (dispatch.SPLIT_BLOCK // 32)
    s, _ = dispatch.choose_splits(M, K, slots, warps, device.limits.max_threads // 32, device.l2_bytes)
    return s


def split_cands(A, plan):
    assert plan.kernel == "split_k" and plan.rows_per_block == 1 and not plan.b_vec, plan.name
    M, K = plan.M, plan.K
    out = {}
    s5 = splits_for(M, K, 5)
    for mode in (0, 2):
        for loads in (2, 4):
            for splits in ({plan.splits, s5} if loads == 4 else {plan.splits}):
                p = dispatch.make_plan(M, K, "split_k", device, False, 256, loads=2, splits=splits)
                args = dispatch.LaunchArgs(A.stride(0), M, K, p.chunk, p.splits, 256, 16 * mode + 2 * loads, 0)
                out[f"MODE {mode} L={loads} x {p.splits}"] = (split_fn, args)
    return out


def tile_cands(A, plan):
    assert plan.kernel == "row_tiles", plan.name
    K, lda = plan.K, A.stride(0)
    out = {}
    for block, G in ((64, 1), (96, 1), (128, 1), (256, 1), (128, 2), (192, 2), (256, 2)):
        rows = block // G
        if (rows - 1) * lda + K <= MAX_TILE_20:
            args = dispatch.LaunchArgs(lda, plan.M, K, 0, 1, block, G + 64, 0)
            bps = round19.blocks_fn(ctypes.addressof(args))
            out[f"dyn G={G} b={block} rows={rows} ({bps}/SM)"] = (tiles_fn, args)
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for M, K, offset in ((64, 1_000_003, 0), (32, 2_000_003, 0), (100, 1_000_001, 0), (128, 2_097_153, 0),
                         (256, 1_048_579, 0), (512, 524_289, 0), (1024, 262_147, 0), (2048, 131_075, 0),
                         (4096, 65_537, 0), (16_384, 16_385, 0), (20_000, 20_001, 0), (64, 1_000_000, 1),
                         (1024, 262_144, 2)):
        study(M, K, offset, "one row, B not aligned", split_cands)
    for M, K in ((2_000_000, 45), (4_000_000, 50), (5_000_000, 24), (3_000_000, 33), (3_000_000, 63),
                 (6_000_000, 17)):
        study(M, K, 0, "tiles", tile_cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
