"""Checking and timing a stage honestly.

Correctness: fresh ``torch.rand`` inputs (never zeros: zeros hide unwritten outputs), the
output filled with NaN before the launch (an element the kernel forgets stays NaN and fails),
and the relative 2-norm error against a float64 reference.

Timing: ``triton.testing.do_bench`` (CUDA events around each launch, the L2 flushed between
launches, warm-up first), at least 20 timed launches, reported as median, min, max and
quartiles. The same run times torch.matmul (cuBLAS) and the read ceiling, so every stage is
compared with its peers as ratios measured minutes apart, never with numbers from elsewhere.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass

import torch

from .kernels import gemv, get_stage, prepare, read_ceiling_launcher

MIN_LAUNCHES = 20


def bytes_moved(M: int, K: int) -> int:
    """The fewest bytes a GEMV moves: A and B read once, C written once, float32."""
    return 4 * (M * K + K + M)


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def random_inputs(M: int, K: int, device="cuda", seed: int | None = None, b_2d: bool = True):
    """Fresh uniform [0, 1) inputs (torch.rand): A (M, K) and B (K, 1) (or (K,))."""
    g = torch.Generator(device=device)
    g.manual_seed(seed if seed is not None else time.time_ns() % 2**63)
    A = torch.rand(M, K, device=device, generator=g)
    B = torch.rand((K, 1) if b_2d else (K,), device=device, generator=g)
    return A, B


def reference(A: torch.Tensor, B: torch.Tensor, chunk_bytes: int = 2**31) -> torch.Tensor:
    """A @ B in float64, (M,), computed a block of rows at a time so that it never needs
    a float64 copy of all of A (16 GiB at the headline shape)."""
    M, K = A.shape
    b = B.reshape(K).double()
    rows = max(1, chunk_bytes // max(1, 8 * K))
    out = torch.empty(M, dtype=torch.float64, device=A.device)
    for r in range(0, M, rows):
        out[r:r + rows] = A[r:r + rows].double() @ b
    return out


def relative_error(C: torch.Tensor, ref: torch.Tensor) -> float:
    """||C - ref|| / ||ref|| in float64; inf when any element is NaN (never written)."""
    c = C.reshape(-1).double()
    if torch.isnan(c).any():
        return float("inf")
    denom = torch.linalg.vector_norm(ref).item()
    diff = torch.linalg.vector_norm(c - ref).item()
    return diff / denom if denom else diff


def check(stage, A, B, block=None, variant=None, ref=None) -> float:
    """Relative error of one stage on A, B, with the output poisoned with NaN first."""
    ref = reference(A, B) if ref is None else ref
    out = torch.full((A.shape[0],), float("nan"), device=A.device)
    C = gemv(A, B, stage, block, variant, out=out)
    torch.cuda.synchronize()
    return relative_error(C, ref)


@dataclass
class Timing:
    ms: float  # median
    min_ms: float
    max_ms: float
    q25_ms: float
    q75_ms: float
    n: int  # timed launches
    timer: str

    def as_dict(self) -> dict:
        return asdict(self)


def _quartiles(times: list[float]) -> tuple[float, float]:
    if len(times) < 2:
        return times[0], times[0]
    q = statistics.quantiles(times, n=4)
    return q[0], q[2]


def _one_launch_ms(fn) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def time_round_robin(fns: dict, rounds: int = 1, warmup_ms: float = 25, rep_ms: float = 100,
                     min_launches: int = MIN_LAUNCHES, budget_s: float = 60.0) -> dict:
    """name -> Timing for each zero-argument launch function in `fns`, timed in `rounds` rounds
    that visit every function in turn, so that slow drift of the GPU (clocks, temperature)
    falls on all of them alike. Each gets at least `min_launches` timed launches in all.

    Uses triton.testing.do_bench (CUDA events; L2 flushed before every launch) when triton is
    installed, else torch.utils.benchmark. `budget_s` bounds very slow kernels: then fewer
    launches are timed (at least 3) and Timing.n says how many.
    """
    try:
        from triton.testing import do_bench
    except ImportError:
        do_bench = None
    est, wanted = {}, {}
    for name, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        est[name] = max(_one_launch_ms(fn), 1e-3)
        wanted[name] = min_launches if est[name] * min_launches <= budget_s * 1e3 else \
            max(3, int(budget_s * 1e3 / est[name]))
    times = {name: [] for name in fns}
    for r in range(rounds):
        for name, fn in fns.items():
            goal = -(-wanted[name] * (r + 1) // rounds)  # spread the launches over the rounds
            while len(times[name]) < goal:
                need = goal - len(times[name])
                if do_bench is not None:
                    rep = max(rep_ms / rounds, (need + 0.5) * est[name])
                    times[name] += list(do_bench(fn, warmup=max(warmup_ms / rounds, est[name]), rep=rep,
                                                 return_mode="all"))
                else:
                    from torch.utils import benchmark

                    timer = benchmark.Timer(stmt="fn(); torch.cuda.synchronize()",
                                            globals={"fn": fn, "torch": torch})
                    # timeit(n) reports one mean over n runs; one run per call keeps every launch
                    times[name] += [timer.timeit(1).raw_times[0] * 1e3 for _ in range(need)]
    used = "triton.testing.do_bench" if do_bench is not None else "torch.utils.benchmark"
    out = {}
    for name, t in times.items():
        q25, q75 = _quartiles(t)
        out[name] = Timing(statistics.median(t), min(t), max(t), q25, q75, len(t), used)
    return out


def time_launches(fn, **timing) -> Timing:
    """Median and spread of at least 20 event-timed launches of fn (see time_round_robin)."""
    return time_round_robin({"fn": fn}, **timing)["fn"]


def _stage_row(st, M, K, block, variant, t: Timing, err) -> dict:
    return dict(kind="stage", stage=st.name, number=st.number, M=M, K=K, block=block,
                variant=variant if st.variant_name else None, **t.as_dict(),
                GBps=gbps(bytes_moved(M, K), t.ms), rel_err=err, status="ok")


def measure_stage(stage, A, B, block=None, variant=None, ref=None, **timing) -> dict:
    """One row: a stage's relative error and timing at one configuration."""
    st = get_stage(stage)
    block = st.default_block if block is None else block
    variant = st.default_variant if variant is None else variant
    M, K = A.shape
    err = check(st, A, B, block, variant, ref)
    launch, _ = prepare(A, B, st, block, variant)  # checks once; times the launches alone
    return _stage_row(st, M, K, block, variant, time_launches(launch, **timing), err)


