"""The dispatcher: the kernel and launch chosen for the shape at hand, for any float32 A whose rows
are adjacent floats (any M, K, K % 4, row stride or first address).

The stages teach one design each, and each is fast only for some shapes: one block per row leaves
SMs idle when rows are few and wastes most of each block when rows are short, and the float4
stages refuse rows that do not start 16-byte aligned. The rule (rule.py) picks one of three
kernels that take any row: split_k.cu (a block per stretch of one or a few rows, then a
fixed-order reduce), rows_per_warp.cu (G lanes per row) and row_tiles.cu (short rows loaded as
one flat stretch into shared memory).

    plan, lda = plan_for(A, B)        # the rule's plan for these tensors (CPU tensors too)
    print(plan.describe())            # its launch and reasons; gemvlab.explain(A, B) prints the same
    launch = make_launch(make_plan(...), lda, b_2d, A.device)   # a plan of your own (bench/tune_dispatch.py)
"""

from ..gpu.device import Device
from . import tuning
from .kernels import KERNELS, ROW_TILES, ROWS_PER_WARP, SPLIT_K
from .launch import explain, launcher, make_launch, plan_for, run
from .plan import Plan, make_plan, tile_fits, tile_floats, tile_loads
from .rule import choose

__all__ = [
           "KERNELS",
           "ROWS_PER_WARP",
           "ROW_TILES",
           "SPLIT_K",
           "Device",
           "Plan",
           "choose",
           "explain",
           "launcher",
           "make_launch",
           "make_plan",
           "plan_for",
           "run",
           "tile_fits",
           "tile_floats",
           "tile_loads",
           "tuning",
]
