"""Round 15's counters (run under ncu; tools/explore/round15/counters.txt): split_k at odd K as the
rule runs it (B's body read as scalars) and with B realigned by shuffles (round15.cu, one row per
block, 2 loads; 2 and 4 rows per block, 1 load), beside the same rule at an aligned K. Each is launched once after a warm-up,
the L2 flushed by reading before it. The kernels print in this order:

    ncu --clock-control none --kernel-name regex:"^(gemv_split_k|x_split_k)$" --section SpeedOfLight \
--section Occupancy --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum python3 tools/explore/round15_counters.py OUT_DIR

(the first run, round15/counters-1.txt, took the WarpStateStats, SchedulerStats and
MemoryWorkloadAnalysis sections too, and only the rule and one row per block realigned)
"""
import torch

from gemvlab import bench, dispatch

import round15  # noqa: F401  (its studies run only as a script)

for M, K in ((64, 1_000_003), (64, 1_000_000), (3, 50_000_001), (3, 50_000_000)):
    A = torch.rand(M * K, device="cuda").view(M, K)
    B = torch.rand(K, 1, device="cuda")
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    runs = {f"rule {rule.plan.name}": lambda: rule(A, B, C)}
    P = torch.empty(M * 4096, device="cuda")
    for rows, loads in ((1, 2), (2, 1), (4, 1)):
        if K % 4 or rows > 1:
            plan = round15.split_plan(M, K, rows, loads)
            runs[f"realigned R={rows} L={loads} {plan.name}"] = round15.x_launch("split", plan, A, B, C, P)
    for name, f in runs.items():
        f()
        bench.flush_l2()
        torch.cuda.synchronize()
        print(f"M={M} K={K} {name}", flush=True)
        f()
        torch.cuda.synchronize()
    del A, B, C
    torch.cuda.empty_cache()
