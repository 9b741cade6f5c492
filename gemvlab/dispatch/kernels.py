"""The dispatcher's three kernels, the numbers they share with Python, and the variants compiled.

The .cu files read the shared numbers as macros that gemvlab passes to nvcc (-D flags from
``DEFINES``): they are defined here once. Each .cu lists its instantiations (the cases of its
launcher's switch); ``COMPILED`` lists the same variants on this side, exactly those the rule can
choose, and a test checks the three agree (the .cu, this list, and what choose() returns over a
grid of shapes). The tuning script (bench/tune_dispatch.py) builds its own candidates.
"""

from __future__ import annotations

from pathlib import Path

from ..native.kernel import VARIANT_BITS, Kernel, encode

HERE = Path(__file__).parent

#: row_tiles: floats of shared memory in one static tile (16 KiB); a tile's rows must fit in it.
TILE_FLOATS = 4096
#: row_tiles: rows of at most this many floats (B's copy in shared memory holds this many).
TILE_MAX_K = 64
#: rows_per_warp: float4 loads of A each lane writes per trip.
ROWS_LOADS = 4
#: split_k's reduce: threads per block (one warp per row, 8 rows per block).
REDUCE_BLOCK = 256

DEFINES = (("GEMV_VARIANT_BITS", VARIANT_BITS), ("GEMV_TILE_FLOATS", TILE_FLOATS), ("GEMV_TILE_MAX_K", TILE_MAX_K),
           ("GEMV_ROWS_LOADS", ROWS_LOADS), ("GEMV_REDUCE_BLOCK", REDUCE_BLOCK))

#: (LOADS, B_VEC, ROWS): one row, 2 loads, B as float4s or scalars; 2 rows aligned like B sharing
#: its float4s; 4 rows not aligned like B, B shifted into place by shuffles.
SPLIT_K_COMPILED = ((2, 0, 1), (2, 1, 1), (1, 1, 2), (1, 0, 4))
#: (G, B_VEC): 4 to 32 lanes per row.
ROWS_PER_WARP_COMPILED = tuple((g, b) for g in (4, 8, 16, 32) for b in (0, 1))
#: (G, R, U): 4 rows per thread at 4 to 8 loads; one lane per row at 4 to 12; two lanes per row at 7 and 8.
ROW_TILES_COMPILED = (tuple((1, 4, u) for u in range(4, 9)) + tuple((1, 1, u) for u in range(4, 13))
                      + ((2, 1, 7), (2, 1, 8)))


def _kernel(name, template, compiled, **kw) -> Kernel:
    return Kernel(name=name, source_path=HERE / f"{name}.cu", launcher=f"launch_{name}", symbol=f"gemv_{name}",
                  signature="plan", template=template, variants=tuple(encode(*t) for t in compiled),
                  defines=DEFINES, **kw)


SPLIT_K = _kernel("split_k", ("LOADS", "B_VEC", "ROWS"), SPLIT_K_COMPILED, bool_args=("B_VEC",),
                  loads_from=("LOADS", "ROWS"))
ROWS_PER_WARP = _kernel("rows_per_warp", ("G", "B_VEC"), ROWS_PER_WARP_COMPILED, bool_args=("B_VEC",),
                        fixed_loads=ROWS_LOADS)
ROW_TILES = _kernel("row_tiles", ("G", "R", "U"), ROW_TILES_COMPILED, loads_from=("U",))
KERNELS = {k.name: k for k in (SPLIT_K, ROWS_PER_WARP, ROW_TILES)}
