"""Memory latency, measured: the one number Little's law needs besides bandwidth.

``measure()`` times one thread chasing pointers through a buffer (memory_latency.cu): each
load's address comes from the previous load, so one load is in flight and the time per step is
the latency. Run on a GPU by ``python -m gemvlab record`` (and by the notebooks' live setup), it
fills ``machine.memory`` of the results file, so that the model (gemvlab.model) runs anywhere.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..native import launch as native
from ..native.kernel import Kernel
from .timing import event_times

#: One thread (variant 0) or one warp (variant 1) chasing pointers; A is the chain, M its start, K the steps.
MEMORY_LATENCY = Kernel(name="memory_latency", source_path=Path(__file__).with_name("memory_latency.cu"),
                        launcher="launch_pointer_chase", symbol="pointer_chase")
LINE = 128  # bytes: one chain element per 128-byte line, so every step is a new line


def _fit(nbytes: int, device) -> int:
    """`nbytes`, at most 30% of the GPU's free memory (the chain's index tensors need room too),
    in whole lines."""
    return min(nbytes, int(torch.cuda.mem_get_info(device)[0] * 0.3)) // LINE * LINE


def _chain(nbytes: int, device, seed: int = 0) -> torch.Tensor:
    """A buffer of `nbytes` whose 128-byte lines form one random cycle: buf[line * 16] holds
    the index of the next line's first element."""
    lines = nbytes // LINE
    per_line = LINE // 8
    g = torch.Generator(device=device).manual_seed(seed)
    order = torch.randperm(lines, device=device, generator=g)
    nxt = torch.empty(lines, dtype=torch.int64, device=device)
    nxt[order] = torch.roll(order, -1)
    buf = torch.zeros(lines * per_line, dtype=torch.int64, device=device)
    buf[::per_line] = nxt * per_line
    return buf


def _timed_chase(buf, steps: int, out, warp: bool = False) -> float:
    """ms for one launch of `steps` dependent loads (CUDA events around the one launch, no L2
    flush: the chain is its own), by one thread, or with `warp` by 32 lanes at once, each load
    instruction reading 32 unrelated lines."""
    fn = MEMORY_LATENCY.function()
    stream = native.stream(torch.cuda.current_device())
    return event_times(lambda: fn.check(fn(buf.data_ptr(), 0, out.data_ptr(), 0, steps, 1, int(warp), stream)),
                       1, flush=False)[0]


def chase(nbytes: int, steps: int = 100_000, device="cuda") -> dict:
    """ns per dependent load through a buffer of `nbytes`, and the SM clock the kernel ran at."""
    buf = _chain(nbytes, device)
    out = torch.zeros(2, dtype=torch.int64, device=device)
    _timed_chase(buf, steps // 10, out)  # warm-up: module load, page tables
    ms = _timed_chase(buf, steps, out)
    cycles = int(out[1].item())
    return {"bytes": nbytes, "steps": steps, "ns": ms * 1e6 / steps, "cycles": cycles / steps,
            "sm_clock_mhz": cycles / (ms * 1e3)}


def measure(device="cuda", far_bytes: int = 8 * 2**30) -> dict:
    """Latencies for results.machine.memory: DRAM (random lines in a buffer of 4x the L2, at
    least 256 MiB), far DRAM (random lines over `far_bytes`, the size of A at the headline shape:
    most loads then also miss the GPU's address-translation caches, as the naive stage's warps
    do, whose 32 lanes read 32 rows 4 MiB apart), the L2, and the launch's own cost (the event
    time of a launch that does no work)."""
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    far_bytes = _fit(far_bytes, device)
    dram = chase(max(4 * l2, 256 * 2 ** 20), device=device)
    far = chase(far_bytes, steps=50_000, device=device)
    torch.cuda.empty_cache()
    in_l2 = chase(l2 // 4, device=device)
    buf, out = _chain(2**20, device), torch.zeros(2, dtype=torch.int64, device=device)
    empty = sorted(_timed_chase(buf, 0, out) * 1e3 for _ in range(21))  # no loads at all: us
    warp = warp_chase(far_bytes, device=device)  # last: its lanes' lines must not warm the chases above
    return {"dram_latency_ns": round(dram["ns"], 1), "far_latency_ns": round(far["ns"], 1),
            "warp_latency_ns": warp["warp_latency_ns"],
            "far_bytes": far_bytes, "l2_latency_ns": round(in_l2["ns"], 1),
            "dram_latency_cycles": round(dram["cycles"], 1), "sm_clock_mhz": round(dram["sm_clock_mhz"]),
            "empty_launch_us": round(empty[len(empty) // 2], 2),
            "method": "one thread chasing pointers through random 128-byte lines, __ldcg loads, "
                      f"{dram['steps']} steps; DRAM: {dram['bytes'] >> 20} MiB buffer, L2: {in_l2['bytes'] >> 20} MiB"}


def warp_chase(nbytes: int = 8 * 2**30, steps: int = 20_000, device="cuda") -> dict:
    """ns per step when a whole warp chases at once: each step is one load instruction whose
    32 lanes read 32 unrelated 128-byte lines of a buffer of `nbytes` (as a naive warp's loads of
    32 rows do), against one thread alone on the same buffer."""
    nbytes = _fit(nbytes, device)
    buf = _chain(nbytes, device)
    out = torch.zeros(32, dtype=torch.int64, device=device)
    _timed_chase(buf, steps // 10, out, warp=True)
    warp_ms = _timed_chase(buf, steps, out, warp=True)
    one_ms = _timed_chase(buf, steps, out)
    return {"warp_latency_ns": round(warp_ms * 1e6 / steps, 1), "thread_latency_ns": round(one_ms * 1e6 / steps, 1),
            "bytes": nbytes, "steps": steps,
            "method": "one warp, each lane at its own place in a random chain of 128-byte lines: each step is "
                      "one load instruction with 32 unrelated addresses"}
