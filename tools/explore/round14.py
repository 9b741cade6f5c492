"""Exploration round 14 on the H200 (issue 9, not part of gemvlab), logged in round14/round14.txt.
Written at the end of session 13, run in session 14.

What session 13's record left below 0.91 of the read ceiling among row_tiles' shapes:
2,000,000 x 45 (0.882) and 5,000,000 x 24 (0.904). Two untimed candidates:
* bank conflicts in the sum (tools/explore/round13/bank-passes.txt, counted, not measured):
  about 2 passes per load at K = 24, 33, 45, 63, and 2.32 at K = 50, where no rotation has 1;
  round14.cu's ROT 0, 1 (gemvlab's) and 2 (a stride made an odd multiple of G);
* how full a tile is: 2,880 and 3,072 of 4,096 floats at K = 45 and 24. Here also blocks with as
  many rows as fit, a multiple of 32 / G rows, not only 256, 128 or 64.
Every candidate is checked against float64 and timed round-robin beside torch.matmul, the read
ceiling and the rule's plan (round 7's timing, via round11's plumbing for a launcher of the new
signature).

What it found (round14/round14.txt): with one lane per row and an even stride, the rotation is
what makes row_tiles fast: without it the sum took 1.2 to 4.3 times as long (4.3 at 4,000,000 x 32,
2.4 at 3,000,000 x 64 and 6,000,000 x 16, 1.5 at 5,000,000 x 24, 1.2 at 10,000,000 x 8); with 4
lanes per row it cost 11 to 16% at K = 8, 16 and 24. At the rule's tile sizes: at K = 50 the
rotation (2.32 passes per load counted) took 0.6% more than the plain order (1 pass); at odd K,
where ROT 1 does not rotate, ROT 2 took 0.4% less (K = 45) to 3.5% more (K = 33): the about 2 passes
per load counted there are not what holds 2,000,000 x 45 back. A
tile with as many rows as fit took 3.4% less time than the rule's at 3,000,000 x 33 (96 rows, one
lane each), 1.2% less at 4,000,000 x 32 (128 rows, 2 lanes) and tied or lost elsewhere: not
adopted.

    python tools/explore/round14.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

from round7 import device, rnd, say, t_start

here = Path(__file__).parent
fn = build.build("round14", (here / "round14.cu").read_text(),
                 headers={"launch_args.cuh": (here.parent.parent / "gemvlab" / "cuda" / "launch_args.cuh").read_text()}
                 ).function("launch_round14")
fn.argtypes = dispatch._ARGTYPES


def launch(M, K, block, G, rot, A, B, C):
    args = dispatch.LaunchArgs(K, M, K, 0, 1, block, G + 64 * rot, 0)
    stream = torch.cuda.current_stream().cuda_stream

    def f():
        assert fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), None, ctypes.addressof(args), stream) == 0
    return f


for M, K in ((5_000_000, 24), (2_000_000, 45), (4_000_000, 50), (3_000_000, 33), (3_000_000, 63), (3_000_000, 64),
             (6_000_000, 16), (10_000_000, 8), (4_000_000, 32), (6_000_000, 17)):
    A, B, ref = rnd.inputs(M, K, "tiles")
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    fns, errs, cands = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}, {}, {}
    for G in (1, 2, 4):
        fit = (dispatch.TILE_FLOATS - K) // K + 1  # rows that fit in the tile
        blocks = {b for b in (64, 128, 256) if b // G <= fit} | {min(1024, fit // (32 // G) * 32)}
        for block in sorted(b for b in blocks if b >= 32 and b % 32 == 0 and b // G <= fit):
            for rot in (0, 1, 2):
                cands[f"tiles G={G} b={block} rows={block // G} rot{rot}"] = (block, G, rot)
    for name, (block, G, rot) in cands.items():
        f = launch(M, K, block, G, rot, A, B, C)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        if errs[name] < 1e-4:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, "tiles", fns, errs, {n: list(c) for n, c in cands.items()}, A)
    del A, B, ref, C
    torch.cuda.empty_cache()
say(f"all done at {time.time() - t_start:.0f} s")
