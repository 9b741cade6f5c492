"""Why A past the L1 helps (not part of gemvlab): one launch of each kernel at M = 2048,
K = 65536 (A is 537 MB), to be run under Nsight Compute:

  ncu --clock-control none --kernel-name regex:"gemv|s4x" --metrics <see tools/gpu-run.sh> \\
      python3 tools/explore/l1_counters.py

Kernels: stage 3 (512 threads), round 2's stage-4 copy with plain loads of A and with __ldcg
(256 threads, 2 loads in flight), gemvlab's stage 4 and stage 5 (2 rows) as built."""
from pathlib import Path

import torch

from gemvlab import bench, build
from gemvlab.kernels import gemv

fn = build.build("round2", (Path(__file__).parent / "round2.cu").read_text()).function("launch_round2")
M, K = 2048, 65536
A, B = bench.random_inputs(M, K, seed=3)
C = torch.empty(M, device="cuda")
s = torch.cuda.current_stream().cuda_stream
for variant in (1020, 1024):  # s4x<2, plain>, s4x<2, __ldcg>
    assert fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, 256, variant, s) == 0
gemv(A, B, "vectorized", 512)
gemv(A, B, "warp_shuffle", 256, 2)
gemv(A, B, "multirow", 256, 2)
torch.cuda.synchronize()
print("done")
