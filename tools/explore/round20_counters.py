"""Round 20's counters (run under ncu; tools/explore/round20/counters.txt): gemvlab's kernels as the
rule runs them at the two shapes under the bar and at neighbours that meet it: row_tiles at
2,000,000 x 45 against 4,000,000 x 50 and 5,000,000 x 24; split_k at 64 x 1,000,003 against
64 x 1,000,000 and 1 x 2^26. Each is launched once after a warm-up, the L2 flushed by reading
before it. The command (tools/explore/round20's run):

    ncu --clock-control none --kernel-name regex:"^(gemv_row_tiles|gemv_split_k)$" --metrics METRICS \
python3 tools/explore/round20_counters.py

with METRICS as in the run's command line, printed at the top of counters.txt.
"""
import torch

from gemvlab import bench, dispatch

for M, K in ((2_000_000, 45), (4_000_000, 50), (5_000_000, 24), (64, 1_000_003), (64, 1_000_000), (1, 2**26)):
    A = torch.rand(M * K, device="cuda").view(M, K)
    B = torch.rand(K, 1, device="cuda")
    C = torch.empty(M, 1, device="cuda")
    rule = dispatch.launcher(A, B)
    rule(A, B, C)
    bench.flush_l2()
    torch.cuda.synchronize()
    print(f"M={M} K={K} rule {rule.plan.name}", flush=True)
    rule(A, B, C)
    torch.cuda.synchronize()
    del A, B, C
    torch.cuda.empty_cache()
