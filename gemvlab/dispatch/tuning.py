"""The dispatcher's tuned numbers, each with what it decides. The measurements behind each are
tables in docs/design/dispatch.md, under the constant's name; bench/tune_dispatch.py re-times
candidate plans around them on a GPU.
"""

from .kernels import ROWS_LOADS

#: Rows of at most this many floats go to rows_per_warp (or row tiles); longer rows to split_k.
SHORT_ROW_K = 2048

# ---- rows_per_warp: G lanes per row -------------------------------------------------------------
#: Threads per block: small blocks free their slot sooner when rows end at different times.
ROWS_BLOCK = 64
#: Floats one lane covers in one trip of its loads.
FLOATS_PER_TRIP = 4 * ROWS_LOADS
#: With more data than one trip of the resident threads: at least this many lanes per row, so a
#: group's load instruction covers 128 contiguous bytes of its row ...
LINE_LANES = 8
#: ... and about this many floats per lane (G the power of two nearest K / FLOATS_PER_LANE) ...
FLOATS_PER_LANE = 32
#: ... except rows under FEW_FLOAT4S_K floats (fewer than 3 float4s per lane at LINE_LANES), which
#: take MIN_LANES lanes; little data takes at least MIN_LANES too.
FEW_FLOAT4S_K = 96
MIN_LANES = 4

# ---- row_tiles --------------------------------------------------------------------------------
#: Row tiles take rows whose gap (row stride minus K, floats loaded and not used) is at most this
#: fraction of K.
TILE_MAX_GAP = 1 / 8
#: The tile plans, tried in order, the first that fits and loads in one trip of at most
#: TILE_MAX_LOADS per thread: (rows per tile, threads, lanes per row G, rows per group of lanes R).
TILE_ROWS = ((512, 128, 1, 4), (256, 256, 1, 1), (128, 128, 1, 1), (64, 64, 1, 1), (64, 128, 2, 1))
#: float4 loads per thread per trip into the static tile; a tile that needs more is loaded in one
#: trip of as many (at most TILE_MAX_LOADS) into shared memory sized to it.
TILE_LOADS = 4
TILE_MAX_LOADS = 12

# ---- split_k --------------------------------------------------------------------------------------
#: Threads per block, and float4 loads of A in flight per thread per row.
SPLIT_BLOCK = 256
LOADS = 2
#: Rows that alone keep at least this fraction of each SM's warp slots busy can go unsplit ...
BUSY_WARPS = 0.5
#: ... if their blocks run in one wave, or in waves whose last is at least this full, and every
#: row starts at the same offset from B ...
FULL_LAST_WAVE = 0.75
#: ... else they are split into enough stretches for at least this many waves ...
BUSY_SPLIT_WAVES = 8
#: ... unless they already make this many waves of blocks: then one block per row regardless.
SPLIT_BELOW_WAVES = 8 / 3
#: Fewer rows: K is split into stretches for about this many waves of blocks ...
TARGET_WAVES = 4
#: ... or this many where the rows, one per block, start at different offsets from B (odd K).
UNEVEN_WAVES = 12
#: A stretch is at least this many floats, much more work than a block's start and reduction ...
MIN_CHUNK = 8192
#: ... except where A fits in one trip of every resident thread (SPLIT_BLOCK x LOADS float4s
#: each): then stretches of this many floats, one trip per thread.
ONE_TRIP = SPLIT_BLOCK * LOADS * 4
#: Blocks sharing a stretch of B should find it in the L2: a stretch is at most this part of it.
B_SHARE_OF_L2 = 0.25
#: Where the rule splits fewer than this many rows and B is over B_SHARE_OF_L2 of the L2, several
#: rows share each block and each load of B: SHARE_B_ROWS rows with SHARE_B_LOADS loads each where
#: they are aligned like B, else SHARE_B_ROWS_SHUFFLED with SHARE_B_LOADS_SHUFFLED, B shifted
#: into place by warp shuffles.
SHARE_B_BELOW_M = 128
SHARE_B_ROWS = 2
SHARE_B_LOADS = 1
SHARE_B_ROWS_SHUFFLED = 4
SHARE_B_LOADS_SHUFFLED = 1
