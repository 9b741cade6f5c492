"""Exploration round 2 (questions in harness.py); output: h200-round2.txt."""
from harness import *  # noqa: F403

x = lambda name, block, v: (name, "x", block, v)
smi()
# ---- headline ----
head = [("s3 512", "vectorized", 512, 0), ("s3 256", "vectorized", 256, 0),
        ("s4 256x4", "warp_shuffle", 256, 4), ("s4 512x4", "warp_shuffle", 512, 4),
        ("s4 512x2", "warp_shuffle", 512, 2), ("s4 1024x2", "warp_shuffle", 1024, 2),
        ("s4 1024x4", "warp_shuffle", 1024, 4), ("s4 128x8", "warp_shuffle", 128, 8),
        ("s4 256x8", "warp_shuffle", 256, 8), ("s4 256x2", "warp_shuffle", 256, 2),
        ("mr 1024 r2", "multirow", 1024, 2), ("mr 512 r2", "multirow", 512, 2), ("mr 512 r4", "multirow", 512, 4),
        ("ceiling grid 1024x2 ldcs", "ceiling", 1024, 2), ("ceiling grid 512x4 ldcs", "ceiling", 512, 4),
        x("grid 1024 L4 plain", 1024, 3040), x("grid 512 L8 plain", 512, 3080), x("grid 256 L4 plain", 256, 3040),
        x("grid 1024 L4 noalloc", 1024, 3042), x("grid 1024 L4 evfirst", 1024, 3043),
        x("rows 512 L4 plain", 512, 2040), x("rows 256 L4 plain", 256, 2040), x("rows 1024 L2 plain", 1024, 2020),
        x("rows 512 L1 plain", 512, 2010), x("rows 512 L4 ldcs", 512, 2041), x("rows 512 L4 noalloc", 512, 2042),
        x("rows 256 L8 plain", 256, 2080),
        x("s4x 256x4 ldcs", 256, 1041), x("s4x 256x4 noalloc", 256, 1042), x("s4x 256x4 evfirst", 256, 1043),
        x("s4x 512x4 noalloc", 512, 1042), x("s4x 512x2 noalloc", 512, 1022), x("s4x 512x1 ldcs", 512, 1011),
        x("s4p 512x4", 512, 1140), x("s4p 256x4", 256, 1140), x("s4p 1024x2", 1024, 1120),
        x("s4p 512x4 noalloc", 512, 1142), x("s4p 256x8", 256, 1180),
        x("s4lb 256x4", 256, 5040), x("s4lb 512x4", 512, 5040), x("s4lb 256x8", 256, 5080), x("s4lb 512x2", 512, 5020),
        ("torch", "torch", 0, 0)]
key = {"s3 512", "s4 256x4", "s4 512x4", "mr 1024 r2", "ceiling grid 1024x2 ldcs", "grid 1024 L4 plain",
       "rows 512 L4 plain", "torch"}
run(2048, 1 << 20, head, rounds=6, subset_timers=("zero", "none", "do_bench"), subset=key, label="A1")
smi()
again = [c for c in head if c[0] in key or c[0][:3] in ("s4p", "s4x", "s4l")]
run(2048, 1 << 20, again, rounds=4, spacer_gb=3, label="A2 (another allocation)")
smi()
# ---- short rows ----
short = [("s4 64x2", "warp_shuffle", 64, 2), ("s3 64", "vectorized", 64, 0), ("s3 32", "vectorized", 32, 0),
         ("s3 128", "vectorized", 128, 0), ("s4 32x4", "warp_shuffle", 32, 4), ("s4 64x4", "warp_shuffle", 64, 4),
         ("s4 128x2", "warp_shuffle", 128, 2), ("s4 64x1", "warp_shuffle", 64, 1), ("s4 32x8", "warp_shuffle", 32, 8),
         ("mr 256 r4", "multirow", 256, 4), ("mr 128 r4", "multirow", 128, 4), ("mr 32 r8", "multirow", 32, 8),
         ("mr 64 r2", "multirow", 64, 2)]
for R in (1, 2, 4, 8, 16):
    for b in (128, 256, 512):
        short.append(x(f"wr {b} r{R}", b, 4000 + R * 10))
short += [x("wr 256 r4 ldcs", 256, 4041), x("wr 256 r8 ldcs", 256, 4081), x("wr 256 r8 noalloc", 256, 4082),
          x("rows 64 L1 plain", 64, 2010), x("rows 64 L4 plain", 64, 2040), ("ceiling grid 1024x2 ldcs", "ceiling", 1024, 2),
          x("grid 1024 L4 plain", 1024, 3040), x("grid 512 L2 plain", 512, 3020), ("torch", "torch", 0, 0)]
skey = {"s4 64x2", "s3 64", "mr 256 r4", "wr 256 r4", "wr 256 r8", "grid 1024 L4 plain", "ceiling grid 1024x2 ldcs", "torch"}
run(262144, 1024, short, rounds=6, subset_timers=("zero", "none"), subset=skey, label="K=1024")
smi()
k128 = [("s4 32x4", "warp_shuffle", 32, 4), ("s3 32", "vectorized", 32, 0), ("mr 32 r8", "multirow", 32, 8),
        ("mr 32 r16", "multirow", 32, 16), ("mr 64 r8", "multirow", 64, 8)]
for R in (2, 4, 8, 16):
    for b in (128, 256, 512):
        k128.append(x(f"wr {b} r{R}", b, 4000 + R * 10))
k128 += [x("wr 256 r8 ldcs", 256, 4081), x("wr 256 r8 noalloc", 256, 4082),
         ("ceiling grid 1024x2 ldcs", "ceiling", 1024, 2), x("grid 1024 L4 plain", 1024, 3040), ("torch", "torch", 0, 0)]
run(2097152, 128, k128, rounds=5, subset_timers=("zero", "none"), subset={"mr 32 r8", "wr 256 r8", "torch", "s4 32x4"}, label="K=128")
for M, K in ((16384, 16384), (8192, 8192)):
    cf = [("s4 256x4", "warp_shuffle", 256, 4), ("s4 128x4", "warp_shuffle", 128, 4), ("s4 512x2", "warp_shuffle", 512, 2),
          ("s3 256", "vectorized", 256, 0), ("s3 128", "vectorized", 128, 0), ("mr 256 r2", "multirow", 256, 2),
          ("mr 256 r4", "multirow", 256, 4), ("mr 512 r4", "multirow", 512, 4)]
    cf += [x(f"wr {b} r{R}", b, 4000 + R * 10) for R in (1, 2, 4) for b in (128, 256)]
    cf += [x("grid 1024 L4 plain", 1024, 3040), ("ceiling grid 1024x2 ldcs", "ceiling", 1024, 2), ("torch", "torch", 0, 0)]
    run(M, K, cf, rounds=4, label="square-ish")
smi()
