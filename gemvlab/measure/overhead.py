"""What a call costs beyond its kernel, as a user sees it.

CUDA events around the whole ``gemvlab.gemv(A, B)`` call (checks, plan lookup, allocation,
launch), against events around the launch alone (the plan made beforehand). The GPU is idle
when each timed region starts (the L2 flush before it has finished), so time spent in Python
before the kernel reaches the GPU shows up between the events. The same for torch.matmul.

Timed from an idle GPU, a call's median time moves by tens of microseconds between runs, far
more than the Python it is meant to show (docs/design/measurement.md). So the three are sampled
in turn, one call each, and `added_us` is the median of the differences between a gemv call and
the launch alone timed just before it: each pair meets the GPU in about the same state.
"""

from __future__ import annotations

import statistics
import time

import torch

from ..api import gemv
from ..decode import launch as decode
from ..dispatch import launch as dispatch
from .accuracy import random_inputs
from .timing import event_times


def _host_us(fn, n: int) -> float:
    """Host time per call, launches queued back to back (the GPU never waits on Python here)."""
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return host


def measure(M: int = 4096, K: int = 4096, n: int = 200, dtype=None, vectors: int = 0) -> dict:
    """Median us of: the launch alone (the plan made beforehand; recorded as `kernel_us`), the
    whole gemv call, torch.matmul; and the host time of a call. `added_us` is the median of the
    paired differences, a gemv call minus the launch alone just before it. `dtype`, `vectors`: a
    decode call instead (W in that dtype, B as x.t() for an activation x of `vectors` rows)."""
    if dtype is None:
        A, B = random_inputs(M, K)
    else:
        A = torch.rand(M, K, device="cuda").to(dtype)
        B = torch.rand(vectors, K, device="cuda").to(dtype).t() if vectors else torch.rand(K, device="cuda").to(dtype)
    gemv(A, B)  # builds, loads and caches the plan: the first call is not what is measured
    launch = decode.launcher(A, B) if decode.takes(A, B) else dispatch.launcher(A, B)
    fns = {"kernel": lambda: launch(A, B), "gemv": lambda: gemv(A, B), "torch.matmul": lambda: torch.matmul(A, B)}
    for fn in fns.values():
        fn()
    times = {k: [] for k in fns}
    for _ in range(n):  # one call of each in turn: neighbours in time are compared
        for name, fn in fns.items():
            times[name] += [ms * 1e3 for ms in event_times(fn, 1, idle=True)]
    med = {k: statistics.median(v) for k, v in times.items()}
    paired = statistics.median(g - k for g, k in zip(times["gemv"], times["kernel"]))
    return {"M": M, "K": K, "dtype": str(A.dtype).removeprefix("torch."), "vectors": vectors, "kernel_us": med["kernel"], "gemv_us": med["gemv"], "torch_us": med["torch.matmul"],
            "added_us": paired, "host_us_per_call": _host_us(fns["gemv"], n),
            "torch_host_us_per_call": _host_us(fns["torch.matmul"], n), "n": len(times["gemv"]),
            "plan": launch.plan.name}
