"""Exploration on the H200 (not part of gemvlab): which stage-4 design gains over stage 3, timed
round-robin so that drift hits every variant alike. Prints medians over all rounds."""
import statistics
from pathlib import Path
import torch
from triton.testing import do_bench
from gemvlab import bench, build
from gemvlab.kernels import prepare, read_ceiling_launcher

here = Path(__file__).parent
ex = build.build("explore", (here / "stage4_variants.cu").read_text())
fn = ex.function("launch_explore")

def explore_launch(A, B, C, M, K, block, variant):
    s = torch.cuda.current_stream().cuda_stream
    args = (A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, block, variant, s)
    return lambda: fn(*args)

def run(M, K, configs, rounds):
    A, B = bench.random_inputs(M, K, seed=1)
    ref = bench.reference(A, B)
    C = torch.empty(M, device="cuda")
    launches = {}
    for name, kind, block, variant in configs:
        if kind == "explore":
            f = explore_launch(A, B, C, M, K, block, variant)
            f(); torch.cuda.synchronize()
            err = bench.relative_error(C, ref)
        elif kind == "ceiling":
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            f = read_ceiling_launcher(A, block, sms * variant); err = 0
        elif kind == "torch":
            f = lambda: torch.matmul(A, B); err = 0
        else:
            f, Cv = prepare(A, B, kind, block, variant)
            f(); torch.cuda.synchronize(); err = bench.relative_error(Cv, ref)
        launches[name] = (f, err)
    times = {n: [] for n in launches}
    for r in range(rounds):
        for n, (f, _) in launches.items():
            times[n] += list(do_bench(f, warmup=5, rep=30, return_mode="all"))
    base = statistics.median(times[configs[0][0]])
    print(f"M={M} K={K} rounds={rounds}")
    for n, t in times.items():
        med = statistics.median(t)
        q = statistics.quantiles(t, n=4)
        print(f"  {n:28} {med:8.4f} ms  iqr {q[0]:.4f}-{q[2]:.4f}  n={len(t):5}  vs first {base/med:6.3f}  err {launches[n][1]:.1e}")
    del A, B
    torch.cuda.empty_cache()

head = [("s3 vectorized 512", "vectorized", 512, 0), ("s3 vectorized 256", "vectorized", 256, 0),
        ("ceiling 1024x2", "ceiling", 1024, 2), ("ceiling 512x4", "ceiling", 512, 4)]
for b in (256, 512):
    for v, what in ((10, "1 plain"), (11, "1 ldcs"), (12, "1 L2::256B"), (40, "4 plain"), (41, "4 ldcs"),
                    (42, "4 L2::256B"), (80, "8 plain"), (81, "8 ldcs"), (82, "8 L2::256B")):
        head.append((f"s4 {b} {what}", "explore", b, v))
head.append(("s3 vectorized 512 again", "vectorized", 512, 0))
head.append(("multirow 1024 r2", "multirow", 1024, 2))
run(2048, 1 << 20, head, rounds=6)
short = [("s3 vectorized 64", "vectorized", 64, 0), ("s3 vectorized 128", "vectorized", 128, 0),
         ("s4 64 l4", "warp_shuffle", 64, 4), ("s4 64 l2", "warp_shuffle", 64, 2), ("s4 128 l2", "warp_shuffle", 128, 2),
         ("s4 256 l1", "warp_shuffle", 256, 1),
         ("s4x 64 4 L2::256B", "explore", 64, 42), ("s4x 64 1 L2::256B", "explore", 64, 12),
         ("mr 256 r4", "multirow", 256, 4), ("mr 128 r4", "multirow", 128, 4), ("mr 64 r8", "multirow", 64, 8),
         ("mr 32 r8", "multirow", 32, 8), ("mr 32 r16", "multirow", 32, 16), ("mr 64 r4", "multirow", 64, 4),
         ("ceiling 1024x2", "ceiling", 1024, 2), ("torch", "torch", 0, 0)]
run(262144, 1024, short, rounds=6)
run(2097152, 128, [("s4 32 l4", "warp_shuffle", 32, 4), ("s3 32", "vectorized", 32, 0),
                   ("mr 32 r8", "multirow", 32, 8), ("mr 32 r16", "multirow", 32, 16), ("mr 32 r4", "multirow", 32, 4),
                   ("mr 64 r8", "multirow", 64, 8), ("ceiling 1024x2", "ceiling", 1024, 2), ("torch", "torch", 0, 0)], rounds=6)
