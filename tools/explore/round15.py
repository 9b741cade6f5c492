"""Exploration round 15 on the H200 (issue 9, not part of gemvlab), logged in round15/round15.txt.

Session 13's record left 3 x 50,000,001 (0.861 of the read ceiling), 64 x 1,000,003 (0.863),
40 x 6,000,001 (0.876) and 123,457 x 777 (0.901) under the 0.91 bar: rows that do not start at
B's offset from a 16-byte boundary, where gemvlab reads B's body as scalars (any_alignment.cuh).
round15.cu reads B only as aligned float4s and realigns them with warp shuffles:
* split_k, one row per block (ROWS = 1, B's offset a template argument), 1, 2 or 4 loads;
* split_k, 2 rows per block sharing each float4 of B whatever the rows' offsets;
* rows_per_warp (G lanes per row, 4 loads).
Each against the rule's plan and gemvlab's own split_k with 2 rows per block, at the odd-K shapes,
controls where the rule keeps one block per row (4096 x 4099, 20,000 x 20,001), and views that
start 1 or 2 floats into their storage (rows aligned alike, B not). Every candidate is checked
against float64 (the whole result, and each row: inputs are non-negative, so a row's relative
error is |C - ref| / ref) and timed round-robin beside torch.matmul, the read ceiling and the rule
(round 7's timing).

    python tools/explore/round15.py OUT_DIR
"""
import ctypes
import dataclasses
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch
from gemvlab.kernels import SPLIT_K, stage_occupancy, split_k_variant

from round7 import device, rnd, say, t_start

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"
# any_alignment.cuh as it was when this round ran (round15/any_alignment.cuh; gemvlab's own now
# holds this round's dot_rows_shuffled)
lib = build.build("round15", (here / "round15.cu").read_text(),
                  headers={"any_alignment.cuh": (here / "round15" / "any_alignment.cuh").read_text(),
                           "launch_args.cuh": (cuda / "launch_args.cuh").read_text()})
fns_x = {k: lib.function(f"launch_round15_{k}") for k in ("split", "rows")}
for f in fns_x.values():
    f.argtypes = dispatch._ARGTYPES


def row_error(C, ref):
    return ((C.reshape(-1).double() - ref.reshape(-1)).abs() / ref.reshape(-1).abs().clamp_min(1e-30)).max().item()


def x_launch(kind, plan_or_g, A, B, C, P):
    M, K = A.shape
    if kind == "split":
        p = plan_or_g
        args = dispatch.LaunchArgs(A.stride(0), M, K, p.chunk, p.splits, p.block, 16 * p.rows_per_block + 2 * p.loads,
                                   p.grid)
    else:
        args = dispatch.LaunchArgs(A.stride(0), M, K, 0, 1, 128, plan_or_g, 0)
    fn, stream = fns_x[kind], torch.cuda.current_stream().cuda_stream

    def f():
        assert fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr(), ctypes.addressof(args), stream) == 0
    f.args = args
    return f


def split_plan(M, K, rows, loads, b_vec=False):
    """split_k at about the rule's 4 waves, the waves counted with gemvlab's kernel of the same rows
    (and loads, where gemvlab compiles them: it has no one-row, one-load variant)."""
    variant = split_k_variant(rows, loads if (rows, loads) != (1, 1) else 2, b_vec)
    slots = device.sms * stage_occupancy(SPLIT_K, 256, variant, device.limits).blocks_per_sm
    warps_per_sm = min(slots / device.sms, M / device.sms) * 8
    s, _ = dispatch.choose_splits(M, K, slots, warps_per_sm, device.limits.max_threads // 32, device.l2_bytes, rows)
    plan = dispatch.make_plan(M, K, "split_k", device, b_vec, 256, 2 if (rows, loads) == (1, 1) else loads, s, rows_per_block=rows)
    return dataclasses.replace(plan, loads=loads)  # the same stretches, for round15.cu's 1 load


def study(M, K, label, offset=0):
    A, B, ref = rnd.inputs(M, K, label, offset)
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    fns, errs, meta = {"rule " + rule.plan.name: lambda: rule(A, B), "torch.matmul": lambda: torch.matmul(A, B)}, {}, {}
    cands = {}
    if K > dispatch.SHORT_ROW_K:
        b_vec = rule.plan.b_vec
        for rows, loads in ((1, 2), (2, 1), (4, 1)):
            if rows <= 2 * M and not (rows, loads) == (1, 2) or b_vec:
                cands[f"gemvlab R={rows} L={loads}{' B float4' if b_vec else ''}"] = (
                    "lib", split_plan(M, K, rows, loads, b_vec))
        for rows, loads in ((1, 1), (1, 2), (2, 1), (2, 2), (4, 1)):
            if rows <= 2 * M and (rows > 1 or not b_vec):
                cands[f"realigned R={rows} L={loads}"] = ("split", split_plan(M, K, rows, loads))
    else:
        G0 = rule.plan.lanes_per_row
        for G in sorted({G0, max(4, G0 // 2), min(32, 2 * G0)}):
            cands[f"realigned rows G={G}"] = ("rows", G)
    P = torch.empty(M * max([c[1].splits for c in cands.values() if c[0] != "rows"] + [1]), device="cuda")
    for name, (kind, c) in cands.items():
        if kind == "lib":
            launch = dispatch.make_launch(c, A.stride(0), True, A.device)
            f = (lambda launch: lambda: launch(A, B, C))(launch)
        else:
            f = x_launch(kind, c, A, B, C, P)
        C.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        errs[name] = bench.relative_error(C, ref)
        worst_row = row_error(C, ref)
        meta[name] = dict(kind=kind, plan=c.name if kind != "rows" else f"G={c}", worst_row=worst_row)
        if errs[name] < 1e-4 and worst_row < 1e-4:
            fns[name] = f
        else:
            say(f"  {name}: WRONG, relative error {errs[name]:.2e}, worst row {worst_row:.2e}")
        if kind != "rows":
            say(f"  {name}: {c.name}, {c.grid} blocks")
    rnd.time_and_log(M, K, label, fns, errs, meta, A, ceiling=offset == 0)
    del A, B, ref, C, P
    torch.cuda.empty_cache()


def main():
    for M, K in ((3, 50_000_001), (64, 1_000_003), (40, 6_000_001), (5, 20_000_003), (12, 10_000_001),
                 (16, 16_777_217), (128, 2_097_153), (300, 3_000_001), (4096, 4099), (20_000, 20_001), (1024, 262_147)):
        study(M, K, "odd K, split_k")
    say(f"odd K done at {time.time() - t_start:.0f} s")
    for M, K, offset in ((64, 1_000_000, 1), (8, 30_000_000, 2), (3, 50_000_000, 1)):
        study(M, K, f"view {offset} floats in", offset)
    say(f"views done at {time.time() - t_start:.0f} s")
    for M, K in ((3, 50_000_000), (64, 1_000_000), (40, 6_000_000), (16, 16_777_216)):
        study(M, K, "aligned, split_k")
    say(f"aligned done at {time.time() - t_start:.0f} s")
    for M, K in ((123_457, 777), (1_000_000, 257), (300_000, 513), (2_000_000, 97), (500_000, 201), (100_000, 1999),
                 (200_000, 1023)):
        study(M, K, "odd K, rows_per_warp")
    say(f"all done at {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
