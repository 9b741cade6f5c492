"""Exploration round 34 on the H200 (issue 9, not part of gemvlab), logged in round34/round34.txt.

Round 33 (round33/round33.txt; it hung at 3,000,000 x 33, round34.cu says why) found row tiles
with one trip of loads and the tile sized to its rows in dynamic shared memory ("dyn U=n") 9 to
11% faster than the rule at K = 17, 19 and 24, B's hoisted load adding nothing (within 0.9%), and
the dynamic tile alone (two trips) faster at K = 24 only. Round 32 found one trip alone (the static
tile) within 1% of the rule. Here, at the record's row-tile shapes and then every K from 8 to 64
at M = 90,000,000 / K until the time guard:
* "static U=n": one trip, the static 4,096-float tile;
* "dyn U=n": one trip, the tile sized to its rows;
* "dyn U=n, carveout 100": the same asking for the largest shared-memory carveout (round34.cu).
n is the loads per thread that make the rule's tile one trip (at least 4). Each line names its
resident blocks per SM (the CUDA occupancy API on the device). Checked against float64 and timed
round-robin beside the rule, torch.matmul and the read ceiling (round 7's timing).

What it found (round34/round34.txt, all 57 K from 8 to 64 and the record's 8 row-tile shapes, in 84 s):
* Where the tile is more than 4 float4s per thread (K = 17 to 64, 48 shapes), "dyn U=n" took 2.3 to
  11.6% less time than the rule at every one. At M = 90,000,000 / K it read at 0.900 to 0.965 of the
  read ceiling, the rule at 0.798 to 0.922 (under 0.91 at 27 of those 44 K; "dyn U=n" at 3: K = 34,
  36 and 39).
* "static U=n" took 0.5 to 1.8% more time than the rule at K = 17 to 20 (U = 5) and 1.2 to 6.6% less
  from K = 21 on: one trip alone is not the gain where U = 5.
* The three ran at the same resident blocks per SM at each K (12 at U = 5, 10 at U = 6 and 7, 9 at
  U = 8, registers-bound; 8 at U = 4, threads-bound): more blocks are not the gain either.
* "dyn U=n, carveout 100" took 3.0 to 11.0% more time than "dyn U=n" at U > 4, and 2.5 to 7.8% more at
  K <= 16 (U = 4). Against "static U=n": within 1.2% at U = 5, where 12 static tiles per SM (207 KB
  with the 1 KB reserved per block) need the largest carveout anyway, and 2.5 to 10.4% more at U = 6
  to 8 (10 or 9 static tiles, 173 KB or less, which a smaller carveout holds). The sized tile itself
  took 3.0 to 10.1% less than the static one at U = 5 and within 2.1% of it at U = 6 to 8. In every
  case, blocks that need or ask for the largest carveout (the smallest L1) ran slower, all else equal.
  Global loads pass through the L1 on their way to registers; our reading is that the smaller L1
  holds fewer loads in flight. The carveout the driver picked was not read back.
* At K <= 16 (one trip of 4 already), the sized tile tied with the rule at 7 of 9 K and took 2.1 and
  1.3% more time at K = 9 and 10.
Adopted in gemvlab (row_tiles.cu, dispatch.TILE_LOADS): U > 4 with the sized tile where the rule's
tile is more than 4 float4s per thread; K <= 16 keeps the static tile.

    python tools/explore/round34.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

t0 = time.time()
import torch  # noqa: E402

from gemvlab import bench, build, dispatch  # noqa: E402

from round19 import candidate  # noqa: E402
from round7 import device, rnd, say  # noqa: E402

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
lib = build.build("round34", (here / "round34.cu").read_text(),
                  headers={"row_tiles.cu": (here / "round34" / "row_tiles.cu").read_text(),  # as rounds 27 to 34 ran it
                               "launch_args.cuh": (cuda / "launch_args.cuh").read_text()})
tiles_fn, blocks_fn = lib.function("launch_round34_tiles"), lib.function("round34_blocks_per_sm")
tiles_fn.argtypes = dispatch._ARGTYPES
blocks_fn.argtypes, blocks_fn.restype = [ctypes.c_void_p], ctypes.c_int
GUARD_S = 200  # start no shape after this many seconds


SASS = {part.split()[0]: part for part in (build.sass_text(lib.path) or "").split("Function : ")[1:]}


def sass_order(name):
    """The kernel's tile loads (L, LDG.E.128) and stores (S, STS.128) in program order."""
    return " ".join("L" if "LDG.E.128" in ln else "S" for ln in SASS.get(name, "").splitlines()
                    if "LDG.E.128" in ln or "STS.128" in ln) or "(no SASS)"


