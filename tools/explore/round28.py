"""Exploration round 28 on the H200 (issue 9, not part of gemvlab), logged in round28/round28.txt.

Session 16's record (tools/explore/final16) left row tiles under the bar at K = 17 to 45 (0.80 at
2,307,692 x 39) and round 27 found the rule under 0.91 at 52 of 57 K from 8 to 64. Rounds 19 to 27
changed the kernel (larger tiles, two rows per thread, fewer instructions) and found no rule. Not
yet tried: the rule's other choices with gemvlab's own kernel as it is, lanes per row G and threads
per block. So:
* part A, row_tiles at M = 90,000,000 / K for odd K from 9 to 63 and some even K: every (G, block)
  of G in 1, 2, 4 and blocks of 64, 128 and 256 threads whose tile fits 4,096 floats and holds at
  least 64 rows (and G = 1
  with two rows per thread where that fits), against the rule;
* part B, the record's one torch.matmul miss, 1,024 x 1,048,576 (0.99x; 1,024 rows in 0.97 of a
  wave, unsplit): split in 2, 3, 4 and 8, at it and at shapes of its kind, against the rule.
Every candidate is checked against float64 and timed round-robin beside the rule, torch.matmul and
the read ceiling (round 7's timing).

What it found (round28/round28.txt): part A, at 33 of the 37 K no other (G, block) took less time
than the rule's by more than 0.5%. The others: K = 9 and 11, one lane and two rows per thread at 128 threads (the rule's 256 rows with
half the threads) took 4.8 and 3.6% less time (0.901 and 0.924 of the read ceiling against 0.858
and 0.891), but 3.6 and 4.2% more at K = 10 and 16, and round 26's version of it lost at K = 9;
K = 32, two lanes per row at 256 threads, 2.1% less (0.936 against 0.916; round 8 found 1.2%); K =
39, one lane per row at 64 threads, 8.1% less (0.855 against 0.786), but from 0.5% less to 5.5%
more at the other odd K from 33 to 63. No rule in K; not adopted. Part B: 1,024 x 1,048,576 ran at 1.01x
torch.matmul here (963.4 against 972.8 us, 0.99x in session 16's record, 1.00x in session 15's):
at the edge of a tie. Split for 8 waves it took 0.6 to 1.4% less time at 1,000 to 1,056 rows of
1,048,576 floats (0.985 to 0.990 of the read ceiling), and tied at 1,024 x 524,288 and 1,024 x
262,144; 900 x 1,000,000 ran fastest unsplit (0.963, 8 waves 0.940). Not adopted: gains near the
0.55% drift between two timings, and a loss at 900 rows.

    python tools/explore/round28.py OUT_DIR
"""
import time

import torch

from gemvlab import bench, dispatch

from round7 import device, rnd, say, t_start


def compare(M, K, label, plans):
    """The rule, torch.matmul and each plan of `plans` ({name: Plan}) timed round-robin."""
    A, B, ref = rnd.inputs(M, K, label)
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    fns = {"rule " + rule.plan.name + f" b={rule.plan.block}": lambda: rule(A, B),
           "torch.matmul": lambda: torch.matmul(A, B)}
    errs, meta = {}, {}
    for name, plan in plans.items():
        launch = dispatch.make_launch(plan, K, True, A.device)
        f = lambda launch=launch: launch(A, B, C)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        meta[name] = [plan.variant, plan.block, plan.splits]
        if errs[name] < 1e-5:
            fns[name] = f
        else:
            say(f"  {name}: WRONG {errs[name]:.2e}")
    rnd.time_and_log(M, K, label, fns, errs, meta, A)
    del A, B, ref, C
    torch.cuda.empty_cache()


def tile_plans(M, K):
    rule = dispatch.choose(M, K, K, 0, 0, device)
    out = {}
    for G, R in ((1, 1), (2, 1), (4, 1), (1, 2)):
        for block in (64, 128, 256):
            rows = block // G * R
            if rows < 64 or not dispatch.tile_fits(rows, K, K):
                continue
            if (G, R, block) == (rule.lanes_per_row, rule.rows_per_group, rule.block):
                continue
            plan = dispatch.make_plan(M, K, "row_tiles", device, False, block, lanes_per_row=G, rows_per_group=R)
            out[f"G={G} R={R} b={block} rows={rows}"] = plan
    return out


def split_plans(M, K):
    rule = dispatch.choose(M, K, K, 0, 0, device)
    slots = device.sms * 8
    out = {}
    for splits in (2, 3, 4, 8):
        if splits == rule.splits:
            continue
        plan = dispatch.make_plan(M, K, "split_k", device, rule.b_vec, 256, loads=2, splits=splits)
        out[f"x {plan.splits} ({M * plan.splits / slots:.2f} waves)"] = plan
    return out


def main():
    say(f"device: {torch.cuda.get_device_name()}")
    for K in list(range(9, 64, 2)) + [10, 16, 24, 32, 40, 48, 50, 56, 64]:
        M = 90_000_000 // K
        if dispatch.choose(M, K, K, 0, 0, device).kernel == "row_tiles":
            compare(M, K, "tiles, G and block", tile_plans(M, K))
    say(f"part A done at {time.time() - t_start:.0f} s")
    for M, K in ((1024, 1_048_576), (1000, 1_048_576), (1056, 1_048_576), (1024, 524_288), (900, 1_000_000),
                 (1024, 262_144)):
        compare(M, K, "one wave, long rows", split_plans(M, K))
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
