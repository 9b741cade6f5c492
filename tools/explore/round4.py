"""Exploration round 4 on the H200 (issue 9, not part of gemvlab): the shapes where the dispatcher
still misses its bar (tools/explore/final, gemvlab/recorded/h200.json: 7 of 49), with the
dispatcher kernels' fixed choices left open (round4.cu): lanes per row G, loads in flight, block
size, splits, and how B is read when it is not aligned like A (four scalars, or two aligned
float4s shifted into place). Every candidate is checked against float64 and timed round-robin
beside torch.matmul, the read ceiling and the rule's own plan, L2 flushed by reading before each
launch (gemvlab.bench's timer). The machinery is dispatch_harness.py's, shared with rounds 5 and 6.

    python tools/explore/round4.py OUT_DIR
"""
import time

import torch

from dispatch_harness import Round, encode_round4, rows, split

rnd = Round("round4", encode_round4)
say, study, device, t_start = rnd.say, rnd.study, rnd.device, rnd.t_start
unflushed = rnd.unflushed


# 1. Small shapes (latency-bound: far less data than the GPU can have in flight). What does a
#    launch with nothing to do cost under this timer, and how few round trips can a plan make?
for M, K in ((16, 128), (128, 128), (1024, 128), (8192, 128), (16, 1024), (128, 1024), (1024, 1024), (8192, 1024)):
    cands = {"empty kernel": dict(kind="empty", block=32)}
    for G in (4, 8, 16, 32):
        for L in (1, 2, 4, 8):
            if (K // 4) // G >= L:  # every lane has L float4s at least
                for block in (128, 256):
                    cands[f"rows G={G} L={L} b={block}"] = rows(G, L, block)
    if M <= 1024 and K >= 1024:
        for block in (64, 128, 256):
            cands[f"split S=1 L=2 b={block}"] = split(1, 2, block)
    A, B, rule, fns = study(M, K, cands, "small")
    if (M, K) in ((16, 128), (1024, 1024)):
        for name in ("empty kernel", "torch.matmul", next(n for n in fns if n.startswith("rule"))):
            say(f"  no flush: {name:<30} {unflushed(fns[name]) * 1e3:7.2f} us")
    del A, B, rule, fns
for M, K in ((1, 8192), (16, 8192), (1, 65536), (16, 65536), (128, 65536), (1, 1048576), (16, 1048576)):
    cands = {}
    for s in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        if K // s >= 1024 and M * s <= 8 * 132 * 8:
            for block in (64, 128, 256, 512):
                for L in (2, 4):
                    if K // s // 4 // block >= L:
                        cands[f"split S={s} L={L} b={block}"] = split(s, L, block)
    study(M, K, cands, "small, long rows")
say(f"small done at {time.time() - t_start:.0f} s")
torch.cuda.empty_cache()

# 2. Many short rows: which G, loads and block reach the read ceiling?
for M, K, bms in ((2_000_000, 96, (1,)), (2_097_152, 128, (1,)), (524_288, 128, (1,)), (1_000_000, 256, (1,)),
                  (1_000_000, 257, (0, 2)), (1_000_000, 260, (1,)), (262_144, 1024, (1,))):
    cands = {}
    for G in (1, 2, 4, 8, 16, 32):
        for L in (1, 2, 4, 8):
            for BM in bms:
                if L in (1, 8) and BM == 0:
                    continue
                if (K // 4) // G >= L and G * 4 <= K:
                    for block in (128, 256, 512):
                        cands[f"rows G={G} L={L} b={block} B{BM}"] = rows(G, L, block, BM)
    study(M, K, cands, "short rows")
    torch.cuda.empty_cache()
say(f"short rows done at {time.time() - t_start:.0f} s")

# 3. Few long rows whose B is not aligned like A (K % 4 != 0): scalar B against the funnel, and
#    the same shape with K % 4 == 0 for what alignment costs.
for M, K, bms in ((3, 50_000_001, (0, 2)), (3, 50_000_000, (1, 2)), (64, 1_000_003, (0, 2)), (64, 1_000_000, (1, 2)),
                  (4096, 4099, (0, 2)), (20_000, 20_001, (0, 2))):
    cands = {}
    slots = device.sms * 8
    for waves in (1, 2, 4, 8):
        s = max(1, min(K // 8192, (waves * slots) // M))
        for L in (2, 4):
            for BM in bms:
                for block in (256, 512):
                    cands[f"split S={s} L={L} b={block} B{BM}"] = split(s, L, block, BM)
    study(M, K, cands, "few rows, odd K" if K % 4 else "few rows, K % 4 == 0")
    torch.cuda.empty_cache()
# a view that starts mid-row: B aligned, every row's A 4 bytes off (the funnel's other case)
study(64, 1_000_000, {f"split S=66 L=2 b=256 B{bm}": split(66, 2, 256, bm) for bm in (0, 2)}, "A one float in", offset=1)
say(f"all done at {time.time() - t_start:.0f} s")
