"""Exploration round 16 on the H200 (issue 9, not part of gemvlab), logged in round16/round16.txt.

Where the rule splits K, a gemv is two launches: split_k's blocks, then a reduce that adds each
row's partial sums. Under ncu (round15/counters.txt) the first kernel alone took 63 to 66 us at
64 x 1,000,000 and 64 x 1,000,003, where the whole call, timed as the records time it, takes 68
to 71 us. round16.cu times, with the rule's own plan at each shape:
* gemvlab's two launches, called the same way as the candidates (one ctypes call, partials
  allocated once);
* MODE 0, the first kernel alone (a bound: C is not written);
* MODE 1, the reduce as a programmatic dependent launch; MODE 3, the same with the first
  kernel's blocks triggering it as they start;
* MODE 2, fused: the block that finishes a row group's last stretch adds its partials.
Every candidate that writes C is checked against float64 before and after its timing (MODE 2's
counters must be back at zero), and timed round-robin beside the rule as gemv runs it,
torch.matmul and the read ceiling (round 7's timing).

    python tools/explore/round16.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch
from gemvlab.kernels import SPLIT_K

from round7 import rnd, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
# split_k.cu and any_alignment.cuh as they were when this round ran (round16/; gemvlab's split_k.cu
# now launches its reduce as this round's MODE 1 does)
fn = build.build("round16", (here / "round16.cu").read_text(),
                 headers={"split_k.cu": (here / "round16" / "split_k.cu").read_text(),
                          "any_alignment.cuh": (here / "round16" / "any_alignment.cuh").read_text(),
                          "launch_args.cuh": (cuda / "launch_args.cuh").read_text()}
                 ).function("launch_round16")
fn.argtypes = dispatch._ARGTYPES
library, _ = dispatch._function(SPLIT_K)


def direct(f, A, B, C, P, plan, variant):
    args = dispatch.LaunchArgs(A.stride(0), plan.M, plan.K, plan.chunk, plan.splits, plan.block, variant, plan.grid)
    stream = torch.cuda.current_stream().cuda_stream

    def run():
        assert f(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr(), ctypes.addressof(args), stream) == 0
    return run


def study(M, K, label, offset=0):
    A, B, ref = rnd.inputs(M, K, label, offset)
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    plan = rule.plan
    if plan.splits < 2:
        say(f"  not split ({plan.name}): nothing to compare")
        return
    groups = -(-M // plan.rows_per_block)
    P = torch.zeros(M * plan.splits + groups, device="cuda")  # partials, then MODE 2's counters
    fns = {"rule " + plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    cands = {"gemvlab direct": direct(library, A, B, C, P, plan, plan.variant),
             "MODE 0 first kernel only": direct(fn, A, B, C, P, plan, plan.variant)}
    for mode, what in ((1, "PDL reduce"), (3, "PDL reduce, triggered early"), (2, "fused, last block adds")):
        cands[f"MODE {mode} {what}"] = direct(fn, A, B, C, P, plan, plan.variant + 256 * mode)
    errs = {}

    def check(name, f):
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        return bench.relative_error(C, ref)
    for name, f in cands.items():
        errs[name] = 0.0 if name.startswith("MODE 0") else check(name, f)
        if errs[name] < 1e-5:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, label, fns, errs, {n: plan.name for n in cands}, A, ceiling=offset == 0)
    for name, f in cands.items():  # again, after hundreds of calls
        if name in fns and not name.startswith("MODE 0"):
            err = check(name, f)
            if not err < 1e-5:
                say(f"  {name}: WRONG AFTER TIMING {err:.2e}")
    del A, B, ref, C, P
    torch.cuda.empty_cache()


def main():
    for M, K in ((64, 1_000_000), (64, 1_000_003), (1, 67_108_864), (16, 16_777_216), (128, 2_097_152),
                 (3, 50_000_001), (40, 6_000_001), (8, 30_000_000), (50, 5_000_000), (300, 3_000_000),
                 (16, 1_048_576), (128, 1_048_576), (16, 65_536), (1, 1_048_576), (4, 262_144)):
        study(M, K, "split")
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
