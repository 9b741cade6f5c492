"""Exploration round 5 on the H200 (issue 9, not part of gemvlab), logged in round5/round5.txt:
the same shapes as round 4 (round4/round4.txt) and more, asking two things of the kernels in
round5.cu: does a predicated last trip (MODE 1) and, on top of it, loading the head and tail
before the body (MODE 2) beat the library's loops (MODE 0), and which lanes per row G, loads per
trip and block size win at each shape. The machinery is dispatch_harness.py's, shared with rounds 4 and 6.
Every candidate is checked against float64 and timed round-robin beside torch.matmul, the read
ceiling and the rule's own plan, the L2 flushed by reading before each launch (gemvlab.bench's timer).

    python tools/explore/round5.py OUT_DIR
"""
import time

import torch

from dispatch_harness import Round, encode_with_mode, rows, split

rnd = Round("round5", encode_with_mode)
say, study, device, t_start = rnd.say, rnd.study, rnd.device, rnd.t_start


MODES = (0, 1, 2)


def rows_cands(K, Gs, Ls, blocks=(128,), bms=(1,)):
    out = {}
    for G in Gs:
        for L in Ls:
            for BM in bms:
                for block in blocks:
                    for mode in MODES:
                        out[f"rows G={G} L={L} b={block} B{BM} m{mode}"] = rows(G, L, block, BM, mode)
    return out


# 1. Small shapes: one trip per lane, and the predicated last trip
for M, K in ((16, 128), (1024, 128), (8192, 128), (16, 1024), (1024, 1024), (8192, 1024), (100, 100), (1000, 500)):
    Gs = (4, 8, 16, 32)
    c = rows_cands(K, Gs, (2, 4, 8))
    if K >= 1024:
        for mode in MODES:
            c[f"split S=1 L=2 b=128 m{mode}"] = split(1, 2, 128, 1 if K % 4 == 0 else 0, mode)
    if K % 4:
        c = {k: dict(v, BM=0) for k, v in c.items()}
    study(M, K, c, "small")
say(f"small done at {time.time() - t_start:.0f} s")
torch.cuda.empty_cache()

# 2. Many short rows
for M, K, bms, Gs in ((2_000_000, 96, (1,), (4, 8)), (2_097_152, 128, (1,), (4, 8, 16)), (1_000_000, 256, (1,), (8, 16)),
                      (1_000_000, 257, (0,), (4, 8, 16)), (1_000_000, 260, (1,), (8, 16)), (262_144, 1024, (1,), (16, 32)),
                      (1_000_000, 100, (1,), (4, 8)), (1_000_000, 513, (0,), (8, 16, 32)), (3_000_000, 33, (0,), (2, 4, 8))):
    study(M, K, rows_cands(K, Gs, (2, 4, 8), (128, 256), bms), "short rows")
    torch.cuda.empty_cache()
say(f"short rows done at {time.time() - t_start:.0f} s")

# 3. Rows that do not start aligned: few long rows, and one block per row
for M, K, bms, ss in ((3, 50_000_001, (0,), (352, 704, 1408)), (64, 1_000_003, (0,), (33, 66)), (64, 1_000_000, (1,), (33, 66)),
                      (4096, 4099, (0,), (1,)), (4096, 4096, (1,), (1,)), (20_000, 20_001, (0,), (1,)),
                      (16, 16_777_216, (1,), (132, 264)), (2048, 1_048_576, (1,), (1,))):
    c = {}
    for s in ss:
        for L in (2, 4):
            for BM in bms:
                for block in (256, 512):
                    for mode in MODES:
                        c[f"split S={s} L={L} b={block} B{BM} m{mode}"] = split(s, L, block, BM, mode)
    study(M, K, c, "long rows", ceiling=M * K < 2**31)
    torch.cuda.empty_cache()
study(64, 1_000_000, {f"split S=66 L={L} b=256 B0 m{m}": split(66, L, 256, 0, m) for m in MODES for L in (2, 4)},
      "A one float in", offset=1)
say(f"all done at {time.time() - t_start:.0f} s")
