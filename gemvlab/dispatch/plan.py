"""A plan: one launch of a dispatcher kernel (two for split_k with several stretches), with the
numbers that fix it and the reasons it was chosen. make_plan builds a consistent one from a few
choices: what the rule (gemvlab.dispatch.rule) returns, and what the tuning script times."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import checks
from ..gpu import occupancy
from ..gpu.device import Device
from ..native.kernel import encode
from . import tuning as T
from .kernels import KERNELS, SPLIT_K, TILE_FLOATS


@dataclass(frozen=True)
class Plan:
    M: int
    K: int
    kernel: str  # "split_k", "rows_per_warp", "row_tiles", "none" (M = 0) or "zeros" (K = 0)
    variant: int = 0  # the kernel's template arguments, packed (gemvlab.native.kernel.encode)
    block: int = 0
    grid: int = 0
    splits: int = 1
    chunk: int = 0  # floats per stretch (split_k)
    lanes_per_row: int = 0  # rows_per_warp's and row_tiles' G
    rows_per_block: int = 1  # split_k: rows sharing each stretch of B in one block
    rows_per_group: int = 1  # row_tiles: rows each group of G lanes sums
    loads: int = 0  # float4 loads of A in flight per thread per row
    b_vec: bool = False  # B read as float4s (aligned where A's rows are)
    waves: int = 0
    last_wave_fill: float = 0.0
    reasons: tuple = field(default=(), compare=False)  # reasons.Reason, one or more per decision

    @property
    def name(self) -> str:
        if self.kernel in KERNELS:
            name = KERNELS[self.kernel].kernel_name(self.variant).removeprefix("gemv_")
            return name + (f" x {self.splits} stretches" if self.splits > 1 else "")
        return self.kernel

    def describe(self) -> str:
        """The plan in words: its launch, waves and every reason (gemvlab.dispatch.reasons)."""
        from .reasons import describe

        return describe(self)


def tile_floats(rows: int, K: int, lda: int) -> int:
    """The floats of the one stretch row_tiles loads for `rows` consecutive rows of K floats,
    `lda` apart: from the first row's first float to the last row's last."""
    return (rows - 1) * lda + K


def tile_loads(rows: int, K: int, block: int, lda: int | None = None) -> int:
    """row_tiles' float4 loads per thread per trip: TILE_LOADS (the static tile), or as many as
    load a tile of `rows` rows (K floats each, `lda` apart) in one trip of `block` threads."""
    return max(T.TILE_LOADS, -(-tile_floats(rows, K, K if lda is None else lda) // (4 * block)))


def tile_fits(rows: int, K: int, lda: int) -> bool:
    """Whether `rows` consecutive rows, as the one stretch row_tiles loads, fit its tile."""
    return tile_floats(rows, K, lda) <= TILE_FLOATS


def make_plan(M: int, K: int, kernel: str, device: Device, b_vec: bool, block: int, loads: int | None = None,
              splits: int = 1, lanes_per_row: int = 32, reasons: tuple = (), rows_per_block: int = 1,
              rows_per_group: int = 1, lda: int | None = None) -> Plan:
    """A consistent Plan for the given choices (variant, grid, stretch length, waves). loads: float4
    loads of A per thread per trip (split_k: LOADS unless given; row_tiles: TILE_LOADS unless given,
    more making the tile one trip in shared memory sized to it). Raises GemvInputError for a variant
    gemvlab does not compile (the rule never picks one)."""
    dynamic = 0  # shared memory set at launch
    chunk = 0
    if kernel == "rows_per_warp":
        variant, loads = encode(lanes_per_row, b_vec), KERNELS[kernel].fixed_loads
        grid, splits, rows_per_block, rows_per_group = -(-M // (block // lanes_per_row)), 1, 1, 1
    elif kernel == "row_tiles":
        rows = block // lanes_per_row * rows_per_group
        loads = T.TILE_LOADS if loads is None else loads
        variant, b_vec, grid, splits, rows_per_block = encode(lanes_per_row, rows_per_group, loads), False, -(-M // rows), 1, 1
        if loads > T.TILE_LOADS:  # the tile in shared memory sized to its rows, and the span's offset
            dynamic = 16 * -(-(tile_floats(rows, K, K if lda is None else lda) + 4) // 4)
    elif kernel == "split_k":
        loads = T.LOADS if loads is None else loads
        variant, lanes_per_row, rows_per_group = encode(loads, b_vec, rows_per_block), 0, 1
        chunk = 4 * -(-K // (4 * splits))  # a whole number of float4s per stretch
        splits = -(-K // chunk)
        grid = -(-M // rows_per_block) * splits
    else:
        raise ValueError(f"no dispatcher kernel {kernel!r}")
    spec = KERNELS[kernel]
    if variant not in spec.variants:
        raise checks.GemvInputError(f"{spec.kernel_name(variant)} is not compiled: gemvlab compiles the variants "
                                    f"its rule can choose, {[spec.kernel_name(v) for v in spec.variants]}")
    checks.check_grid(grid, kernel)
    r = occupancy.residency(spec.occupancy(block, variant, device.limits, dynamic), grid, device.sms)
    return Plan(M, K, kernel, variant, block, grid, splits, chunk, lanes_per_row, rows_per_block, rows_per_group,
                loads, b_vec, r.waves, r.last_wave_fill, tuple(reasons))


def split_k_slots(device: Device, b_vec: bool, rows: int = 1, loads: int = T.LOADS) -> tuple[int, int]:
    """(blocks of split_k per SM, the GPU's slots for them) at SPLIT_BLOCK threads."""
    bps = SPLIT_K.occupancy(T.SPLIT_BLOCK, encode(loads, b_vec, rows), device.limits).blocks_per_sm
    return bps, device.sms * bps
