"""Exploration round 21 on the H200 (issue 9, not part of gemvlab), logged in round21/round21.txt.

Part B first: row_tiles' sum as two plain runs of columns (round21.cu, SEG), against gemvlab's
wrapping loop, at every row_tiles shape explored so far and at a view with a padded (even) row
stride, where the rotation applies with odd K. Then part A again: B read with the widest loads
and 4 loads per lane (round 20's MODE 2 L=4) at more shapes where the rule splits few rows with B
not aligned like them, small ones included (the bar there is torch.matmul), and at 1,024 x
262,147 split in 2 and 4. Every candidate is checked against float64 and timed round-robin beside
the rule, torch.matmul and the read ceiling (round 7's timing).

What it found (round21/round21.txt): SEG, with less than half the instructions per float in its
loop (20 per 4 floats against 44, SASS), took more time wherever rows rotate (even K: 1.2 to 2.5
times as long; a candidate, not separated: the lanes of a warp wrap at different steps, so their
two runs diverge) and at K = 45, 61 and 63 (1.7 to 3.1%), 4% less at K = 17: the instruction count
is not what holds row_tiles back at those shapes. Part A: MODE 2 with 4 loads was mixed at small and middle shapes (6% less
at 16 x 65,537 with 2 loads, 2 to 4% more at 300 x 100,003 with 4) and 2.9% faster at 500 x 1,000,001,
where the rule is slower than torch.matmul (483.2 against 473.7 us); at 1,024 x 262,147, split in
4 with 2 loads it took 4.3% less time than unsplit with 2 loads, and 6.0% less than the rule.

    python tools/explore/round21.py OUT_DIR
"""
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

import round20
from round20 import split_fn, splits_for, study
from round7 import device, rnd, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
lib = build.build("round21", (here / "round21.cu").read_text(),
                  headers={"round20.cu": (here / "round20.cu").read_text(),
                           "round19.cu": (here / "round19.cu").read_text(),
                           "row_tiles.cu": (here / "round19" / "row_tiles.cu").read_text(),  # as rounds 19 to 24 ran it
                           **{n: (cuda / n).read_text() for n in ("split_k.cu", "any_alignment.cuh", "launch_args.cuh")}})
tiles_fn = lib.function("launch_round21_tiles")
tiles_fn.argtypes = dispatch._ARGTYPES


def tile_cands(A, plan):
    assert plan.kernel == "row_tiles", plan.name
    K, lda, G, block = plan.K, A.stride(0), plan.lanes_per_row, plan.block
    out = {}
    for name, g, b, code in (("gemvlab's sum, static", G, block, 128), ("seg, static", G, block, 0),
                             ("seg, dyn", G, block, 64), ("seg G=1, dyn", 1, block // G, 64)):
        if name.startswith("seg G=1") and G == 1:
            continue
        out[f"{name} G={g} b={b}"] = (tiles_fn, dispatch.LaunchArgs(lda, plan.M, K, 0, 1, b, g + code, 0))
    return out


def split_cands(A, plan):
    assert plan.kernel == "split_k" and plan.rows_per_block == 1 and not plan.b_vec, plan.name
    M, K = plan.M, plan.K
    out = {}
    options = {(2, plan.splits), (4, plan.splits), (4, splits_for(M, K, 5))}
    if M == 1024:
        options |= {(2, 2), (4, 2), (2, 4), (4, 4)}
    for loads, splits in sorted(options):
        p = dispatch.make_plan(M, K, "split_k", device, False, 256, loads=2, splits=splits)
        args = dispatch.LaunchArgs(A.stride(0), M, K, p.chunk, p.splits, 256, 16 * 2 + 2 * loads, 0)
        out[f"MODE 2 L={loads} x {p.splits}"] = (split_fn, args)
    return out


def padded_study(M, K, lda):
    """A view of M rows of K floats at a row stride of lda (row_tiles rotates where lda is even)."""
    say(f"== tiles, padded: M={M:,} K={K:,} lda={lda}")
    A = torch.rand(M, lda, device="cuda")[:, :K]
    B = torch.rand(K, 1, device="cuda")
    ref = bench.reference(A, B)
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    errs, cands = {}, {}
    for name, (fn, args) in tile_cands(A, rule.plan).items():
        f = round20.candidate(fn, A, B, C, C, args)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        cands[name] = [args.variant, args.block]
        if errs[name] < 1e-5:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, "tiles, padded", fns, errs, cands, A, ceiling=False)


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for M, K in ((2_000_000, 45), (4_000_000, 50), (5_000_000, 24), (3_000_000, 33), (3_000_000, 63),
                 (6_000_000, 17), (10_000_000, 8), (4_000_000, 32), (3_000_000, 64), (6_000_000, 16),
                 (4_000_000, 61), (100_000, 50)):
        study(M, K, 0, "tiles", tile_cands)
    padded_study(2_000_000, 45, 46)
    padded_study(3_000_000, 33, 34)
    for M, K in ((64, 1_000_003), (16, 65_537), (64, 65_537), (128, 65_539), (16, 1_048_577), (300, 100_003),
                 (8, 1_000_001), (2, 2_000_001), (16, 3_000_001), (500, 1_000_001), (1024, 262_147)):
        study(M, K, 0, "one row, B not aligned", split_cands)
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