def _torch_row(M, K, t: Timing, err) -> dict:
    return dict(kind="torch_matmul", stage="torch.matmul", number=None, M=M, K=K, block=None,
                variant=None, **t.as_dict(), GBps=gbps(bytes_moved(M, K), t.ms), rel_err=err, status="ok")


def measure_torch(A, B, ref=None, **timing) -> dict:
    """torch.matmul (cuBLAS's GEMV) on the same inputs, in the same run."""
    M, K = A.shape
    ref = reference(A, B) if ref is None else ref
    err = relative_error(torch.matmul(A, B), ref)
    return _torch_row(M, K, time_launches(lambda: torch.matmul(A, B), **timing), err)


#: (threads per block, blocks per SM) tried for the read ceiling; the fastest is the ceiling.
CEILING_CONFIGS = ((512, 2), (512, 4), (256, 8), (1024, 2))


def _ceiling_row(M, K, t: Timing, block, grid) -> dict:
    return dict(kind="read_ceiling", stage="read ceiling", number=None, M=M, K=K, block=block,
                variant=grid, **t.as_dict(), GBps=gbps(4 * M * K, t.ms), rel_err=None, status="ok")


def measure_read_ceiling(A, **timing) -> dict:
    """The fastest float4 read-only pass over A, over a few grid shapes. GB/s counts A's bytes.
    (`variant` holds the grid size in blocks.)"""
    M, K = A.shape
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    sink = torch.empty(1, device=A.device)
    fns = {(block, sms * per_sm): read_ceiling_launcher(A, block, sms * per_sm, sink)
           for block, per_sm in CEILING_CONFIGS}
    timed = time_round_robin(fns, **timing)
    (block, grid), t = min(timed.items(), key=lambda kv: kv[1].ms)
    return _ceiling_row(M, K, t, block, grid)


def compare(A, B, configs: list, ref=None, rounds: int = 5, peers: bool = True, **timing) -> list[dict]:
    """Stages at the given (stage, block, variant) configurations, and with `peers` torch.matmul
    and the read ceiling, checked against float64 and then timed round-robin in `rounds` rounds:
    the fair way to rank versions whose times differ by a percent or two."""
    M, K = A.shape
    ref = reference(A, B) if ref is None else ref
    fns, rows = {}, {}
    for stage, block, variant in configs:
        st = get_stage(stage)
        err = check(st, A, B, block, variant, ref)
        fns[st.name], _ = prepare(A, B, st, block, variant)
        rows[st.name] = (st, block, variant, err)
    if peers:
        fns["torch.matmul"] = lambda: torch.matmul(A, B)
        rows["torch.matmul"] = relative_error(torch.matmul(A, B), ref)
        if (M * K) % 4 == 0:
            pick = measure_read_ceiling(A, warmup_ms=5, rep_ms=20)  # which grid reads fastest
            fns["read ceiling"] = read_ceiling_launcher(A, pick["block"], pick["variant"])
            rows["read ceiling"] = (pick["block"], pick["variant"])
    timed = time_round_robin(fns, rounds=rounds, **timing)
    out = []
    for name, t in timed.items():
        if name == "torch.matmul":
            out.append(_torch_row(M, K, t, rows[name]))
        elif name == "read ceiling":
            out.append(_ceiling_row(M, K, t, *rows[name]))
        else:
            st, block, variant, err = rows[name]
            out.append(_stage_row(st, M, K, block, variant, t, err))
    return out


def fit_shape(M: int, K: int, device=None, fraction: float = 0.4) -> tuple[int, int]:
    """(M, K) with K halved until A fits in `fraction` of the GPU's free memory."""
    free, _ = torch.cuda.mem_get_info(device)
    while 4 * M * K > fraction * free and K > 1024:
        K //= 2
    return M, K
