"""How many blocks of a kernel fit on one SM at once, from its resource report and the GPU's limits.

An SM holds a block only when it has room for all of the block's registers, shared memory,
threads and a block slot. The smallest of those four quotients is the number of resident
blocks; the one that sets it is the "limiter". This is the arithmetic of CUDA's occupancy
calculator, so it works without a GPU, from the recorded GPU's limits.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SMLimits:
    """Per-SM limits of one GPU (CUDA programming guide, "compute capabilities" table)."""

    compute_capability: str
    max_threads: int
    max_blocks: int
    registers: int
    max_registers_per_thread: int
    shared_bytes: int  # usable shared memory per SM
    shared_per_block_bytes: int  # the most one block may have (opt-in)
    shared_reserved_per_block: int  # the runtime keeps this much per block (1 KiB since sm_80)
    register_granularity: int = 256  # registers are given to a warp in units of 256
    shared_granularity: int = 128

    def as_dict(self) -> dict:
        return asdict(self)


# Blocks per SM is not in torch's device properties; the guide's table gives it.
_MAX_BLOCKS = {"7.0": 32, "7.5": 16, "8.0": 32, "8.6": 16, "8.7": 16, "8.9": 24, "9.0": 32,
               "10.0": 32, "12.0": 32}

#: An H100/H200 (sm_90): the limits used when neither a GPU nor a recorded file gives them.
HOPPER = SMLimits("9.0", 2048, 32, 65536, 255, 233472, 232448, 1024)


def limits_of_device(index: int | None = None) -> SMLimits:
    import torch

    p = torch.cuda.get_device_properties(index if index is not None else torch.cuda.current_device())
    cc = f"{p.major}.{p.minor}"
    return SMLimits(
        compute_capability=cc,
        max_threads=p.max_threads_per_multi_processor,
        max_blocks=_MAX_BLOCKS.get(cc, 16),
        registers=p.regs_per_multiprocessor,
        max_registers_per_thread=255,
        shared_bytes=p.shared_memory_per_multiprocessor,
        shared_per_block_bytes=p.shared_memory_per_block_optin,
        shared_reserved_per_block=1024 if p.major >= 8 else 0,
    )


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    block: int
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # resident warps / the SM's maximum
    limiter: str  # "registers", "shared memory", "threads", "blocks", or "does not fit"
    by: dict  # each limit's own quotient


def occupancy(registers: int, block: int, limits: SMLimits = HOPPER, shared_bytes: int = 0) -> Occupancy:
    """Resident blocks and warps per SM for a kernel using `registers` per thread and
    `shared_bytes` (static + dynamic) per block, launched with `block` threads."""
    warps = -(-block // 32)
    regs_per_warp = _round_up(max(registers, 1) * 32, limits.register_granularity)
    by = {
        "registers": limits.registers // (regs_per_warp * warps),
        "threads": limits.max_threads // (warps * 32),
        "blocks": limits.max_blocks,
    }
    smem = _round_up(shared_bytes + limits.shared_reserved_per_block, limits.shared_granularity)
    by["shared memory"] = limits.shared_bytes // smem if smem else limits.max_blocks
    blocks = min(by.values())
    order = ["threads", "blocks", "registers", "shared memory"]  # on a tie, name the SM's own maximum
    limiter = "does not fit" if blocks == 0 else min(order, key=lambda k: (by[k], order.index(k)))
    max_warps = limits.max_threads // 32
    return Occupancy(block, blocks, blocks * warps, blocks * warps / max_warps, limiter, by)


def largest_block(registers: int, limits: SMLimits = HOPPER, shared_per_thread: int = 0,
                  shared_bytes: int = 0) -> int:
    """The largest multiple of 32 (at most 1024) whose block fits on an SM at all."""
    best = 0
    for block in range(32, 1025, 32):
        if occupancy(registers, block, limits, shared_bytes + shared_per_thread * block).blocks_per_sm:
            best = block
    return best
