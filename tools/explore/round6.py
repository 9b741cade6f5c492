"""Exploration round 6 on the H200 (issue 9, not part of gemvlab), logged in round6/round6.txt:
MODE 2 of round 5 (the head and tail loaded first, a predicated last trip) against MODE 3 (the
same, with a head that runs to the next 128-byte line, so that the body starts on a line), at
rows that do not start on a line and at controls that do, with G near the rule's. The timing
machinery is round4.py's, copied as it ran.
Every candidate is checked against float64 and timed round-robin beside torch.matmul, the read
ceiling and the rule's own plan, the L2 flushed by reading before each launch (gemvlab.bench's timer).

    python tools/explore/round6.py OUT_DIR
"""
import time

import torch

from gemvlab import dispatch

from dispatch_harness import Round, encode_with_mode, rows, split

rnd = Round("round6", encode_with_mode, rounds=5, target_ms=60.0)
say, study, device, t_start = rnd.say, rnd.study, rnd.device, rnd.t_start


# Rows that do not start on a 128-byte line (K * 4 not a multiple of 128, or a view): MODE 2 (body
# from the first 16-byte boundary) against MODE 3 (body from the first 128-byte boundary), with
# rows whose every start is a line as controls (K = 96, 1024, 1,000,000).
for M, K, BM in ((1_000_000, 257, 0), (1_000_000, 260, 1), (1_000_000, 256, 1), (2_000_000, 96, 1), (1_000_000, 100, 1),
                 (3_000_000, 33, 0), (1_000_000, 513, 0), (1000, 500, 1), (16, 128, 1), (1024, 1024, 1), (100, 100, 1),
                 (200_000, 1000, 1), (131_072, 2047, 0)):
    G = min(32, max(4, dispatch._nearest_pow2(K / 16)))
    c = {}
    for g in sorted({G, max(4, G // 2), min(32, G * 2)}):
        for mode in (2, 3):
            c[f"rows G={g} L=4 b=128 B{BM} m{mode}"] = rows(g, 4, 128, BM, mode)
    study(M, K, c, "rows")
    torch.cuda.empty_cache()
for M, K, BM, s, offset in ((64, 1_000_003, 0, 66, 0), (64, 1_000_000, 1, 66, 0), (64, 1_000_000, 0, 66, 1),
                            (4096, 4099, 0, 1, 0), (4096, 4096, 1, 1, 0), (4096, 4100, 1, 1, 0), (20_000, 20_001, 0, 1, 0),
                            (3, 50_000_001, 0, 1408, 0), (3, 50_000_000, 1, 1408, 0), (16, 16_777_216, 1, 264, 0),
                            (2048, 1_048_576, 1, 1, 0), (100_000, 3000, 1, 1, 0), (30_000, 30_001, 0, 1, 0)):
    c = {f"split S={s} L=2 b=256 B{BM} m{mode}": split(s, 2, 256, BM, mode) for mode in (2, 3)}
    study(M, K, c, "long rows", offset=offset, ceiling=M * K < 2**31)
    torch.cuda.empty_cache()
say(f"all done at {time.time() - t_start:.0f} s")
