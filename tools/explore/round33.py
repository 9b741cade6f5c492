"""Exploration round 33 on the H200 (issue 9, not part of gemvlab), logged in round33/round33.txt.

Round 32 (round32/round32.txt; killed by its time limit after 5 shapes) found row tiles with the
tile in dynamic shared memory sized to its rows, B's load hoisted and one trip of loads ("hoist +
U=n dyn") taking 7.9% less time than the rule at 6,000,000 x 17, 9.9% at 4,736,842 x 19 and 4.9%
at 5,000,000 x 24, and each of hoist and U without the dynamic tile within 1% of the rule. Round 19
had found DYN and a late B load slower at most shapes, with ptxas free to put stores between the
loads (round33.cu says why that matters). Which change does it, and where? At the record's
row-tile shapes first, then every K from 8 to 64 at M = 90,000,000 / K, until the time guard:
* "dyn": only the tile sized to its rows (its SASS keeps the four loads before the stores);
* "dyn hoist, no sync": and B hoisted, ptxas left to order the loads and stores;
* "dyn hoist": and a __syncwarp that keeps every load before the stores;
* "dyn U=n": the tile sized, one trip, no hoist;
* "dyn hoist U=n": round 32's winner.
Each line names its resident blocks per SM (the CUDA occupancy API, on the device) and its SASS
order of LDG.E.128 (L) and STS.128 (S) from the build. Checked against float64 and timed
round-robin beside the rule, torch.matmul and the read ceiling (round 7's timing).

What it found (round33/round33.txt): it hung at 3,000,000 x 33 and was killed by the device call's
limit. Its __syncwarp sat inside a loop whose trip count is per thread: at K = 33 (528 float4s, 128
threads, 4 per trip) lanes 0 to 15 of warp 0 take a second trip that lanes 16 to 31 do not, and
wait at the __syncwarp for lanes that never come. Round 32 stopped at the same shape; its "sync" and
"hoist" candidates have the same loop. Round 34 counts the trips per warp. Before the hang, at K =
17, 19 and 24: "dyn U=n" took 8.5, 10.2 and 5.0% less time than the rule (0.946, 0.954 and 0.952 of
the read ceiling), with B hoisted or not within 0.9%; the
sized tile alone (two trips of 4, 16 blocks per SM against the rule's 13) took 14.1% and 7.4% more
time at K = 17 and 19 and 1.4% less at 24; with B hoisted and no __syncwarp (the SASS printed in the
log: stores between the loads) it took 4.7 and 11.3% more than with it at K = 19 and 24, and 1.6%
less at K = 17.

    python tools/explore/round33.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

t0 = time.time()
import torch  # noqa: E402

from gemvlab import bench, build, dispatch  # noqa: E402

import round31  # noqa: E402
from round19 import candidate  # noqa: E402
from round7 import device, rnd, say  # noqa: E402

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
lib = build.build("round33", (here / "round33.cu").read_text(),
                  headers={"row_tiles.cu": (here / "round34" / "row_tiles.cu").read_text(),  # as rounds 27 to 34 ran it
                               "launch_args.cuh": (cuda / "launch_args.cuh").read_text()})
tiles_fn, blocks_fn = lib.function("launch_round33_tiles"), lib.function("round33_blocks_per_sm")
tiles_fn.argtypes = dispatch._ARGTYPES
blocks_fn.argtypes, blocks_fn.restype = [ctypes.c_void_p], ctypes.c_int
GUARD_S = 300  # start no shape after this many seconds (the device call's limit is 420)


SASS = {part.split()[0]: part for part in (build.sass_text(lib.path) or "").split("Function : ")[1:]}


def sass_order(name):
    """The kernel's tile loads (L, LDG.E.128) and stores (S, STS.128) in program order."""
    return " ".join("L" if "LDG.E.128" in ln else "S" for ln in SASS.get(name, "").splitlines()
                    if "LDG.E.128" in ln or "STS.128" in ln) or "(no SASS)"


def variant(G, R, U, hoist, dyn, sync):
    return G + 64 * (R - 1) + 128 * U + 2048 * hoist + 4096 * dyn + 8192 * sync


def cands(A, plan):
    M, K, lda = plan.M, plan.K, A.stride(0)
    G, R, block = plan.lanes_per_row, plan.rows_per_group, plan.block
    floats = (block // G * R - 1) * lda + K
    U = max(4, -(-floats // (4 * block)))
    out = {}
    for label, u, hoist, sync in (("dyn", 4, 0, 0), ("dyn hoist, no sync", 4, 1, 0), ("dyn hoist", 4, 1, 1),
                                  (f"dyn U={U}", U, 0, 1), (f"dyn hoist U={U}", U, 1, 1)):
        if u == 4 and label.startswith(f"dyn U=4") or label == "dyn hoist U=4":
            continue
        args = dispatch.LaunchArgs(lda, M, K, 0, 1, block, variant(G, R, u, hoist, 1, sync), 0)
        out[f"{label} ({blocks_fn(ctypes.addressof(args))}/SM)"] = (tiles_fn, args)
    return out


def study(M, K):
    t = time.time()
    A, B, ref = rnd.inputs(M, K, "tiles, round 33")
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
    static = dispatch.LaunchArgs(A.stride(0), M, K, 0, 1, p.block, variant(p.lanes_per_row, p.rows_per_group, 4, 0, 0, 1), 0)
    say(f"  (the rule's static 4,096-float tile: {blocks_fn(ctypes.addressof(static))} blocks per SM)")
    t_in = time.time()
    rnd.time_and_log(M, K, "tiles, round 33", fns, errs, meta, A)
    say(f"  [inputs and checks {t_in - t:.1f} s, timing {time.time() - t_in:.1f} s; at {time.time() - t0:.0f} s]")
    del A, B, ref, C
    torch.cuda.empty_cache()


def main():
    say(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; imports and builds took "
        f"{time.time() - t0:.1f} s")
    say(f"build or load of round33: {lib.seconds:.1f} s")
    say("SASS order of the tile's loads (L) and stores (S):")
    say(f"  row_tiles<1, 1> as gemvlab builds it (here, from row_tiles.cu): {sass_order('_Z14gemv_row_tilesILi1ELi1EEvPKfxS1_Pfxx')}")
    for U in (4, 5, 6, 8):
        for hoist, sync in ((0, 0), (1, 0), (1, 1), (0, 1)):
            name = f"_Z13round33_tilesILi1ELi1ELi{U}ELb{hoist}ELb1ELb{sync}EEvPKfxS1_Pfxx"
            say(f"  G=1 U={U} hoist={hoist} sync={sync} dyn: {sass_order(name)}")
    shapes = [(M, K) for M, K in round31.RECORDED if K > 8] + [(10_000_000, 8)]
    shapes += [(90_000_000 // K, K) for K in (33, 39, 45, 50, 17, 19, 24, 8, 63, 64, 32, 16, 9, 12, 21, 27, 29, 36,
                                              41, 48, 55, 57, 60)]
    for M, K in shapes:
        if time.time() - t0 > GUARD_S:
            say(f"time guard: stopped before {M:,} x {K}")
            break
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            study(M, K)
    say(f"all done at {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
