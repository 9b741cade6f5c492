"""Exploration round 35 on the H200 (issue 9, not part of gemvlab), logged in round35/round35.txt.
Written in session 17, not yet run (the session's device time was spent).

Session 17's record (tools/explore/final17) leaves two row-tile shapes under 0.91 of the read
ceiling, both at K = 33 to 40, where gemvlab's row_tiles takes one trip of 5 loads per thread at
12 blocks of 128 threads per SM (40 registers). Part A: the same kernel with
__launch_bounds__(128, MINB) (round35.cu), MINB = 14 or 16 at U = 5 (32 registers, 16 blocks per SM,
28 bytes of spills) and 12 or 16 at U = 6 to 8, against the rule, at the record's two shapes and at
M = 90,000,000 / K for K = 17 to 64 in steps, until the time guard. Part B: at 128 x 2,097,152 the
record had stage 4 with 1024 threads one block per row (0.245 ms) 1.4% faster than the rule's split
(0.2485 ms); here the rule against split_k unsplit at 256, 512 and 1024 threads, at M = 64 to 256
rows of 2,097,152 floats. Part C, after part A (added in session 18 before the run): the record's three
other misses, whose gemv time did not move between sessions 16 and 17 (10,000,000 x 8,
123,457 x 777, 64 x 1,000,003), against the plans next to the rule's (block, lanes, loads, rows per
group), to see whether any neighbour of the rule's plan reads closer to the ceiling. Every candidate is checked against float64 and timed round-robin beside
the rule, torch.matmul and the read ceiling (round 7's timing). Build without a GPU first
(tools/explore/prebuild.py).

Run in session 18 (29 s). What it found (round35/round35.txt):
* part A: __launch_bounds__(128, 14 or 16) at U = 5 gave 32 registers and 16 blocks per SM with 28
  bytes spilled, and took 16 to 21% more time than the rule at every K from 33 to 40 (3,000,000 x
  33: 126.5 against 104.2 us); at U = 6 to 8 the spills grew (24 to 140 bytes) and so did the loss
  (up to 2.1 times the rule's time at K = 64). Not adopted.
* part B: at 128 x 2,097,152 split_k unsplit at 1024 threads took 250.4 against the rule's 252.6 us
  (0.9% less, quartiles touching); at 64, 96, 160 and 256 rows the rule's split was faster (at 64
  rows unsplit took 1.29 times as long). Not adopted.
* part C: 10,000,000 x 8, no neighbour of the rule's plan faster (1 lane, 2 rows per thread at 256
  threads: 93.0 us, the next 97.7); 123,457 x 777, rows_per_warp at 64 threads 1.8% faster than the
  rule's 128 (95.1 against 96.9 us; round 36 follows it up); 64 x 1,000,003, split counts from 66 to
  165 from 1.0% less to 1.6% more time than the rule's 122, quartiles overlapping the rule's for the
  nearest.

    python tools/explore/round35.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

t0 = time.time()
import torch  # noqa: E402

from gemvlab import build, dispatch  # noqa: E402

from round20 import study  # noqa: E402
from round28 import compare  # noqa: E402
from round7 import device, say  # noqa: E402

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
lib = build.build("round35", (here / "round35.cu").read_text(),
                  headers={n: (cuda / n).read_text() for n in ("row_tiles.cu", "launch_args.cuh")})
tiles_fn, blocks_fn = lib.function("launch_round35_tiles"), lib.function("round35_blocks_per_sm")
tiles_fn.argtypes = dispatch._ARGTYPES
blocks_fn.argtypes, blocks_fn.restype = [ctypes.c_void_p], ctypes.c_int
GUARD_S = 300  # start no shape after this many seconds


def spills(G, U, minb):
    res = lib.resources.get(f"round35_tiles<{G}, {U}, {minb}>")
    return f"{res.registers} registers, {res.spill_store_bytes} B spilled" if res else "?"


def tile_cands(A, plan):
    M, K, lda = plan.M, plan.K, A.stride(0)
    G, U = plan.lanes_per_row, plan.loads
    out = {}
    for minb in ((14, 16) if U == 5 else (12, 16)):
        args = dispatch.LaunchArgs(lda, M, K, 0, 1, 128, G + 128 * U + 4096 * minb, 0)
        out[f"MINB={minb} ({blocks_fn(ctypes.addressof(args))}/SM, {spills(G, U, minb)})"] = (tiles_fn, args)
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; imports and builds took "
        f"{time.time() - t0:.1f} s")
    for M in (128, 64, 96, 160, 256):
        K = 2_097_152
        plans = {f"unsplit b={b}": dispatch.make_plan(M, K, "split_k", device, True, b, 2, 1) for b in (256, 512, 1024)}
        compare(M, K, "few rows, unsplit", plans)
    shapes = [(3_000_000, 33), (2_307_692, 39)] + [(90_000_000 // K, K) for K in (33, 35, 37, 39, 40, 36, 34, 38, 17,
                                                                                  19, 20, 24, 28, 32, 45, 50, 56, 64)]
    for M, K in shapes:
        if time.time() - t0 > GUARD_S:
            say(f"time guard: stopped before {M:,} x {K}")
            break
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K, 0, "tiles, launch bounds", tile_cands)
            say(f"  [at {time.time() - t0:.0f} s]")
    say(f"part A done at {time.time() - t0:.0f} s")
    part_c()
    say(f"all done at {time.time() - t0:.0f} s")


def part_c():
    M, K = 10_000_000, 8
    plans = {}
    for G, R, block in ((1, 1, 128), (1, 2, 128), (1, 1, 256), (2, 1, 128), (2, 1, 256), (1, 1, 512)):
        plans[f"tiles G={G} R={R} b={block}"] = dispatch.make_plan(M, K, "row_tiles", device, False, block,
                                                                    lanes_per_row=G, rows_per_group=R)
    compare(M, K, "short rows, neighbours", plans)
    M, K = 123_457, 777
    plans = {f"warp G={G} b={b}": dispatch.make_plan(M, K, "rows_per_warp", device, False, b, lanes_per_row=G)
             for G in (16, 32) for b in (64, 128, 256, 512)}
    compare(M, K, "unaligned rows, neighbours", plans)
    for M, K in ((64, 1_000_003), (64, 1_000_000)):
        rule = dispatch.choose(M, K, K, 0, 0, device)
        plans = {}
        for block, loads in ((256, 4), (512, 2), (512, 4), (128, 2), (128, 4)):
            splits = max(1, rule.splits * 256 // block)
            plans[f"split b={block} loads={loads} x {splits}"] = dispatch.make_plan(
                M, K, "split_k", device, rule.b_vec, block, loads, splits)
        for splits in (66, 99, 132, 165):  # whole waves of 8 blocks of 256 per SM at 64 rows: 1056 slots
            plans[f"split b=256 loads=2 x {splits}"] = dispatch.make_plan(M, K, "split_k", device, rule.b_vec,
                                                                          256, 2, splits)
        compare(M, K, "few rows, neighbours", plans)


if __name__ == "__main__":
    main()
