"""Exploration round 12 on the H200 (issue 9, not part of gemvlab), logged in round12/round12.txt.

Round 11 timed the library's row_tiles (round 10's MODE 1, rewritten with 32-bit indices and
without MODE 0 and 2) 1 to 9% slower than round 10 had timed MODE 1, on another machine start.
Here both in one run, round-robin: gemvlab/cuda/row_tiles.cu, round10/row_tiles_modes.cu's
MODE 1, and a copy of the library's kernel with a tile of 8,192 floats (round12/row_tiles_8192.cu),
which lets 256 rows of up to 32 floats and 128 of up to 64 share a block; and 512-thread blocks.
The timing is round 7's.

    python tools/explore/round12.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

from round7 import device, rnd, say, t_start

here = Path(__file__).parent
headers = {"launch_args.cuh": (here.parent.parent / "gemvlab" / "cuda" / "launch_args.cuh").read_text()}
other = {}
for name, path in (("round10_mode1", here / "round10" / "row_tiles_modes.cu"),
                   ("tile8192", here / "round12" / "row_tiles_8192.cu")):
    fn = build.build(f"round12_{name}", path.read_text(), headers=headers).function("launch_row_tiles")
    fn.argtypes = dispatch._ARGTYPES
    other[name] = fn


def other_launch(which, M, K, block, G, A, B, C):
    variant = G + 64 if which == "round10_mode1" else G
    args = dispatch.LaunchArgs(K, M, K, 0, 1, block, variant, 0)
    stream = torch.cuda.current_stream().cuda_stream
    fn = other[which]

    def f():
        assert fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), None, ctypes.addressof(args), stream) == 0
    return f


for M, K in ((10_000_000, 8), (6_000_000, 16), (6_000_000, 17), (4_000_000, 32), (3_000_000, 33),
             (4_000_000, 50), (3_000_000, 63), (3_000_000, 64), (100_000, 50)):
    A, B, ref = rnd.inputs(M, K, "tiles")
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.choose(M, K, K, 0, 0, device)
    fns, errs = {"torch.matmul": lambda: torch.matmul(A, B)}, {}
    cands = {f"rule {rule.name} b={rule.block}": ("lib", rule.block, rule.lanes_per_row),
             f"round10 m1 b={rule.block} G={rule.lanes_per_row}": ("round10_mode1", rule.block, rule.lanes_per_row)}
    for block, G in ((512, 1), (256, 1), (256, 2), (128, 1), (128, 2), (256, 4)):
        if dispatch.tile_fits(block // G, K, K):
            cands[f"lib b={block} G={G}"] = ("lib", block, G)
        if (block // G - 1) * K + K <= 8192:
            cands[f"tile8192 b={block} G={G}"] = ("tile8192", block, G)
    for name, (which, block, G) in cands.items():
        if which == "lib":
            launch = dispatch.make_launch(dispatch.make_plan(M, K, "row_tiles", device, False, block, lanes_per_row=G),
                                          K, True, A.device)
            f = (lambda launch: lambda: launch(A, B, C))(launch)
        else:
            f = other_launch(which, M, K, block, G, A, B, C)
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
