"""The decode rule: which kernel and launch gemvlab.gemv(W, B) uses for bf16, fp16 or several
vectors, as a pure function of numbers (N, K, n, dtype, alignment, SM count; a device's L2 size is
not an input: W is read once whatever its size).

    plan = choose(N, K, n, dtype, lda, w_mod16, ldb, ldv, b_mod16, device)
    print(plan.describe())

The tuned numbers are at the top, each with what it decides; bench/tune_dispatch.py --decode
re-times candidate plans around them, and docs/design/decode.md tabulates what it measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..gpu.device import Device
from ..native.kernel import encode
from .kernels import CORES, DTYPE_CODES, KERNELS, MMA, MMA_ROWS, PER_LOAD, core_rows

#: decode_mma's 16-byte loads per row per lane per trip (U) and trips in flight (STAGES): a warp's
#: trip reads 4 KiB of W (MMA_ROWS = 16 rows x 4 loads x 16 bytes x 4 lanes) and NT x 2 KiB of B's vectors, and
#: the next trip's loads are issued before this trip's mma.sync run, so a warp always has a trip of
#: loads in flight.
LOADS = 4
STAGES = 2
#: With two n-tiles where the tiles fit in STAGES's one wave: STAGES_LATE_B (the next trip's loads of W
#: in flight; B's loads issued just before the mma.sync of their trip) where that wave then holds at
#: least LATE_B_GAIN times STAGES's warps per tile. It takes 128 registers, not 168, so an SM holds 16
#: warps, not 12, and the extra warps cover B's wait. At the same warps and waves it is slower, so it
#: is taken only where it doubles the warps per tile (docs/design/decode.md tabulates the timings).
STAGES_LATE_B = 3
LATE_B_GAIN = 2
#: Warps per block (the warps of a block split K between them, each at least one trip; any count up
#: to MAX_WARPS). Where the tiles of 16 rows all fit in one wave of one-warp blocks, the most warps
#: that still keep them in one wave: no SM waits on a second wave, and each tile's K is split as
#: finely as the SM's registers allow (docs/design/decode.md lists the shapes where a second wave was
#: faster). The count need not be a power of two: at 4,096 x 4,096 and
#: n = 16 each SM runs at most 2 of the 256 tiles, and 6 warps per tile fill its 12 warps, where 4 leave a
#: third of them idle and 8 need a second wave.
MAX_WARPS = 16
#: With two n-tiles, where there are more tiles than one wave holds: about K's trips / MAX_TRIPS warps
#: per block, that ratio to the nearest power of two, 1 to TRIP_WARPS and at most K's trips. Splitting
#: each tile's K among more warps shortens each block, so that the last wave ends sooner.
#: With one n-tile, where one wave holds the tiles only at one warp each or not at all: of 1 to
#: TRIP_WARPS warps (at most K's trips), the count whose waves leave the smallest share of their block
#: slots idle, the fewer warps on a tie (`fill`). At 28,672 x 8,192, 1,792 tiles fill 85 % of one
#: wave of one-warp blocks and 91 % of three waves of 3-warp blocks. `fill` is a proxy: one warp per
#: tile also costs on its own, so where one wave of one-warp blocks is exactly full it keeps 1 warp
#: though 3 or 4 were faster (docs/design/decode.md has the measurements, and the runs where this
#: choice lost with two n-tiles).
MAX_TRIPS = 16
TRIP_WARPS = 4
#: decode_cores: threads per block.
CORES_BLOCK = 128


@dataclass(frozen=True)
class DecodePlan:
    N: int
    K: int
    n: int
    dtype: str  # "float32", "bfloat16", "float16"
    kernel: str  # "decode_mma", "decode_cores", "none" (N = 0) or "zeros" (K = 0)
    variant: int = 0
    block: int = 0
    grid: int = 0
    vec: int = 0  # 3: W and B read in 16-byte loads; 0: element by element
    copy_b: bool = False  # B's vectors are strided or unaligned: copied into aligned rows first
    warps_split_k: int = 1  # decode_mma: warps of a block sharing its rows, each a part of K
    waves: float = 0.0
    reasons: tuple = field(default=(), compare=False)  # sentences, one per decision

    @property
    def name(self) -> str:
        if self.kernel in KERNELS:
            return KERNELS[self.kernel].kernel_name(self.variant).removeprefix("gemv_")
        return self.kernel

    def describe(self) -> str:
        head = f"gemv(A, B) runs {self.name}"
        if self.kernel in KERNELS:
            head += f": {self.grid} blocks of {self.block} threads ({self.waves:.2f} waves)"
        return "\n".join([head, *(f"  - {r}" for r in self.reasons)])


def _nearest_pow2(x: float) -> int:
    return 1 << max(0, round(math.log2(x))) if x > 1 else 1


def layout(dtype, N: int, K: int, lda: int, w_mod16: int, ldb: int, ldv: int, b_mod16: int,
           n: int) -> tuple[int, bool, str]:
    """(vec, copy_b, why). vec 3: W's rows start 16-byte aligned, so W and B are read in 16-byte
    loads, B first copied into aligned rows (n x K rounded up to whole loads, far fewer than W's N x K)
    where its vectors are strided or unaligned; vec 0: element by element."""
    e = PER_LOAD[dtype]
    if not (w_mod16 == 0 and (N == 1 or lda % e == 0)):
        return 0, False, "W element by element: its rows do not all start 16-byte aligned"
    if ldb == 1 and b_mod16 == 0 and (n == 1 or ldv % e == 0):
        return 3, False, "W and B in 16-byte loads"
    return 3, True, (f"W and B in 16-byte loads; B's vectors are strided or unaligned (elements {ldb} apart), "
                     f"so gemv first copies B into aligned rows ({n} x {-(-K // e) * e} elements)")


def choose(N: int, K: int, n: int, dtype, lda: int, w_mod16: int, ldb: int, ldv: int, b_mod16: int,
           device: Device) -> DecodePlan:
    """The rule. `w_mod16`, `b_mod16`: the addresses modulo 16 bytes; `lda`: elements from one row of
    W to the next; `ldb`, `ldv`: B's elements from one k to the next and from one vector to the next."""
    name = str(dtype).removeprefix("torch.")
    if N == 0:
        return DecodePlan(N, K, n, name, "none", reasons=("N = 0: nothing to compute, no launch",))
    if K == 0:
        return DecodePlan(N, K, n, name, "zeros", reasons=("K = 0: C is zeros, no launch",))
    vec, copy_b, reads = layout(dtype, N, K, lda, w_mod16, ldb, ldv, b_mod16, n)
    code = DTYPE_CODES[dtype]
    if code == 0 or int(device.limits.compute_capability.split(".")[0]) < 8:
        return _cores(N, K, n, name, code, vec, copy_b, reads, device)
    nt = 1 if n <= 8 else 2
    variant = encode(code, nt, LOADS, STAGES)
    tiles = -(-N // MMA_ROWS)
    trips = -(-K // (32 * LOADS))  # of one warp alone on its rows
    most = min(MAX_WARPS, trips)

    def slots(warps: int, variant: int) -> int:
        return _slots(MMA, 32 * warps, variant, device, shared_bytes(warps, nt))

    def one_wave_warps(variant: int) -> int:  # slots() falls as warps grow
        warps = 1
        while warps < most and slots(warps + 1, variant) >= tiles:
            warps += 1
        return warps

    one_wave = slots(1, variant)
    stages, warps = STAGES, 1
    if tiles <= one_wave:
        warps = one_wave_warps(variant)
        if nt == 2:
            late = encode(code, nt, LOADS, STAGES_LATE_B)
            if (late_warps := one_wave_warps(late)) >= LATE_B_GAIN * warps:
                stages, variant, warps, one_wave = STAGES_LATE_B, late, late_warps, slots(1, late)
        split = (f"{warps} warp{'s' if warps > 1 else ''} per block of {MMA_ROWS} rows, splitting K: the {tiles} tiles fit in "
                 f"one wave ({one_wave} one-warp blocks on {device.sms} SMs), and {warps} is the most warps (at most "
                 f"{most}: K's {trips} trips and {MAX_WARPS}) that keep them in one")
    if nt == 1 and warps == 1:  # one warp per tile in one wave at most: the warps whose waves are fullest
        warps, split = _fullest_waves(tiles, one_wave, most, lambda w: slots(w, variant))
    elif tiles > one_wave:
        warps = min(most, TRIP_WARPS, _nearest_pow2(trips / MAX_TRIPS))
        while warps > 1 and slots(warps, variant) == 0:
            warps //= 2  # a block's registers must fit in the SM's
        split = (f"{warps} warp{'s' if warps > 1 else ''} per block of {MMA_ROWS} rows, splitting K: the {tiles} tiles fill "
                 f"{tiles / one_wave:.1f} waves of one-warp blocks, so K's {trips} trips of {32 * LOADS} elements / "
                 f"{MAX_TRIPS}, to the nearest power of two, 1 to {TRIP_WARPS}")
    waves = tiles / max(1, slots(warps, variant))
    return DecodePlan(N, K, n, name, "decode_mma", variant, 32 * warps, tiles, vec, copy_b, warps, waves, (
        (f"{name}: tensor cores, mma.sync m16n8k16 with fp32 sums; {nt} n-tile{'s' if nt > 1 else ''} of 8 "
         f"vectors for n = {n}"),
        (f"{LOADS} loads per row per trip: each warp's trip reads {LOADS} KiB of W and {nt * LOADS // 2} KiB of B, "
         + ("and the next trip's loads are issued before this trip's mma.sync" if stages == STAGES else
            "and the next trip's loads of W are issued before this trip's mma.sync, B's just before them: that "
            f"frees the registers for at least {LATE_B_GAIN}x the warps per tile")),
        split, reads))


def _cores(N, K, n, name, code, vec, copy_b, reads, device) -> DecodePlan:
    nv = 1 << max(0, (n - 1).bit_length())
    nv = max(2, nv) if code == 0 else nv
    variant = encode(code, nv)
    rows = core_rows(nv)
    grid = -(-N // (CORES_BLOCK // 32 * rows))
    why = ("float32: CUDA cores (tensor cores would round it to tf32)" if code == 0 else
           f"{name} on compute capability {device.limits.compute_capability}: CUDA cores (the m16n8k16 mma.sync "
           f"needs 8.0)")
    waves = grid / max(1, _slots(CORES, CORES_BLOCK, variant, device))
    return DecodePlan(N, K, n, name, "decode_cores", variant, CORES_BLOCK, grid, vec, copy_b, 1, waves, (
        why, f"{rows} rows per warp share each load of B; compiled for up to {nv} vectors (n = {n})", reads))


def _fullest_waves(tiles: int, one_wave: int, most: int, slots) -> tuple[int, str]:
    """(warps, why): of 1 to TRIP_WARPS warps per block (at most `most`) that fit, the count whose
    waves leave the smallest share of their block slots idle, the fewer on a tie. `slots(w)`: blocks
    of w warps the GPU holds at once; `one_wave`: of one warp."""
    if most == 1:
        return 1, f"1 warp per block of {MMA_ROWS} rows: K fits in one trip of 128 elements"
    counts = [w for w in range(1, min(most, TRIP_WARPS) + 1) if slots(w)]
    warps = max(counts, key=lambda w: (fill(tiles, slots(w)), -w))
    per_wave = slots(warps)
    waves_up = -(-tiles // per_wave)
    return warps, (f"{warps} warp{'s' if warps > 1 else ''} per block of {MMA_ROWS} rows, splitting K: the {tiles} tiles "
                   + ("fit in one wave only at one warp each" if tiles <= one_wave else
                      "need more than one wave even at one warp each")
                   + f"; of 1 to {counts[-1]} warps, {warps} fills its waves' block slots the most, the fewest warps "
                   f"on a tie ({100 * fill(tiles, per_wave):.1f} %: {waves_up} wave{'s' if waves_up > 1 else ''} of "
                   f"{per_wave} blocks)")


def fill(tiles: int, slots: int) -> float:
    """How full the waves of blocks are: tiles over (waves, rounded up, times blocks per wave)."""
    return tiles / (-(-tiles // slots) * slots)


def shared_bytes(warps: int, nt: int) -> int:
    """decode_mma's dynamic shared memory: each warp's sums, when a block has several warps. The same
    count as launch_decode_mma's `shared` and the kernel's [warps][NT * 4][32] floats."""
    return warps * nt * 4 * 32 * 4 if warps > 1 else 0


def _slots(kernel, block: int, variant: int, device: Device, dynamic: int = 0) -> int:
    """Blocks of this launch the whole GPU holds at once (0 where one block does not fit on an SM)."""
    return kernel.occupancy(block, variant, device.limits, dynamic).blocks_per_sm * device.sms
