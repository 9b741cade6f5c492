"""Exploration round 37 on the H200 (issue 9, not part of gemvlab), logged in round37/round37.txt.

Round 36 (part B) found no other (lanes, block) of gemvlab's compiled row tiles beating the rule at
K = 33 to 40 (0.90 to 0.93 of the read ceiling), and round 35 that more blocks per SM through
__launch_bounds__ cost 16 to 21% (spills). Left: one lane per row, as the rule takes at K = 17 to
32 (0.947 to 0.964 in round 35). At K = 33 and up a thread's row is 9 or more float4s, so one trip
takes U = ceil(K / 4) loads, which gemvlab's launcher does not compile; round37.cu launches
gemvlab's kernel at U = 9 to 12 (K = 33 to 48) with 64 and 128 threads (64 and 128 rows). Round
28, with the kernel of that time (two trips of 4), had one lane per row at 64 threads 8.1% faster at
K = 39 and 0.5% faster to 5.5% slower at the other odd K from 33 to 63. Also at 10,000,000 x 8
(0.904 in round 35, no neighbour better): one lane, 3 or 4 rows per thread (U = 6, 8) at 128 and
256 threads against the rule's 2 rows at 256. Each candidate checked against float64 and timed
round-robin beside the rule, torch.matmul and the read ceiling (round 20's study, round 7's timing).

What it found (round37/round37.txt): one lane per row in one trip took 2.0 to 6.3% less time than the
rule at every K from 33 to 45 (2.1 to 5.9%; 0.930 to 0.948 of the read ceiling against 0.886 to
0.917; 3,000,000 x 33: 97.5 against 103.6 us), 64 and 128 threads within 0.4% of each other up to K
= 40 and 64 threads ahead at 41 to 48; at K = 48, 0.8% less (quartiles overlapping). At 10,000,000 x 8, 4 rows per thread
at 128 threads took 4.0% less than the rule (89.1 against 92.8 us, 0.929 against 0.891) and 3 rows
3.3% less; at 256 threads 4 rows lost (93.8 us). Adopted, and checked in round 38.

    python tools/explore/round37.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

t0 = time.time()
import torch  # noqa: E402

from gemvlab import build, dispatch  # noqa: E402

from round20 import study  # noqa: E402
from round7 import say  # noqa: E402

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
lib = build.build("round37", (here / "round37.cu").read_text(),
                  headers={n: (cuda / n).read_text() for n in ("row_tiles.cu", "launch_args.cuh")})
tiles_fn, blocks_fn = lib.function("launch_round37_tiles"), lib.function("round37_blocks_per_sm")
tiles_fn.argtypes = dispatch._ARGTYPES
blocks_fn.argtypes, blocks_fn.restype = [ctypes.c_void_p], ctypes.c_int
GUARD_S = 240  # start no shape after this many seconds


def cand(A, M, K, G, R, U, block):
    args = dispatch.LaunchArgs(A.stride(0), M, K, 0, 1, block, G + 64 * (R - 1) + 256 * U, 0)
    res = lib.resources.get(f"gemv_row_tiles<{G}, {R}, {U}>")
    regs = f"{res.registers} registers" if res else "?"
    return f"G={G} R={R} U={U} b={block} ({blocks_fn(ctypes.addressof(args))}/SM, {regs})", (tiles_fn, args)


def one_lane(A, plan):
    M, K = plan.M, plan.K
    U = -(-K // 4)
    return dict(cand(A, M, K, 1, 1, U, b) for b in (64, 128))


def more_rows(A, plan):
    M, K = plan.M, plan.K
    return dict(cand(A, M, K, 1, R, 2 * R, b) for R in (3, 4) for b in (128, 256))


def main():
    say(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; imports and builds took "
        f"{time.time() - t0:.1f} s")
    study(10_000_000, 8, 0, "K = 8, more rows per thread", more_rows)
    shapes = [(3_000_000, 33), (2_307_692, 39)] + [(90_000_000 // K, K) for K in (36, 40, 34, 35, 37, 38, 41, 44,
                                                                                  45, 48)]
    for M, K in shapes:
        if time.time() - t0 > GUARD_S:
            say(f"time guard: stopped before {M:,} x {K}")
            break
        study(M, K, 0, "one lane per row, one trip", one_lane)
        say(f"  [at {time.time() - t0:.0f} s]")
    say(f"all done at {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