def variant(G, R, U, dyn, carve):
    return G + 64 * (R - 1) + 128 * U + 4096 * dyn + 8192 * carve


def cands(A, plan):
    M, K, lda = plan.M, plan.K, A.stride(0)
    G, R, block = plan.lanes_per_row, plan.rows_per_group, plan.block
    floats = (block // G * R - 1) * lda + K
    U = max(4, -(-floats // (4 * block)))
    out = {}
    for label, dyn, carve in ((f"static U={U}", 0, 0), (f"dyn U={U}", 1, 0), (f"dyn U={U}, carveout 100", 1, 1)):
        args = dispatch.LaunchArgs(lda, M, K, 0, 1, block, variant(G, R, U, dyn, carve), 0)
        out[f"{label} ({blocks_fn(ctypes.addressof(args))}/SM)"] = (tiles_fn, args)
    return out


def study(M, K):
    t = time.time()
    A, B, ref = rnd.inputs(M, K, "tiles, round 34")
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    fns = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    errs, meta = {}, {}
    for name, (fn, args) in cands(A, rule.plan).items():
        f = candidate(fn, A, B, C, C, args)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        meta[name] = [args.variant, args.block]
        if errs[name] < 1e-5:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    p = rule.plan
    static = dispatch.LaunchArgs(A.stride(0), M, K, 0, 1, p.block, variant(p.lanes_per_row, p.rows_per_group, 4, 0, 0), 0)
    say(f"  (the rule's static 4,096-float tile: {blocks_fn(ctypes.addressof(static))} blocks per SM)")
    t_in = time.time()
    rnd.time_and_log(M, K, "tiles, round 34", fns, errs, meta, A)
    say(f"  [inputs and checks {t_in - t:.1f} s, timing {time.time() - t_in:.1f} s; at {time.time() - t0:.0f} s]")
    del A, B, ref, C
    torch.cuda.empty_cache()


def main():
    say(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; imports and builds took "
        f"{time.time() - t0:.1f} s")
    say(f"build or load of round34: {lib.seconds:.1f} s")
    say("SASS order of the tile's loads (L) and stores (S):")
    say(f"  row_tiles<1, 1> as gemvlab builds it (here, from row_tiles.cu): {sass_order('_Z14gemv_row_tilesILi1ELi1EEvPKfxS1_Pfxx')}")
    for G in (1, 2):
        for U in (4, 5, 6, 8):
            for dyn, carve in ((0, 0), (1, 0), (1, 1)):
                name = f"_Z13round34_tilesILi{G}ELi1ELi{U}ELb{dyn}ELb{carve}EEvPKfxS1_Pfxx"
                say(f"  G={G} U={U} dyn={dyn} carve={carve}: {sass_order(name)}")
    recorded = [(3_000_000, 33), (2_307_692, 39), (2_000_000, 45), (4_000_000, 50), (6_000_000, 17),
                (4_736_842, 19), (5_000_000, 24), (10_000_000, 8)]
    shapes = recorded + [(90_000_000 // K, K) for K in (64, 32, 16, 12, 9, 21, 28, 36, 41, 48, 55, 60, 63, 26, 30, 35,
                                                        43, 53, 57, 11, 14, 10, 13, 15, 18, 20, 22, 23, 25, 27, 29,
                                                        31, 34, 37, 38, 40, 42, 44, 46, 47, 49, 51, 52, 54, 56, 58,
                                                        59, 61, 62)]
    for M, K in shapes:
        if time.time() - t0 > GUARD_S:
            say(f"time guard: stopped before {M:,} x {K}")
            break
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K)
    say(f"all done at {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
