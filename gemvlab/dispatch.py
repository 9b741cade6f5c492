"""``gemvlab.gemv(A, B)`` without a stage: the kernel and launch chosen for the shape at hand.

The stages teach one design each, and each design is fast only for some shapes (notebook 04's
sweep): one block per row leaves SMs idle when rows are few and wastes most of each block
when rows are short, and the float4 stages refuse rows that do not start 16-byte aligned. The
dispatcher picks, by a rule over (M, K, alignment, the GPU's SM count, its L2 size and the
kernels' occupancy), one of three kernels that take any row, aligned or not:

* ``split_k`` (cuda/split_k.cu): a block per stretch of a row (or of several rows, which then
  share B's loads); K is split into ``splits`` stretches when there are too few rows to fill the
  GPU, or when one block per row would end in a part-full last wave (FULL_LAST_WAVE), and a second
  kernel adds each row's partial sums in a fixed order (deterministic, no float atomics). With
  one stretch it is one block per row, stage 4's design.
* ``rows_per_warp`` (cuda/rows_per_warp.cu): G lanes per row, several rows per warp, for rows
  too short to keep a block busy.
* ``row_tiles`` (cuda/row_tiles.cu): for rows of at most 64 floats, a block loads its rows as one
  flat stretch into shared memory, then sums each row there.

The rule is :func:`choose`, a pure function of numbers, unit tested on the CPU branch by branch;
``gemvlab.explain(A, B)`` prints its choice and reasons for a given A and B. ``gemv`` caches the
plan per (shape, strides, alignment, device), so a repeated call checks its inputs with a
dictionary lookup and launches at once: the Python side costs a few microseconds, not the
~100 us of the stage path (which checks everything and rebuilds nothing, but does it each time).
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass, field

import torch

from . import checks, occupancy
from .kernels import (ROW_TILES, ROWS_PER_WARP, SPLIT_K, build_stage, row_tiles_variant, split_k_variant,
                      stage_occupancy)

# The rule's constants, from the H200 exploration in tools/explore/h200-dispatch-round1.txt
# (every candidate plan timed round-robin beside torch.matmul and the read ceiling, 16 shapes).
#: Rows of at most this many floats go to rows_per_warp (G lanes per row); longer rows to split_k.
#: At K = 3000 and 4096 one block per row was 0.3% and 7% faster than the best rows_per_warp.
SHORT_ROW_K = 2048
#: rows_per_warp: threads per block, and the float4 loads of A per lane per trip (fixed in
#: rows_per_warp.cu). 128 threads were 0.7 to 2.4% faster than 256 at five of the six large
#: short-row shapes of tools/explore/round4/round4.txt, and tied at the sixth. 64 threads took 0.8
#: to 2.7% less time than 128 at all 9 K from 65 to 1,537 whose rows start at different offsets
#: from a 16-byte boundary (K % 4 != 0; quartiles apart; 5 of the 9 at 1.0% or less, near the 0.8%
#: by which ratios move between two timings of one record; 123,457 x 777: 0.929 of the read ceiling
#: against 0.914), and tied with it (quartiles overlapping) at all 13 aligned shapes, 1,000 x 500 to
#: 262,144 x 1,024 (within 0.3% save 1024 x 1024, a 6-us call, 2.1% more), with the same warps per SM
#: at both sizes
#: (tools/explore/round36/round36.txt). Our reading, not measured: such rows differ in their
#: scalar heads and tails, so a block's warps end at different times, and a block's slot is freed
#: only when its last warp ends; 2 warps per block wait on fewer than 4.
ROWS_BLOCK = 64
ROWS_LOADS = 4
#: rows_per_warp's G, lanes per row, in two regimes (tools/explore/round5 and round6, *.txt):
#: * little data (A fits in one trip of every resident thread, ROWS_LOADS float4s each): the call
#:   is a few round trips to memory, so few trips per lane: G so that a lane has at most
#:   FLOATS_PER_TRIP floats (one trip), as far as G <= 32 allows (two trips at K = 1024). At
#:   1024 x 1024, G = 32 took 5.70 us against 6.53 for 16; at 1000 x 500, 5.22 against 5.66.
#: * more: at least LINE_LANES lanes, so that a group's load instruction covers 128 contiguous
#:   bytes of its row (G x 16 bytes, a whole line where the row's body starts on one), and about
#:   FLOATS_PER_LANE floats per lane. At K = 96 and 100, G = 8 took 2.3% and 6.3% less time than
#:   4; at K = 257 and 513, G = 8 and 16 took 3.4% and 5.1% less than twice as many lanes. Rows
#:   under FEW_FLOAT4S_K floats (under 3 float4s per lane at G = 8) take MIN_LANES: at K = 64 and
#:   80, 4 lanes took 11% and 3% less time than 8, at K = 96 2% more (tools/explore/round8); at
#:   K = 33, 42% less than 8 and 3% more than 2 (round 5).
FLOATS_PER_TRIP = 4 * ROWS_LOADS
LINE_LANES = 8
FLOATS_PER_LANE = 32
MIN_LANES = 4
FEW_FLOAT4S_K = 96
#: row_tiles (cuda/row_tiles.cu) for rows of at most TILE_MAX_K floats, where there is more than
#: one trip of data and the rows are nearly contiguous (at most 1/8 of the bytes read between
#: rows unused): as many rows per block as fit in the tile, of TILE_ROWS (below). In
#: tools/explore/round10/round10.txt, with the rule of that time, it took, against
#: rows_per_warp with 4 lanes at millions of rows, 113 against 342 us at K = 8, 99 against 208 at
#: K = 16, 114 against 229 at 17, 131 against 149 at 32, 110 against 133 at 33, 199 against 239
#: at 50, 188 against 211 at 63 and 190 against 194 at 64. At K = 32, 128 rows with 2 lanes each
#: (256 threads) were 1.2% faster than 1 lane (128): taken the simpler way. Just over one trip of
#: data it tied: 11.8 against 11.9 us at 100,000 x 50 (round 8's version of the kernel took 11.0).
#: Rows over 64 floats do not fit its copy of B, and at K = 80 to 128 rows_per_warp was faster
#: (round 9).
TILE_MAX_K = 64
#: The first entry that fits and loads its tile in one trip of at most TILE_MAX_LOADS per thread:
#: * 512 rows for 128 threads, 1 lane and 4 rows per thread (rows of at most 8 floats; K loads per
#:   thread, at least 4). cuda/row_tiles.cu says why several rows per thread: at 10,000,000 x 8, 2
#:   rows per thread at 256 threads took 17.5% less time than 1 (tools/explore/round24). 4 rows at
#:   128 threads took 3.7 to 23.0% less time than that at K = 1 to 6 and 8 and 0.8% at 7, about
#:   the 0.79 to 0.85% drift between two timings of a record: not counted as a gain (tools/explore/round38/round38.txt; 10,000,000 x 8: 0.944 of the
#:   read ceiling against 0.909);
#: * 256 rows for 256 threads, then 128 for 128, one lane per row (K <= 16, K <= 32);
#: * 64 rows for 64 threads, one lane per row, ceil(K / 4) loads each (K = 33 to 48): against 64
#:   rows for 128 threads with two lanes per row, 2.2 to 5.4% less time at the 8 shapes from K = 33
#:   to 47 (0.946 to 0.959 of the read ceiling against 0.901 to 0.928) and a tie at 48 (0.4%,
#:   quartiles overlapping; round38; round37 has 64 and 128 threads tied at K = 33 to 40);
#: * 64 rows for 128 threads, two lanes per row (K = 49 to 64, where one lane would take 13 to 16
#:   loads: not tried).
TILE_ROWS = ((512, 128, 1, 4), (256, 256, 1, 1), (128, 128, 1, 1), (64, 64, 1, 1), (64, 128, 2, 1))
# (rows per tile, threads, lanes per row G, rows per group of G lanes)
#: row_tiles' float4 loads per thread per trip: 4, or as many as make the tile one trip (at most
#: 12: 64 rows of 48 floats for 64 threads; 79 registers there). Where the tile is more than 4 per
#: thread, one trip, with the tile in shared memory sized to its rows, took 2.3 to 11.6% less time
#: than two trips of 4 in the static 4,096-float tile at every K from 17 to 64, with the tile rows
#: of that time (tools/explore/round34/round34.txt; cuda/row_tiles.cu says why). At K = 1 to 4 and
#: 9 to 16 the tile is one trip of 4 already, and at K = 9 to 16 the sized tile with the same loads
#: tied or lost (up to 2.1% more time at K = 9): those keep the static tile.
TILE_LOADS = 4
TILE_MAX_LOADS = 12
#: split_k: threads per block, and float4 loads of A in flight per thread (2: 32 registers, 8
#: blocks per SM; 4 loads need 44 registers, 5 blocks, and were slower at every shape tried).
SPLIT_BLOCK = 256
LOADS = 2
#: split_k: where the rows alone keep at least this fraction of each SM's warp slots busy
#: (Little's law: 319 ns x 4.6 TB/s = 1.5 MB in flight, 11 KB per SM, and half the slots with two
#: 512-byte loads per warp hold 32 KB), one block per row can be enough; M = 700 rows (5.3 blocks
#: per SM) ran 3.5% faster unsplit than in the best split.
BUSY_WARPS = 0.5
#: ... but only where the blocks run as one wave (every row's block resident at once), or as
#: several whose last is at least FULL_LAST_WAVE full, and only for rows that start at the same
#: offset from B. Otherwise the rows are split (BUSY_SPLIT_WAVES, below). In
#: tools/explore/round23/round23.txt (gemvlab's split_k, rows aligned like B, one run), unsplit,
#: 1,100 rows of 240,000 floats (1.04 waves) ran at 0.830 of the read ceiling and 1,200 x 200,000
#: (1.14 waves) at 0.872, both slower than torch.matmul; split in 4 (as the rule now splits both),
#: at 0.966 and 0.935 (0.954 in 2).
#: With the last wave fuller, unsplit held: 2,048 x 131,072 (1.94 waves) 0.980 against 0.975
#: split in 2; 3,000 x 80,000 (2.84) 0.971 against 0.961 to 0.977. Between runs the unsplit time
#: of a part-full last wave moved: 1,500 x 160,000 (1.42 waves) took 244.0 us unsplit against
#: 219.1 split in 3 in round 23, but 221.1 against 229.1 in round 24 (round24/round24.txt); the
#: split times moved less. Rows at other offsets from B (odd K, round 24, the same kernels): split
#: for about 4 waves (this rule's first version) took 5.3% less time at 1,024 x 262,147 (0.97 waves unsplit), 27% less at
#: 1,200 x 200,003 and 3.4% less at 2,200 x 100,001, and tied at 600 x 400,003 and 2,048 x 131,075
#: (0.9% less and 0.1% more, within the quartiles). Why odd K loses inside one wave is not separated; a candidate is that blocks
#: whose rows start at different offsets from B take different times, so one wave ends unevenly
#: (round 22, with B read another way, found the same at 800 and 1,000 rows).
FULL_LAST_WAVE = 0.75
#: Where those rows are split, into enough stretches for at least this many waves: then the last
#: wave is at most an eighth of the blocks. In tools/explore/round25/round25.txt (gemvlab's
#: split_k, 1,100 to 2,700 rows, 1.04 to 2.56 waves unsplit, aligned and odd K), every split into 8
#: waves or more ran at 0.931 to 0.976 of the read ceiling; splitting for about 4 waves, as this
#: rule did first, left 1,700 x 140,000 in 2 stretches at 0.923 (3.22 waves, the last 22% full;
#: 0.960 unsplit) and odd K under the bar: 0.895 at 1,100 x 240,001 (4 stretches; 8 gave 0.947),
#: 0.886 at 1,700 x 140,001 (2; 8 gave 0.940) and 0.885 at 2,200 x 100,001 (2; 4 gave 0.942).
BUSY_SPLIT_WAVES = 8
#: From this many waves of rows on, one block per row whatever the offsets and the last wave:
#: 3,000 x 80,000 (2.84 waves) ran at 0.971 unsplit against 0.961 to 0.977 split (round 23), and
#: at odd K 3,000 x 80,001 at 0.943 (round 24, not split there).
SPLIT_BELOW_WAVES = 8 / 3
#: K is split into stretches for about this many waves of blocks (4 waves beat 1 at M = 16, 50,
#: 64 and 128, by 2 to 11%; at M = 1 they were 2% slower than 1).
TARGET_WAVES = 4
#: ... and for about this many where the rows start at different offsets from B (odd K). In
#: tools/explore/round27/round27.txt (gemvlab's split_k, one run, 2 to 16 waves), at 8 such shapes
#: of 32 to 500 rows, 12 waves or more (or as many as MIN_CHUNK allows) ran faster than 4 at every
#: one: 500 x 1,000,001 at 0.954 of the read ceiling against 0.916 (torch.matmul 0.937), 200 x
#: 2,000,001 0.942 against 0.899, 128 x 2,097,153 0.924 against 0.900, 100 x 1,000,001 0.918
#: against 0.894, 64 x 1,000,003 0.897 against 0.885. Aligned rows are left at TARGET_WAVES: there
#: 500 x 1,000,000 gained too (0.982 against 0.943) but 64 x 1,000,000 lost (0.909 at 7.4 waves, as
#: many as MIN_CHUNK allows, against 0.915),
#: and the sweep's shapes were not timed at more waves; nor were blocks of several rows (split_k's
#: ROWS), which keep TARGET_WAVES.
UNEVEN_WAVES = 12
#: A stretch is at least this many floats, so that a block's work is much more than its start
#: and its reduction.
MIN_CHUNK = 8192
#: ... except where A fits in one trip of every resident thread (SPLIT_BLOCK threads x LOADS
#: float4s): the call is then a few round trips to memory, and stretches of ONE_TRIP floats (one
#: trip per thread) do better, where the rule splits at all (tools/explore/round4/round4.txt:
#: M = 1, K = 65,536 took 7.55 us in 32 stretches of 2,048 floats against 8.83 in 8 of 8,192; at
#: M = 16 8.77 against 9.41).
ONE_TRIP = SPLIT_BLOCK * LOADS * 4
#: split_k with several rows: a stretch of B should take at most this fraction of the L2, so
#: that the rows sharing it find it there (blocks of one stretch run together).
B_SHARE_OF_L2 = 0.25
#: split_k: where the rule splits fewer than SHARE_B_BELOW_M rows and B is more than
#: B_SHARE_OF_L2 of the L2, several rows share each block, so that B is loaded once per trip for
#: all of them. The counters (round10/counters.txt, round15/counters.txt) show why B's size, not
#: the DRAM, is what matters: at 3 x 50,000,000 every layout read A and B once from DRAM (800 to
#: 816 MB), but one row per block read 1140 to 1188 MB from the L2 into the SMs (every row's
#: block reads B again), two rows 971 to 977 MB, four rows 819.
#: Rows aligned like B: SHARE_B_ROWS rows, SHARE_B_LOADS loads per row per trip. In
#: tools/explore/round8 it took 3.3, 5.6, 3.8 and 1.9% less time than one row per block at 2 x
#: 40,000,000, 8 x 30,000,000, 16 x 2^24 and 50 x 5,000,000 (B 160, 120, 64 and 20 MB; round 7:
#: 1.9, 3.2, 1.0 and 1.3%), and in round 10 3.1% less at 3 x 50,000,000 (B 200 MB); with B
#: smaller it lost or tied: 1.5% more at 128 x 2^21 (8 MB; round 7: 2.0%), 2.3% more at 64 x
#: 1,000,000 (4 MB, round 10), 1.2% less at 300 x 3,000,000 (12 MB; round 7: 0.3%).
#: Rows at other offsets than B's (odd K, views): SHARE_B_ROWS_SHUFFLED rows, B realigned by warp
#: shuffles (any_alignment.cuh, dot_rows_shuffled). In tools/explore/round15 it took 5.2, 3.2,
#: 3.3 and 2.2% less time than one row per block at 3 x 50,000,001, 40 x 6,000,001, 16 x
#: 16,777,217 and 12 x 10,000,001, 5.4 and 5.3% less at 8 x 30,000,000 and 3 x 50,000,000 starting
#: 2 and 1 floats into their storage, and tied at 5 x 20,000,003 (0.1% more); outside the rule's
#: range it lost 7.0% at 64 x 1,000,003 (B 4 MB). Two rows per block gained less: with 1 load per
#: row at all 7 shapes, with 2 loads at 4 of them (at the other 3, 0.4 to 0.8 points more).
SHARE_B_BELOW_M = 128
SHARE_B_ROWS = 2
SHARE_B_LOADS = 1
SHARE_B_ROWS_SHUFFLED = 4
SHARE_B_LOADS_SHUFFLED = 1
#: row_tiles: floats of shared memory per tile (TILE_FLOATS in cuda/row_tiles.cu).
TILE_FLOATS = 4096

class LaunchArgs(ctypes.Structure):
    """cuda/launch_args.cuh's struct: a plan's fixed numbers, built once per plan and passed by
    address, so that a call converts six pointers, not twelve arguments (ctypes converts every
    argument on every call)."""

    _fields_ = [("lda", ctypes.c_longlong), ("M", ctypes.c_longlong), ("K", ctypes.c_longlong),
                ("chunk", ctypes.c_longlong), ("splits", ctypes.c_int), ("block", ctypes.c_int),
                ("variant", ctypes.c_int), ("grid", ctypes.c_int)]


#: launch_*(A, B, C, partials, const LaunchArgs*, stream)
_ARGTYPES = [ctypes.c_void_p] * 6


@dataclass(frozen=True)
class Device:
    """What the rule needs to know of a GPU."""

    name: str
    sms: int
    l2_bytes: int
    limits: occupancy.SMLimits

    @classmethod
    def of(cls, index: int | None = None) -> "Device":
        p = torch.cuda.get_device_properties(index if index is not None else torch.cuda.current_device())
        return cls(p.name, p.multi_processor_count, p.L2_cache_size, occupancy.limits_of_device(index))

    @classmethod
    def recorded(cls, doc: dict | None = None) -> "Device":
        from . import results

        m = (doc or results.load())["machine"]
        return cls(m["gpu"], m["sm_count"], m["l2_bytes"], occupancy.SMLimits.from_dict(m["sm_limits"]))


@dataclass(frozen=True)
class Plan:
    """One launch (or two, for split_k with several stretches) and why it was chosen."""

    M: int
    K: int
    kernel: str  # "split_k", "rows_per_warp", "row_tiles", "none" (M = 0) or "zeros" (K = 0)
    variant: int = 0  # the kernel's template arguments (see kernels.SPLIT_K, ROWS_PER_WARP, ROW_TILES)
    block: int = 0
    grid: int = 0
    splits: int = 1
    chunk: int = 0  # floats per stretch (split_k)
    lanes_per_row: int = 0  # rows_per_warp's and row_tiles' G
    rows_per_block: int = 1  # split_k: rows sharing each stretch of B in one block
    rows_per_group: int = 1  # row_tiles: rows each group of G lanes sums
    loads: int = 0  # float4 loads of A in flight per thread
    b_vec: bool = False  # B read as float4s (aligned where A's rows are)
    waves: int = 0
    last_wave_fill: float = 0.0
    reasons: tuple = field(default=(), compare=False)

    @property
    def name(self) -> str:
        if self.kernel == "split_k":
            return f"split_k<{self.loads}, {str(self.b_vec).lower()}, {self.rows_per_block}>" + (
                f" x {self.splits} stretches" if self.splits > 1 else "")
        if self.kernel == "rows_per_warp":
            return f"rows_per_warp<{self.lanes_per_row}, {str(self.b_vec).lower()}>"
        if self.kernel == "row_tiles":
            return f"row_tiles<{self.lanes_per_row}, {self.rows_per_group}, {self.loads}>"
        return self.kernel

    @property
    def launch(self) -> str:
        if self.kernel == "split_k":
            text = f"{self.grid} blocks of {self.block} threads"
            groups = -(-self.M // self.rows_per_block)
            rows = f"{groups} group{'s' if groups > 1 else ''} of {self.rows_per_block} rows" if (
                self.rows_per_block > 1) else f"{self.M} rows"
            if self.splits > 1:
                text += (f" ({rows} x {self.splits} stretches of {self.chunk:,} floats), then "
                         f"{-(-self.M * 32 // 256)} block{'s' if self.M > 8 else ''} of 256 adding each row's "
                         f"{self.splits} partial sums")
            return text
        if self.kernel == "rows_per_warp":
            return (f"{self.grid} blocks of {self.block} threads, {self.lanes_per_row} lanes per row "
                    f"({self.block // self.lanes_per_row} rows per block)")
        if self.kernel == "row_tiles":
            G, R = self.lanes_per_row, self.rows_per_group
            return (f"{self.grid} blocks of {self.block} threads, each loading {self.block // G * R} rows as one "
                    f"stretch ({self.loads} float4 loads per thread per trip"
                    + (", the tile sized to its rows" if self.loads > 4 else "")
                    + f"), then {G} lane{'s' if G > 1 else ''} per row"
                    + (f", each {'group of lanes' if G > 1 else 'thread'} summing {R} rows" if R > 1 else ""))
        return "no launch"

    def describe(self) -> str:
        lines = [f"M = {self.M:,}, K = {self.K:,}: {self.name}", f"  launch: {self.launch}"]
        if self.waves:
            lines.append(f"  waves: {self.waves}, the last {self.last_wave_fill:.0%} full")
        lines += [f"  - {r}" for r in self.reasons]
        return "\n".join(lines)


def _next_pow2(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


def choose_splits(M: int, K: int, slots: int, warps_per_sm: float, max_warps: int, l2_bytes: int,
                  rows_per_block: int = 1, rows_alike: bool = True) -> tuple[int, list[str]]:
    """How many stretches to cut each row into: none when the rows alone keep enough warps busy
    (`warps_per_sm` from one block per row, against the SM's `max_warps`) and their blocks fill
    their waves (see FULL_LAST_WAVE), else, for such busy rows, enough for BUSY_SPLIT_WAVES waves
    of `slots` blocks (SMs x blocks per SM), and for fewer rows about TARGET_WAVES waves (UNEVEN_WAVES
    for one row per block where the rows are not alike); always
    stretches of at least MIN_CHUNK floats, and a stretch of B small enough for the L2 when
    several blocks share it. With `rows_per_block` rows in a block, a stretch
    takes ceil(M / rows_per_block) blocks. `rows_alike`: every row starts at the same offset from
    a 16-byte boundary (K % 4 == 0 and no odd row stride)."""
    rows, M = M, -(-M // rows_per_block)  # from here on, M counts the blocks of one stretch
    why = []
    most = max(1, K // MIN_CHUNK)
    least = 1
    if M > 1 and 4 * K > B_SHARE_OF_L2 * l2_bytes:
        least = min(most, -(-4 * K // int(B_SHARE_OF_L2 * l2_bytes)))
        why.append(f"B ({4 * K / 2**20:.0f} MiB) is more than {B_SHARE_OF_L2:.0%} of the L2 "
                   f"({l2_bytes / 2**20:.0f} MiB): at least {least} stretches, so the rows sharing a "
                   f"stretch of B can find it in the L2")
    if warps_per_sm >= BUSY_WARPS * max_warps and least == 1:
        busy = (f"{rows:,} rows give each SM {warps_per_sm:.0f} resident warps (of {max_warps}), at least "
                f"{BUSY_WARPS:.0%} of the slots (the threshold the exploration chose)")
        waves = M / slots
        last = waves - math.ceil(waves) + 1  # how full the last wave is
        fills = rows_alike and (waves <= 1 or last >= FULL_LAST_WAVE)  # one block per row fills its waves
        if most == 1 or waves >= SPLIT_BELOW_WAVES or fills:
            too_short = not fills and waves < SPLIT_BELOW_WAVES  # so most == 1
            why.append(busy + ", " + (
                "in one wave" if waves <= 1 else f"in {waves:.2f} waves of {slots}, the last {last:.0%} full")
                + ": one block per row" + (f" (rows under {2 * MIN_CHUNK:,} floats are not split)" if too_short else ""))
            return 1, why
        s = min(most, -(-BUSY_SPLIT_WAVES * slots // M))
        why.append(busy + ", but " + (
            f"rows at different offsets from B, whose blocks may end unevenly in {waves:.2f} waves" if not rows_alike
            else f"the last of their {waves:.2f} waves of {slots} only {last:.0%} full (under "
                 f"{FULL_LAST_WAVE:.0%})")
            + f": {s} stretches per row make {M * s:,} blocks, {M * s / slots:.1f} waves (at least "
              f"{BUSY_SPLIT_WAVES}, so the last is a small part)")
        return s, why
    uneven = not rows_alike and rows_per_block == 1  # blocks of several rows were not timed at more waves
    target = UNEVEN_WAVES if uneven else TARGET_WAVES
    s = min(most, max(least, (target * slots) // M, 1))
    why.append(f"{rows:,} rows alone give each SM {warps_per_sm:.1f} resident warps (of {max_warps}), fewer than "
               f"{BUSY_WARPS:.0%} of the slots: {s} stretches per row make {M * s:,} blocks"
               + (f" of {rows_per_block} rows" if rows_per_block > 1 else "") + ", about "
               f"{M * s / slots:.1f} waves of {slots}"
               + ("" if not uneven else f" (aimed at {UNEVEN_WAVES}, not {TARGET_WAVES}: rows at different "
                                        "offsets from B, whose blocks may end unevenly)")
               + (f" (stretches of at least {MIN_CHUNK:,} floats allow at most {most})" if s == most else ""))
    if s > 1 and rows * K <= slots * ONE_TRIP:
        s = min(max(1, K // ONE_TRIP), max(s, (target * slots) // M))
        why.append(f"A ({rows * K:,} floats) fits in one trip of the {slots * SPLIT_BLOCK:,} resident threads: "
                   f"{s} stretches instead, of about {-(-K // s):,} floats (one trip per thread)")
    return s, why


def make_plan(M: int, K: int, kernel: str, device: Device, b_vec: bool, block: int, loads: int | None = None,
              splits: int = 1, lanes_per_row: int = 32, reasons: tuple = (), rows_per_block: int = 1,
              rows_per_group: int = 1) -> Plan:
    """A consistent Plan for the given choices (grid, stretch length, waves): what choose()
    returns, and what the explorations in tools/explore/ build to time other choices. loads: float4
    loads of A per thread per trip (split_k: 2 unless given; row_tiles: 4 unless given, more makes
    the tile one trip in shared memory sized to it)."""
    if kernel != "row_tiles":
        rows_per_group = 1
    dynamic = 0  # shared memory set at launch
    if kernel == "rows_per_warp":
        variant = 2 * lanes_per_row + b_vec
        grid = -(-M // (block // lanes_per_row))
        occ_kernel, chunk, splits, loads, rows_per_block = ROWS_PER_WARP, 0, 1, 4, 1
    elif kernel == "row_tiles":
        rows = block // lanes_per_row * rows_per_group
        loads = TILE_LOADS if loads is None else loads
        variant, b_vec = row_tiles_variant(lanes_per_row, rows_per_group, loads), False
        grid = -(-M // rows)
        occ_kernel, chunk, splits, rows_per_block = ROW_TILES, 0, 1, 1
        if loads > TILE_LOADS:  # the tile in shared memory sized to its rows (row stride taken as K here)
            dynamic = 16 * -(-(tile_floats(rows, K, K) + 4) // 4)
    else:
        loads = 2 if loads is None else loads
        variant = split_k_variant(rows_per_block, loads, b_vec)
        chunk = -(-(-(-K // splits)) // 4) * 4  # a whole number of float4s per stretch
        splits = -(-K // chunk)
        grid = -(-M // rows_per_block) * splits
        occ_kernel, lanes_per_row = SPLIT_K, 0
    checks.check_grid(grid, kernel)
    r = occupancy.residency(stage_occupancy(occ_kernel, block, variant, device.limits, dynamic), grid, device.sms)
    return Plan(M, K, kernel, variant, block, grid, splits, chunk, lanes_per_row, rows_per_block, rows_per_group,
                loads, b_vec, r.waves, r.last_wave_fill, tuple(reasons))


def tile_floats(rows: int, K: int, lda: int) -> int:
    """The floats of the one stretch row_tiles loads for `rows` consecutive rows of K floats,
    `lda` apart: from the first row's first float to the last row's last."""
    return (rows - 1) * lda + K


def tile_loads(rows: int, K: int, block: int, lda: int | None = None) -> int:
    """row_tiles' float4 loads per thread per trip: 4 (the static tile), or as many as load a tile
    of `rows` rows (K floats each, `lda` apart) in one trip of `block` threads."""
    return max(TILE_LOADS, -(-tile_floats(rows, K, K if lda is None else lda) // (4 * block)))


def tile_fits(rows: int, K: int, lda: int) -> bool:
    """Whether `rows` consecutive rows, as the one stretch row_tiles loads (tile_floats), fit its
    tile (which has 4 floats more, for alignment)."""
    return tile_floats(rows, K, lda) <= TILE_FLOATS


def _nearest_pow2(x: float) -> int:
    return 1 << max(0, round(math.log2(x))) if x > 1 else 1


def resident_rows_threads(b_vec: bool, device: Device) -> int:
    """The GPU's resident rows_per_warp threads (at G = 32: every G's kernel has about the same
    registers): how many lanes one trip of loads can keep busy."""
    occ = stage_occupancy(ROWS_PER_WARP, ROWS_BLOCK, 2 * 32 + b_vec, device.limits)
    return device.sms * occ.blocks_per_sm * ROWS_BLOCK


def rows_lanes(M: int, K: int, b_vec: bool, device: Device) -> tuple[int, str]:
    """rows_per_warp's lanes per row G (4 to 32) for M rows of K floats, and why."""
    resident = resident_rows_threads(b_vec, device)
    if M * K <= resident * FLOATS_PER_TRIP:
        G = min(32, max(MIN_LANES, _next_pow2(-(-K // FLOATS_PER_TRIP))))
        how = (f"A ({M * K:,} floats) fits in one trip of the {resident:,} resident threads "
               f"({FLOATS_PER_TRIP} floats each): {G} lanes per row, at most {-(-K // G)} floats per lane")
    elif K < FEW_FLOAT4S_K:
        G = MIN_LANES
        how = f"rows under {FEW_FLOAT4S_K} floats (3 float4s per lane at {LINE_LANES} lanes): {G} lanes per row"
    else:
        G = min(32, max(LINE_LANES, _nearest_pow2(K / FLOATS_PER_LANE)))
        how = (f"{G} lanes per row, {-(-K // G)} floats per lane at most: the power of two nearest "
               f"K / {FLOATS_PER_LANE}, at least {LINE_LANES} (a group's load instruction then covers "
               f"128 contiguous bytes of its row)")
    return G, how + f", {ROWS_BLOCK // G} rows per block of {ROWS_BLOCK}"


def variants_in_use() -> dict:
    """kernel name -> the template variants choose() can launch (the .cu files compile more, for
    the explorations in tools/explore/)."""
    return {"split_k": tuple(split_k_variant(r, n, b) for r, n, bs in (
                (1, LOADS, (0, 1)), (SHARE_B_ROWS, SHARE_B_LOADS, (1,)),
                (SHARE_B_ROWS_SHUFFLED, SHARE_B_LOADS_SHUFFLED, (0,))) for b in bs),
            "rows_per_warp": tuple(2 * g + b for g in (4, 8, 16, 32) for b in (0, 1)),
            # each tile entry at 4 loads up to what a full 4,096-float tile takes at its block size
            "row_tiles": tuple(sorted({row_tiles_variant(g, r, u) for _, block, g, r in TILE_ROWS
                                       for u in range(TILE_LOADS, min(TILE_MAX_LOADS, tile_loads(TILE_FLOATS, 1, block)) + 1)}))}


def choose(M: int, K: int, lda: int, a_mod16: int, b_mod16: int, device: Device) -> Plan:
    """The rule. `a_mod16`, `b_mod16`: A's and B's addresses modulo 16 bytes; `lda`: floats from
    one row of A to the next."""
    if M == 0:
        return Plan(M, K, "none", reasons=("M = 0: an empty result, nothing to launch",))
    if K == 0:
        return Plan(M, K, "zeros", reasons=("K = 0: every row sums nothing, C is zeros (no kernel)",))
    rows_aligned_alike = M == 1 or lda % 4 == 0
    b_vec = rows_aligned_alike and (a_mod16 - b_mod16) % 16 == 0
    why = []
    row_start = "every row starts 16-byte aligned" if rows_aligned_alike and a_mod16 == 0 else (
        "rows start at different offsets from a 16-byte boundary" if not rows_aligned_alike else
        f"rows start {a_mod16} bytes past a 16-byte boundary")

    def alignment(shuffled: bool = False) -> str:
        return (f"{row_start}: float4 body with a scalar head and tail per row; B read as "
                + ("float4s (aligned where A's rows are)" if b_vec else
                   "float4s shifted into place by warp shuffles (not aligned where A's rows are)" if shuffled else
                   "scalars (not aligned where A's rows are)"))

    why.append(alignment())
    limits = device.limits
    tile = next((t for t in TILE_ROWS if tile_fits(t[0], K, lda) and tile_loads(t[0], K, t[1], lda) <= TILE_MAX_LOADS),
                None)
    if K <= TILE_MAX_K and M > 1 and tile and 8 * (lda - K) <= K and (
            M * K > resident_rows_threads(b_vec, device) * FLOATS_PER_TRIP):
        rows, block, G, R = tile
        loads = tile_loads(rows, K, block, lda)
        why = [f"K = {K:,} <= {TILE_MAX_K}: rows so short that a block loads {rows} of them as one stretch of "
               f"A (a tile of {tile_floats(rows, K, lda):,} floats in shared memory), then {G} lane"
               f"{'s' if G > 1 else ''} per row add{'' if G > 1 else 's'} it up"
               + (f", {R} rows per {'group of lanes' if G > 1 else 'thread'}" if R > 1 else "")
               + "; A is more than one trip of the resident threads"]
        if loads > TILE_LOADS:
            why.append(f"the tile is more than 4 float4s per thread: one trip of {loads} loads per thread, all in "
                       "flight at once, into shared memory sized to the tile (12 or more blocks per SM of static "
                       "4,096-float tiles need the largest shared-memory carveout, the smallest L1)")
        return make_plan(M, K, "row_tiles", device, False, block, loads, lanes_per_row=G, reasons=tuple(why),
                         rows_per_group=R)
    if K <= SHORT_ROW_K:
        G, lanes_why = rows_lanes(M, K, b_vec, device)
        why.insert(0, f"K = {K:,} <= {SHORT_ROW_K:,}: rows too short to keep a block busy; " + lanes_why)
        return make_plan(M, K, "rows_per_warp", device, b_vec, ROWS_BLOCK, lanes_per_row=G, reasons=tuple(why))
    bps = stage_occupancy(SPLIT_K, SPLIT_BLOCK, split_k_variant(1, LOADS, b_vec), limits).blocks_per_sm
    slots = device.sms * bps
    warps_per_block = SPLIT_BLOCK // 32
    warps_per_sm = min(bps, M / device.sms) * warps_per_block
    splits, split_why = choose_splits(M, K, slots, warps_per_sm, limits.max_threads // 32, device.l2_bytes,
                                      rows_alike=rows_aligned_alike)
    rows, loads = 1, LOADS
    if splits > 1 and 2 <= M < SHARE_B_BELOW_M and 4 * K > B_SHARE_OF_L2 * device.l2_bytes:
        rows, loads = (SHARE_B_ROWS, SHARE_B_LOADS) if b_vec else (SHARE_B_ROWS_SHUFFLED, SHARE_B_LOADS_SHUFFLED)
        why[0] = alignment(shuffled=not b_vec)
        bps = stage_occupancy(SPLIT_K, SPLIT_BLOCK, split_k_variant(rows, loads, b_vec), limits).blocks_per_sm
        slots = device.sms * bps
        splits, split_why = choose_splits(M, K, slots, warps_per_sm, limits.max_threads // 32, device.l2_bytes, rows,
                                          rows_aligned_alike)
        split_why.append(f"{M:,} rows (fewer than {SHARE_B_BELOW_M}), and B more than {B_SHARE_OF_L2:.0%} of the "
                         f"L2: {rows} rows per block share each float4 of B"
                         + ("" if b_vec else " (loaded aligned and shifted into place for each row by warp "
                                             "shuffles, the rows not being aligned like B)")
                         + f", {loads} load{'s' if loads > 1 else ''} of each row per trip")
    why.insert(0, f"K = {K:,} > {SHORT_ROW_K:,}: a block of {SPLIT_BLOCK} threads per "
                  + (f"{rows} rows' " if rows > 1 else "row")
                  + (f"{' ' if rows == 1 else ''}stretch ({splits} stretches per row)" if splits > 1 else "")
                  + f", {loads} float4 load{'s' if loads > 1 else ''} of A in flight per thread per row; "
                    f"{bps} blocks fit per SM ({device.sms} SMs: {slots} slots)")
    return make_plan(M, K, "split_k", device, b_vec, SPLIT_BLOCK, loads, splits, reasons=tuple(why + split_why),
                     rows_per_block=rows)


# ---- inputs ------------------------------------------------------------------------------------

def layout(A, B, require_cuda: bool = True) -> tuple[int, int, int]:
    """Check A and B for the dispatcher; returns (M, K, lda). Any float32 matrix whose elements
    along a row are adjacent (stride 1) is taken, whatever its row stride or first address; B is
    (K,) or (K, 1) with any stride (gemv copies a strided B: K floats)."""
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, torch.Tensor):
            raise checks.GemvInputError(f"{name} is a {type(t).__name__}, not a torch.Tensor: "
                                        f"pass torch.as_tensor({name}, dtype=torch.float32, device='cuda')")
        if t.dtype != torch.float32:
            raise checks.GemvInputError(f"{name} is {t.dtype}; gemvlab's kernels read float32. "
                                        f"Convert it: {name} = {name}.float()")
    if A.dim() != 2:
        raise checks.GemvInputError(f"A must be a 2-D matrix (M, K); got {A.dim()}-D, shape {tuple(A.shape)}")
    M, K = A.shape
    if tuple(B.shape) not in ((K,), (K, 1)):
        raise checks.GemvInputError(f"B must have shape ({K},) or ({K}, 1) to match A's K = {K}; "
                                    f"got {tuple(B.shape)}")
    if A.device != B.device:
        raise checks.GemvInputError(f"A is on {A.device} and B on {B.device}: put both on the same GPU "
                                    f"(A, B = A.cuda(), B.cuda())")
    if require_cuda and A.device.type != "cuda":
        raise checks.GemvInputError(checks.not_on_gpu_message("A", A.device))  # B is on the same device
    if K > 1 and M > 1 and A.stride(1) != 1:
        raise checks.GemvInputError(
            f"A's rows are not contiguous (strides {A.stride()}: a transpose or a strided column "
            f"slice); the kernels read each row as adjacent floats. Pass A.contiguous() (a copy)")
    lda = A.stride(0) if M > 1 else K
    return M, K, lda


# ---- launching ---------------------------------------------------------------------------------

_devices: dict = {}
_plans: dict = {}
_functions: dict = {}


def _index(device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


def _device(device) -> Device:
    """The Device for a tensor's device: this GPU's, or for a CPU tensor the recorded GPU's."""
    key = _index(device) if device.type == "cuda" else "recorded"
    if key not in _devices:
        _devices[key] = Device.of(key) if device.type == "cuda" else Device.recorded()
    return _devices[key]


def _function(kernel):
    if kernel.name not in _functions:
        built = build_stage(kernel)
        fn = built.function(kernel.launcher)
        fn.argtypes = _ARGTYPES
        _functions[kernel.name] = (fn, built)
    return _functions[kernel.name]


try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # the current stream's handle, without a Stream object
except AttributeError:  # pragma: no cover - older torch
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _b_strided(B, K: int) -> bool:
    return K > 1 and B.stride(0) != 1  # gemv copies such a B (K floats) into a fresh, aligned one


def _plan(A, B, require_cuda: bool) -> tuple[Plan, int]:
    M, K, lda = layout(A, B, require_cuda=require_cuda)
    b_mod16 = 0 if _b_strided(B, K) else B.data_ptr() % 16
    return choose(M, K, lda, A.data_ptr() % 16, b_mod16, _device(A.device)), lda


def plan_for(A, B) -> Plan:
    """The plan gemv uses for these A and B (on their GPU, or the recorded one on the CPU)."""
    return _plan(A, B, require_cuda=False)[0]


def _prepare(A, B):
    """Check everything once and build the launch for this (shape, strides, alignment, device)."""
    plan, lda = _plan(A, B, require_cuda=True)
    return make_launch(plan, lda, B.dim() == 2, A.device, _b_strided(B, plan.K))


def make_launch(plan: Plan, lda: int, b_2d: bool, device, b_strided: bool = False):
    """launch(A, B, out=None) -> C for inputs already checked to match `plan` (any plan: the
    explorations in tools/explore/ time plans the rule would not choose)."""
    M, K = plan.M, plan.K
    index = _index(device)
    out_shape = (M, 1) if b_2d else (M,)
    if plan.kernel in ("none", "zeros"):
        def launch(A, B, out=None):
            C = torch.empty(out_shape, device=device) if out is None else out
            return C.zero_() if plan.kernel == "zeros" else C

        launch.plan = plan
        return launch
    kernel = {"split_k": SPLIT_K, "rows_per_warp": ROWS_PER_WARP, "row_tiles": ROW_TILES}[plan.kernel]
    fn, built = _function(kernel)
    args = LaunchArgs(lda, M, K, plan.chunk, plan.splits, plan.block, plan.variant, plan.grid)
    args_address = ctypes.addressof(args)  # the closure keeps args alive
    partial_count = M * plan.splits if plan.splits > 1 else 0

    def launch(A, B, out=None):
        if b_strided:
            B = B.reshape(K).contiguous()  # a strided B: K floats copied, far fewer than A's M * K
        C = torch.empty(out_shape, device=device) if out is None else out
        P = torch.empty(partial_count, device=device) if partial_count else None
        code = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr() if partial_count else None, args_address,
                  _raw_stream(index))
        if code:
            raise RuntimeError(f"launching {plan.name} failed: {built.error_string(code)} (CUDA error {code})")
        return C

    launch.plan = plan
    launch.args = args
    return launch


def launcher(A, B):
    """The launch gemv uses for A and B: from the cache when this (shape, strides, dtype, device,
    alignment) was seen before, else checked and planned now. Has a .plan."""
    try:
        key = (A.shape, A.stride(), A.dtype, A.device, B.shape, B.stride(), B.dtype,
               A.data_ptr() % 16, B.data_ptr() % 16, type(A), type(B))
    except AttributeError:  # not tensors: let the full check say what they are
        layout(A, B)
        raise
    launch = _plans.get(key)
    if launch is None:
        launch = _plans[key] = _prepare(A, B)
    return launch


def run(A, B, out=None):
    """gemv without the autograd check: what the custom op (gemvlab.ops) calls."""
    launch = launcher(A, B)
    if out is not None:
        checks.check_out(out, A.shape[0], A.device)
        out = out.view((A.shape[0], 1) if B.dim() == 2 else (A.shape[0],))
    return launch(A, B, out)


def gemv(A, B, out=None):
    """C = A @ B on the GPU with the kernel the rule picks for this shape (see the module doc).

    A: (M, K) float32 on a GPU, rows of adjacent floats (any row stride, any first address);
    B: (K,) or (K, 1). Returns (M,) or (M, 1), or writes `out`. Bad inputs raise GemvInputError
    before any launch. Inputs that require grad go through the custom op, which has a backward.
    """
    if out is None and torch.is_grad_enabled() and getattr(A, "requires_grad", False) | getattr(
            B, "requires_grad", False):
        from .ops import gemv_op

        return gemv_op(A, B)
    return run(A, B, out)


def explain(A, B) -> str:
    """Which kernel gemv(A, B) launches, how, and why; A and B may be on the CPU (the rule then
    uses the recorded GPU's SM count, L2 and limits). Also printed by ``gemvlab.explain``."""
    plan = plan_for(A, B)
    device = _device(A.device)
    where = f"on this {device.name}" if A.device.type == "cuda" else f"on the recorded {device.name}"
    text = plan.describe() + f"\n  ({where}: {device.sms} SMs, {device.l2_bytes / 2**20:.0f} MiB of L2)"
    if _b_strided(B, plan.K):
        text += "\n  - B is strided: gemv copies it (K floats) before the launch"
    return text
