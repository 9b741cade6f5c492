"""Exploration round 18 on the H200 (issue 9, not part of gemvlab), logged in round18/round18.txt.

64 x 1,000,003 is one of the two shapes session 14's record left under the bandwidth bar: one row
per block, B read as scalars (4 loads per float4 of A). Round 15's one-row kernel with B realigned
by shuffles was slower there (77.6 against 70.8 us), with 56 registers for 2 loads (4 blocks per
SM, against gemvlab's 8 at 32 registers). round18.cu holds it to more blocks per SM with
__launch_bounds__ (1 load at 32 registers, no spills; 2 loads at 47, 40 and 32 registers, the last
two with spills, round18/ptxas.txt). Each against the rule's plan, at the rule's stretches, at
shapes where the rule keeps one row per block with B not aligned like the rows; checked against
float64 and timed round-robin beside torch.matmul and the read ceiling (round 7's timing).

What it found (round18/round18.txt): occupancy is not what made the one-row shuffle slow. At 8
blocks per SM with 1 load and no spills it still took 4.6% more time than the rule at 64 x 1,000,003
(72.0 against 68.9 us) and 4.8% more at the same shape with A one float into its storage; held to 8
blocks with 2 loads (spills) it was the slowest. Of the 7 shapes, it beat the rule beyond the
quartiles only at 1,024 x 262,147 (round 15's 56-register version, 2.7% less time) and
128 x 2,097,153 (2 loads at 5 blocks per SM, 0.8% less). Not adopted.

Then the stall reasons (round18/counters-stalls.txt, ncu, gemvlab's split_k as the rule runs it,
one launch after a warm-up; the command is round15_counters.py's with these metrics:
--kernel-name regex:"^gemv_split_k$" --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,
smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum"). Per issued
instruction at 64 x 1,000,003 a warp stalls 44.8 cycles: 29.1 on memory (long scoreboard), 4.8 to 5.2
on lg_throttle (the queue of global loads full), 2.9 at the barrier, 2.0 on mio_throttle; at the
aligned 64 x 1,000,000, 48.7, of which 40.7 on memory and no lg_throttle among the top five; 8% more
instructions (20.8 M against 19.3 M) and 2.5 times the L1 requests at odd K. So the scalar loads of B
fill the load queue: the candidate for the gap, not separated from the extra instructions.

    python tools/explore/round18.py OUT_DIR
"""
import ctypes
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch

import round15
from round7 import rnd, say, t_start

here = Path(__file__).parent
fn = build.build("round18", (here / "round18.cu").read_text(),
                 headers={"round15.cu": (here / "round15.cu").read_text(),
                          "any_alignment.cuh": (here / "round15" / "any_alignment.cuh").read_text(),
                          "launch_args.cuh": (here.parent.parent / "gemvlab" / "cuda" / "launch_args.cuh").read_text()}
                 ).function("launch_round18")
fn.argtypes = dispatch._ARGTYPES


def main():
    for M, K, offset in ((64, 1_000_003, 0), (64, 1_000_000, 1), (5, 20_000_003, 0), (128, 2_097_153, 0),
                         (1024, 262_147, 0), (4096, 4099, 0), (20_000, 20_001, 0)):
        A, B, ref = rnd.inputs(M, K, "one row, B shuffled", offset)
        C = torch.empty(M, 1, device="cuda")
        rule = dispatch.launcher(A, B)
        plan = rule.plan
        fns = {"rule " + plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
        errs = {}
        P = torch.empty(M * max(plan.splits, 1), device="cuda")
        stream = torch.cuda.current_stream().cuda_stream
        cands = {"round 15 L=2 (56 registers)": round15.x_launch("split", round15.split_plan(M, K, 1, 2), A, B, C, P)}
        for loads, minb in ((1, 8), (2, 5), (2, 6), (2, 8)):
            args = dispatch.LaunchArgs(A.stride(0), M, K, plan.chunk, plan.splits, 256, 10 * minb + loads, 0)

            def f(args=args):
                assert fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr(), ctypes.addressof(args), stream) == 0
            cands[f"bounded L={loads} {minb} blocks/SM"] = f
        for name, f in cands.items():
            C.fill_(float("nan"))
            f()
            torch.cuda.synchronize()
            errs[name] = bench.relative_error(C, ref)
            if errs[name] < 1e-5:
                fns[name] = f
            else:
                say(f"  {name}: WRONG {errs[name]:.2e}")
        rnd.time_and_log(M, K, "one row, B shuffled", fns, errs, {}, A, ceiling=offset == 0)
        del A, B, ref, C, P
        torch.cuda.empty_cache()
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
