"""What the record measures (gemvlab.results.record): the headline shape, the reference sweep, the
block sizes and variants swept, stage 2 and stage 4 taken apart, and the explorer grid."""

from __future__ import annotations

HEADLINE = (2048, 1048576)
#: The reference sweep (../shared/reference/README.md): few long rows to many short ones.
SHAPES = ((16, 16777216), (128, 2097152), (1024, 262144), (2048, 1048576), (16384, 16384),
          (262144, 1024), (2097152, 128), (4096, 4099), (1, 67108864), (8192, 8192))
BLOCKS = (32, 64, 128, 256, 512, 1024)
#: Variants swept: all compiled loads-in-flight; rows per block up to 32 at the headline shape
#: (64 exists to show spills), 2 to 16 on the other shapes.
HEADLINE_VARIANTS = {"warp_shuffle": (1, 2, 4, 8), "multirow": (1, 2, 4, 8, 16, 32)}
SHAPE_VARIANTS = {"warp_shuffle": (2, 4), "multirow": (2, 4, 8, 16)}
SHAPE_BLOCKS = (64, 256, 1024)
#: Stage 4 taken apart: (label, stage, variant) in teaching order, and where.
STEPS = (("3 vectorized", "vectorized", 0), ("4a + shuffle reduction", "warp_shuffle_l1", 1),
         ("4b + 2 loads in flight", "warp_shuffle_l1", 2), ("4 + A past the L1", "warp_shuffle", 2))
STEP_SHAPES = (((2048, 1048576), (32, 64, 128, 256)), ((16, 16777216), (256, 1024)), ((128, 2097152), (256, 1024)))
#: The explorer grid (notebook 05's sliders) and shapes outside the reference sweep, where the
#: dispatcher's bar is checked too (docs/design/dispatch.md says which the rule was tuned on).
EXPLORER_M = (1, 16, 128, 1024, 8192, 65536, 524288)
EXPLORER_K = (128, 1024, 8192, 65536, 1048576, 16777216)
OUTSIDE = ((3, 50_000_001), (50, 5_000_000), (700, 400_000), (100_000, 3000), (1_000_000, 257),
           (64, 1_000_003), (4096, 4096), (300, 3_000_000), (20_000, 20_001), (2_000_000, 96),
           (500_000, 200), (4_000_000, 50), (70_000, 1500), (8, 30_000_000), (123_457, 777),
           (6, 25_000_000), (5_000_000, 24), (2_000_000, 45), (40, 6_000_001), (1_100, 240_000),
           (1_200, 200_003), (1_024, 262_147), (2_200, 100_001), (500, 1_000_001), (128, 2_097_153),
           (10_000_000, 8), (6_000_000, 17), (3_000_000, 33), (1_700, 140_000), (200, 2_000_001),
           (100, 1_000_001), (4_736_842, 19), (2_307_692, 39))
EXPLORER_MAX_ELEMENTS = 2**30
#: The naive stage runs one thread per row; where one launch takes longer than this, it is
#: not timed (20 launches would take minutes) and the row says how long one would take.
NAIVE_LIMIT_S = 1.0

SWEEP_TIMING = {"warmup_ms": 10, "rep_ms": 60}
HEADLINE_TIMING = {"warmup_ms": 50, "rep_ms": 400}
HEADLINE_ROUNDS = 5  # the stage table: every version visited in turn, 5 times
SHAPE_ROUNDS = 3

#: Stage 2's two changes taken apart at the headline shape: stage 1 at 32 threads (64 warps),
#: stage 2's coalesced loads with the same 64 warps, stage 2 at 32 threads (one warp per row).
WARPS = (("naive", 32, 0), ("few_warps", 32, 64), ("coalesced", 32, 0))


def explorer_shapes() -> list[tuple[int, int]]:
    grid = [(M, K) for M in EXPLORER_M for K in EXPLORER_K if M * K <= EXPLORER_MAX_ELEMENTS]
    return grid + [s for s in OUTSIDE if s not in grid]
