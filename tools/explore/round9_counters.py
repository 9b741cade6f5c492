"""Round 9's counters (run under ncu, tools/explore/round9/counters.txt): DRAM bytes read and L2
sectors read by the SMs for split_k at few rows, one and two rows per block, beside M = 1 (where
A and B are each read once) and a read-only pass over A. Each plan is launched once after a
warm-up; the L2 is flushed by reading before each. The kernels print in this order:

    ncu --clock-control none --kernel-name regex:"gemv_split_k|read_grid" --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,\
gpu__time_duration.sum python3 tools/explore/round9_counters.py
"""
import torch

from gemvlab import bench, dispatch
from gemvlab.kernels import read_ceiling_launcher

device = dispatch.Device.of()
for M, K, offset in ((3, 50_000_000, 0), (3, 50_000_001, 0), (8, 30_000_000, 0), (1, 67_108_864, 0)):
    A = torch.rand(M * K, device="cuda").view(M, K)
    B = torch.rand(K, 1, device="cuda")
    C = torch.empty(M, 1, device="cuda")
    b_vec = K % 4 == 0 or M == 1
    plans = []
    for rows, loads in ((1, 2), (2, 1), (4, 1)):
        if rows > dispatch._next_pow2(M):
            continue
        occ = dispatch.stage_occupancy(dispatch.SPLIT_K, 256, 16 * rows + 2 * loads + b_vec, device.limits)
        s = min(max(1, K // dispatch.MIN_CHUNK), 4 * device.sms * occ.blocks_per_sm // -(-M // rows))
        plans.append(dispatch.make_plan(M, K, "split_k", device, b_vec, 256, loads, s, rows_per_block=rows))
    for plan in plans:
        launch = dispatch.make_launch(plan, K, True, A.device)
        launch(A, B, C)
        bench.flush_l2()
        torch.cuda.synchronize()
        print(f"M={M} K={K} {plan.name} ({plan.grid} blocks)", flush=True)
        launch(A, B, C)
        torch.cuda.synchronize()
    if (M * K) % 4 == 0:
        R = A.reshape(-1).view(1, -1)
        f = read_ceiling_launcher(R, 512, device.sms * 4)
        bench.flush_l2()
        torch.cuda.synchronize()
        print(f"M={M} K={K} read ceiling", flush=True)
        f()
        torch.cuda.synchronize()
    del A, B, C
    torch.cuda.empty_cache()
