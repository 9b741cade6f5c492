"""The one timing primitive: CUDA events around launches, the L2 flushed by reading before each,
and the statistics of the times (median and quartiles).

Everything gemvlab times builds on :func:`event_times`: the round-robin comparisons
(:func:`time_round_robin`, for the stage table and the shape sweeps), KernelBench's mean of 100
trials (gemvlab.cli.kernelbench), the cost of a call from an idle GPU (gemvlab.measure.overhead)
and the pointer chase's one long launch (gemvlab.measure.latency).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

import torch

MIN_LAUNCHES = 20
TIMER = "CUDA events around each launch, L2 flushed before it by reading 256 MiB"
FLUSH_BYTES = 256 * 2**20
def bytes_moved(M: int, K: int) -> int:
    """The fewest bytes a GEMV moves: A and B read once, C written once, float32."""
    return 4 * (M * K + K + M)


def gbps(nbytes: int, ms: float) -> float:
    """Bandwidth in GB/s of `nbytes` moved in `ms` milliseconds."""
    return nbytes / (ms * 1e-3) / 1e9


_flush: dict = {}


def flush_l2() -> None:
    """Evict the L2 (60 MiB on an H200) by reading a 256 MiB buffer, so that a launch finds none
    of its inputs cached by the launch before it. Reading, not writing (triton.testing.do_bench
    writes zeros): after a write the L2 holds dirty lines, and writing them back to memory happens
    during the timed kernel; after a read it holds clean lines, which are dropped for free
    (docs/design/measurement.md)."""
    device = torch.cuda.current_device()
    if device not in _flush:
        _flush[device] = (torch.ones(FLUSH_BYTES // 4, device="cuda"), torch.empty((), device="cuda"))
    buf, out = _flush[device]
    torch.sum(buf, dim=0, out=out)


def event_times(fn, n: int, flush: bool = True, idle: bool = False) -> list[float]:
    """ms of each of n calls of fn, each between two CUDA events. `flush`: the L2 is flushed before
    each call, outside the events. `idle`: the host waits for the GPU before each call, so the GPU
    is idle when the start event is recorded and the host's time to reach the GPU is inside the
    events (what a call costs as a user sees it); otherwise calls are queued back to back and the
    events time the GPU's work alone."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for start, end in events:
        if flush:
            flush_l2()
        if idle:
            torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


@dataclass
class Timing:
    ms: float  # median
    min_ms: float
    max_ms: float
    q25_ms: float
    q75_ms: float
    n: int  # timed launches
    timer: str
    mean_ms: float = 0.0

    @classmethod
    def of(cls, times: list[float], timer: str = TIMER) -> Timing:
        q25, q75 = (times[0], times[0]) if len(times) < 2 else statistics.quantiles(times, n=4)[0::2]
        return cls(statistics.median(times), min(times), max(times), q25, q75, len(times), timer,
                   statistics.fmean(times))

    def as_dict(self) -> dict:
        out = asdict(self)
        out.pop("mean_ms")  # the results schema keeps medians and quartiles
        return out


def time_round_robin(fns: dict, rounds: int = 1, warmup_ms: float = 25, rep_ms: float = 100,
                     min_launches: int = MIN_LAUNCHES, budget_s: float = 60.0) -> dict:
    """name -> Timing for each zero-argument launch function in `fns`, timed in `rounds` rounds
    that visit every function in turn, so that slow drift of the GPU (clocks, temperature) falls
    on all of them alike.

    Each function is warmed up (`warmup_ms` of launches, at least one) and then gets at least
    `min_launches` timed launches, or as many as fill `rep_ms`, spread over the rounds; each launch
    is timed alone (event_times, L2 flushed). `budget_s` bounds very slow kernels: then fewer
    launches are timed (at least 3) and Timing.n says how many.
    """
    est, wanted = {}, {}
    for name, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        est[name] = max(event_times(fn, 1, flush=False)[0], 1e-3)
        fill = max(min_launches, int(rep_ms / est[name]))
        wanted[name] = fill if est[name] * fill <= budget_s * 1e3 else max(3, int(budget_s * 1e3 / est[name]))
    times = {name: [] for name in fns}
    for r in range(rounds):
        for name, fn in fns.items():
            for _ in range(min(int(warmup_ms / rounds / est[name]), 1000)):  # warm-up, not timed
                fn()
            goal = -(-wanted[name] * (r + 1) // rounds)  # spread the launches over the rounds
            times[name] += event_times(fn, goal - len(times[name]))
    return {name: Timing.of(t) for name, t in times.items()}


def time_launches(fn, **timing) -> Timing:
    """Median and spread of at least MIN_LAUNCHES event-timed launches of fn (time_round_robin)."""
    return time_round_robin({"fn": fn}, **timing)["fn"]
