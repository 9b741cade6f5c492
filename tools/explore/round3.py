"""Exploration round 3: stage 4 and 5 with A loaded past L1 (__ldcg), under both flushes.
Round 2 (h200-round2.txt) found that a hint keeping A out of L1 let stage 4 gain 1.5% at 512 threads,
and that do_bench's zero-writing flush slows some load types more than others."""
from harness import *  # noqa: F403

x = lambda name, block, v: (name, "x", block, v)
smi()
T = ("read", "zero")
head = [("s3 512", "vectorized", 512, 0), ("s3 256", "vectorized", 256, 0),
        ("s4 256x4", "warp_shuffle", 256, 4), ("s4 256x2", "warp_shuffle", 256, 2), ("s4 512x2", "warp_shuffle", 512, 2)]
for b, L in ((512, 1), (512, 2), (512, 4), (256, 1), (256, 2), (256, 4), (1024, 1), (1024, 2), (128, 2), (128, 4), (64, 4)):
    head.append(x(f"s4 ldcg {b}x{L}", b, 1000 + L * 10 + 4))
head += [x("s4 noalloc 512x2", 512, 1022), x("s4 noalloc 512x1", 512, 1012), x("s4 ldcs 512x1", 512, 1011),
         x("s4 ldcs 512x2", 512, 1021), x("s4 noalloc 256x2", 256, 1022),
         ("mr 1024 r2", "multirow", 1024, 2), x("mr ldcg 1024 r2", 1024, 6024), x("mr ldcg 512 r2", 512, 6024),
         x("mr ldcg 256 r2", 256, 6024), x("mr ldcg 512 r4", 512, 6044), x("mr noalloc 512 r2", 512, 6022),
         x("mr ldcg 512 r1", 512, 6014),
         ("ceiling grid 1024x2 ldcs", "ceiling", 1024, 2), x("grid 1024 L4 plain", 1024, 3040),
         x("grid 1024 L4 ldcg", 1024, 3044), x("rows 1024 L2 plain", 1024, 2020), x("rows 512 L4 plain", 512, 2040),
         x("rows 1024 L2 ldcg", 1024, 2024), x("rows 512 L4 ldcg", 512, 2044), x("rows 512 L2 ldcg", 512, 2024),
         ("torch", "torch", 0, 0)]
run(2048, 1 << 20, head, rounds=6, timers=T, label="headline")
smi()
key = {"s3 512", "s4 256x4", "s4 ldcg 512x2", "s4 ldcg 512x1", "s4 ldcg 256x2", "s4 noalloc 512x2", "mr ldcg 1024 r2",
       "mr ldcg 512 r2", "grid 1024 L4 plain", "rows 1024 L2 plain", "torch"}
run(2048, 1 << 20, [c for c in head if c[0] in key], rounds=4, timers=T, spacer_gb=5, label="headline, another allocation")
smi()
short = [("s4 64x2", "warp_shuffle", 64, 2), ("s3 64", "vectorized", 64, 0), ("s4 64x4", "warp_shuffle", 64, 4),
         x("s4 ldcg 64x2", 64, 1024), x("s4 ldcg 64x1", 64, 1014), x("s4 ldcg 64x4", 64, 1044), x("s4 ldcg 128x2", 128, 1024),
         x("s4 ldcg 32x4", 32, 1044), ("mr 128 r4", "multirow", 128, 4), ("mr 64 r2", "multirow", 64, 2),
         x("mr ldcg 128 r4", 128, 6044), x("mr ldcg 128 r2", 128, 6024), x("mr ldcg 64 r2", 64, 6024),
         x("mr ldcg 64 r4", 64, 6044), x("mr ldcg 256 r4", 256, 6044), x("mr ldcg 32 r8", 32, 6084),
         x("mr ldcg 32 r4", 32, 6044), x("mr ldcg 64 r8", 64, 6084),
         x("wr ldcg 128 r2", 128, 4024), x("wr ldcg 128 r4", 128, 4044), x("wr 128 r2", 128, 4020),
         x("rows 64 L1 plain", 64, 2010), x("rows 64 L4 ldcg", 64, 2044), x("grid 1024 L4 plain", 1024, 3040),
         ("ceiling grid 1024x2 ldcs", "ceiling", 1024, 2), ("torch", "torch", 0, 0)]
run(262144, 1024, short, rounds=6, timers=T, label="K=1024")
smi()
k128 = [("mr 32 r8", "multirow", 32, 8), ("s4 32x4", "warp_shuffle", 32, 4),
        x("mr ldcg 32 r8", 32, 6084), x("mr ldcg 32 r4", 32, 6044), x("mr ldcg 32 r16", 32, 6164),
        x("mr noalloc 32 r8", 32, 6082), x("wr 128 r4", 128, 4040), x("wr ldcg 128 r4", 128, 4044),
        x("wr ldcg 256 r4", 256, 4044), x("wr ldcg 128 r8", 128, 4084),
        ("ceiling grid 1024x2 ldcs", "ceiling", 1024, 2),
        x("grid 1024 L4 plain", 1024, 3040), ("torch", "torch", 0, 0)]
run(2097152, 128, k128, rounds=5, timers=T, label="K=128")
for M, K in ((16384, 16384), (8192, 8192), (1024, 262144)):
    cf = [("s4 256x4", "warp_shuffle", 256, 4), x("s4 ldcg 512x2", 512, 1024), x("s4 ldcg 256x2", 256, 1024),
          x("s4 ldcg 128x2", 128, 1024), ("s3 256", "vectorized", 256, 0), ("mr 512 r4", "multirow", 512, 4),
          x("mr ldcg 512 r2", 512, 6024), x("mr ldcg 256 r2", 256, 6024), x("mr ldcg 256 r4", 256, 6044),
          x("grid 1024 L4 plain", 1024, 3040), x("rows 512 L4 plain", 512, 2040), ("torch", "torch", 0, 0)]
    run(M, K, cf, rounds=4, timers=T, label="other")
smi()
