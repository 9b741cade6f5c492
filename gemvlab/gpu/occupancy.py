"""How many blocks of a kernel an SM holds at once, and how many the grid actually puts there.

Two different questions, both needed to explain a timing:

* **Theoretical occupancy** (:func:`occupancy`): an SM takes a block only when it has room for
  all of the block's warps, registers, shared memory and a block slot. The smallest of those
  quotients is the number of resident blocks; the one that sets it is the *limiter*. This is
  the arithmetic of CUDA's own occupancy calculator (the toolkit's ``cuda_occupancy.h``, the
  same answer as ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``), written out in Python so
  that it runs without a GPU; a test compiles the header with g++ and compares, block size by
  block size. One detail matters often: registers are handed out per warp *within each of the
  SM's four sub-partitions* (a quarter of the register file each), so a kernel fits
  ``4 * floor(quarter / per_warp)`` warps, sometimes one block fewer than the whole register
  file divided by the block would suggest.
* **Residency** (:func:`residency`): what a launch of `grid` blocks on `sms` SMs really leaves
  on each SM. With fewer blocks than the SMs can hold, the occupancy a kernel *could* reach is
  not the one it gets: 8 blocks on 132 SMs leave 124 SMs empty whatever the calculator says.
  With more, blocks run in waves, and the last wave may be nearly empty.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class SMLimits:
    """Per-SM limits of one GPU: what ``cudaGetDeviceProperties`` reports, plus the
    per-architecture constants of ``cuda_occupancy.h``."""

    compute_capability: str
    max_threads: int  # maxThreadsPerMultiProcessor
    max_blocks: int  # resident blocks per SM (an architecture constant)
    registers: int  # regsPerMultiprocessor
    max_registers_per_thread: int
    shared_bytes: int  # sharedMemPerMultiprocessor
    shared_per_block_bytes: int  # sharedMemPerBlockOptin: the most one block may opt in to
    shared_reserved_per_block: int  # reservedSharedMemPerBlock (1 KiB since sm_80)
    register_granularity: int = 256  # registers are given to a warp in units of 256
    shared_granularity: int = 128  # 128 B since sm_80, 256 B before
    registers_per_block: int = 65536  # regsPerBlock
    sub_partitions: int = 4  # register file quarters (warp schedulers) per SM
    shared_per_block_default: int = 49152  # sharedMemPerBlock without opting in
    max_threads_per_block: int = 1024

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> SMLimits:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def _max_blocks(major: int, minor: int) -> int:
    """Resident blocks per SM: cudaOccMaxBlocksPerMultiprocessor in cuda_occupancy.h."""
    if major == 7:
        return 16 if minor == 5 else 32
    if major == 8:
        return {0: 32, 9: 24}.get(minor, 16)
    if major == 10:
        return 24 if minor == 1 else 32
    if major == 11:
        return 24 if minor == 0 else 32
    if major == 12:
        return 24
    return 32  # 9.x (and 5.x, 6.x)


def limits_for(cc: str, max_threads: int, registers: int, shared_bytes: int, shared_optin: int,
               shared_reserved: int, shared_per_block: int = 49152) -> SMLimits:
    major, minor = (int(x) for x in cc.split("."))
    return SMLimits(
        compute_capability=cc, max_threads=max_threads, max_blocks=_max_blocks(major, minor),
        registers=registers, max_registers_per_thread=255, shared_bytes=shared_bytes,
        shared_per_block_bytes=shared_optin, shared_reserved_per_block=shared_reserved,
        shared_granularity=128 if major >= 8 else 256, registers_per_block=65536,
        sub_partitions=2 if (major, minor) == (6, 0) else 4, shared_per_block_default=shared_per_block)


#: Limits of GPUs a learner may have (values of cudaGetDeviceProperties on each), used where no
#: GPU is present: the recorded H200's, and the smaller GPUs the notebooks scale down to.
KNOWN = {
    "H200": limits_for("9.0", 2048, 65536, 233472, 232448, 1024),  # also H100
    "A100": limits_for("8.0", 2048, 65536, 167936, 166912, 1024),
    "L4": limits_for("8.9", 1536, 65536, 102400, 101376, 1024),
    "T4": limits_for("7.5", 1024, 65536, 65536, 65536, 0),
}
#: An H100/H200 (sm_90): the limits used when neither a GPU nor a recorded file gives them.
HOPPER = KNOWN["H200"]


def limits_of_device(index: int | None = None) -> SMLimits:
    import torch

    p = torch.cuda.get_device_properties(index if index is not None else torch.cuda.current_device())
    reserved = getattr(p, "reserved_shared_memory_per_block", None)
    if reserved is None:
        reserved = 1024 if p.major >= 8 else 0
    return limits_for(f"{p.major}.{p.minor}", p.max_threads_per_multi_processor, p.regs_per_multiprocessor,
                      p.shared_memory_per_multiprocessor, p.shared_memory_per_block_optin, reserved,
                      getattr(p, "shared_memory_per_block", 49152))


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


# The shared-memory sizes an SM can be configured to (cudaOccAlignUpShmemSizeVoltaPlus), KiB.
_CARVEOUTS = {7: (0, 8, 16, 32, 64, 96), 8: (0, 8, 16, 32, 64, 100, 132, 164),
              9: (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)}


def _carveout(size: int, limits: SMLimits) -> int:
    major, minor = (int(x) for x in limits.compute_capability.split("."))
    if (major, minor) == (7, 5):
        steps = (32, 64)
    elif major == 8 and minor not in (0, 7):
        steps = (0, 8, 16, 32, 64, 100)
    else:
        steps = _CARVEOUTS.get(major, _CARVEOUTS[9])
    for kib in steps:
        if size <= kib * 1024:
            return kib * 1024
    return size


@dataclass(frozen=True)
class Occupancy:
    block: int
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # resident warps / the SM's maximum
    limiter: str  # "registers", "shared memory", "threads", "blocks", or "does not fit"
    by: dict  # each limit's own quotient
    max_warps: int = 0  # the SM's warp slots


def occupancy(registers: int, block: int, limits: SMLimits = HOPPER, shared_bytes: int = 0,
              dynamic_shared_bytes: int = 0) -> Occupancy:
    """Resident blocks and warps per SM for a kernel using `registers` per thread, `shared_bytes`
    of static shared memory and `dynamic_shared_bytes` set at launch, with `block` threads.
    Follows cudaOccMaxActiveBlocksPerMultiprocessor step by step (default carveout, no opt-in)."""
    warps = -(-block // 32)
    max_warps = limits.max_threads // 32
    # Warps: the SM's warp slots, in whole blocks.
    by_threads = 0 if block > limits.max_threads_per_block else max_warps // warps
    # Registers: per warp, rounded to the granularity, allocated within each sub-partition.
    per_warp = _round_up(registers * 32, limits.register_granularity)
    if registers == 0:
        by_registers = 2**31 - 1
    elif (limits.registers_per_block < per_warp * _round_up(warps, limits.sub_partitions)
          or limits.registers_per_block < per_warp * warps or registers > 256):
        by_registers = 0
    else:
        per_quarter = (limits.registers // limits.sub_partitions) // per_warp
        by_registers = per_quarter * limits.sub_partitions // warps
    # Shared memory: static + reserved + dynamic, rounded up; the SM's default carveout.
    static = shared_bytes + limits.shared_reserved_per_block
    allocated = _round_up(static + dynamic_shared_bytes, limits.shared_granularity)
    max_dynamic = limits.shared_per_block_default - shared_bytes  # cudaFuncAttributes' default
    per_block_limit = (limits.shared_per_block_bytes if static + max_dynamic > limits.shared_per_block_default
                       else limits.shared_per_block_default)
    if int(limits.compute_capability.split(".")[0]) >= 8:
        per_block_limit += limits.shared_reserved_per_block
    if dynamic_shared_bytes > max_dynamic or allocated > per_block_limit:
        by_shared = 0
    elif allocated == 0:
        by_shared = 2**31 - 1
    else:
        carveout = _carveout(limits.shared_bytes, limits)
        if carveout < allocated:
            carveout = _carveout(allocated, limits)
        by_shared = carveout // allocated
    by = {"threads": by_threads, "blocks": limits.max_blocks, "registers": by_registers,
          "shared memory": by_shared}
    blocks = min(by.values())
    order = ["threads", "blocks", "registers", "shared memory"]  # on a tie, name the SM's own maximum
    limiter = "does not fit" if blocks == 0 else min(order, key=lambda k: (by[k], order.index(k)))
    return Occupancy(block, blocks, blocks * warps, blocks * warps / max_warps, limiter, by, max_warps)


def largest_block(registers: int, limits: SMLimits = HOPPER, shared_per_thread: int = 0,
                  shared_bytes: int = 0) -> int:
    """The largest multiple of 32 (at most 1024) whose block fits on an SM at all."""
    best = 0
    for block in range(32, 1025, 32):
        if occupancy(registers, block, limits, shared_bytes, shared_per_thread * block).blocks_per_sm:
            best = block
    return best


@dataclass(frozen=True)
class Residency:
    """What a grid leaves on the SMs: the calculator's limit applied to the blocks that exist."""

    grid: int
    sms: int
    blocks_per_sm: int  # theoretical (the calculator's)
    warps_per_block: int
    waves: int  # rounds of blocks: ceil(grid / (sms * blocks_per_sm))
    last_wave_fill: float  # blocks in the last wave / the slots of a wave
    busy_sms: int  # SMs given at least one block
    first_wave_warps_per_sm: float  # resident warps per busy SM while the first wave runs
    max_warps: int

    @property
    def warps_per_sm(self) -> float:
        """Resident warps per SM averaged over the SMs (idle ones count as 0), first wave."""
        return self.first_wave_warps_per_sm * self.busy_sms / self.sms

    @property
    def occupancy(self) -> float:
        """Achievable occupancy of the first wave: resident warps over the SM's maximum, averaged
        over all SMs (the calculator's occupancy applies only when every SM is full)."""
        return self.warps_per_sm / self.max_warps if self.max_warps else 0.0

    def describe(self) -> str:
        if self.blocks_per_sm == 0:
            return "does not fit on an SM"
        slots = self.sms * self.blocks_per_sm
        if self.waves <= 1:
            idle = self.sms - self.busy_sms
            return (f"{self.grid} blocks for {slots} slots: one partial wave, {self.warps_per_sm:.1f} warps "
                    f"per SM on average ({self.occupancy:.0%} of {self.max_warps})"
                    + (f"; {idle} of {self.sms} SMs idle if the scheduler spreads the blocks (assumed)" if idle > 0 else ""))
        return (f"{self.grid} blocks for {slots} slots: {self.waves} waves of {self.first_wave_warps_per_sm:.0f} "
                f"warps per SM, the last {self.last_wave_fill:.0%} full")


def residency(occ: Occupancy, grid: int, sms: int) -> Residency:
    """Spread `grid` blocks over `sms` SMs that each hold `occ.blocks_per_sm` at once."""
    warps = -(-occ.block // 32)
    per_sm = occ.blocks_per_sm
    max_warps = occ.max_warps
    if per_sm == 0 or grid == 0:
        return Residency(grid, sms, per_sm, warps, 0, 0.0, 0, 0.0, max_warps)
    slots = sms * per_sm
    waves = -(-grid // slots)
    last = grid - (waves - 1) * slots
    first = min(grid, slots)
    busy = min(sms, first)
    first_warps = first / busy * warps
    return Residency(grid, sms, per_sm, warps, waves, last / slots, busy, first_warps, max_warps)
