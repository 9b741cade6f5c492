"""Checking and timing a stage honestly.

Correctness: fresh ``torch.rand`` inputs (never zeros: zeros hide unwritten outputs), the
output filled with NaN before the launch (an element the kernel forgets stays NaN and fails),
and the relative 2-norm error against a float64 reference.

Timing: warm-up first, then at least 20 launches each timed alone with CUDA events, the L2
flushed before each one by reading a buffer four times its size (see flush_l2 for why not
triton.testing.do_bench's flush), reported as median, min, max and quartiles. The same run
times torch.matmul (cuBLAS) and the read ceiling, so every stage is compared with its peers as
ratios measured minutes apart, never with numbers from elsewhere.
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


TIMER = "CUDA events around each launch, L2 flushed before it by reading 256 MiB"
FLUSH_BYTES = 256 * 2**20
_flush: dict = {}


def flush_l2() -> None:
    """Evict the L2 (60 MiB on an H200) by reading a 256 MiB buffer, so that a launch finds
    none of its inputs cached by the launch before it.

    Why read rather than write: triton.testing.do_bench flushes by writing 256 MiB of zeros. The
    L2 then holds dirty lines, and writing them back to memory happens during the timed kernel:
    on the H200 that added 8 to 12 us to most kernels (10 to 14% at M = K = 8192) and about
    40 us to torch.matmul and to __ldcs loads at the headline shape (tools/explore/h200-round3.txt,
    timers "zero" and "read"). After a read the L2 holds clean lines, which are dropped for free:
    every gemvlab kernel timed both ways then matched launches with no flush at all to within
    0.3% (tools/explore/h200-round2.txt, timers "read" and "none").
    """
    device = torch.cuda.current_device()
    if device not in _flush:
        _flush[device] = (torch.ones(FLUSH_BYTES // 4, device="cuda"), torch.empty((), device="cuda"))
    buf, out = _flush[device]
    torch.sum(buf, dim=0, out=out)


def _timed_launches(fn, n: int) -> list[float]:
    """n launches, each with the L2 flushed first and CUDA events recorded around the launch
    alone (the flush runs before the start event), in ms."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for start, end in events:
        flush_l2()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def time_round_robin(fns: dict, rounds: int = 1, warmup_ms: float = 25, rep_ms: float = 100,
                     min_launches: int = MIN_LAUNCHES, budget_s: float = 60.0) -> dict:
    """name -> Timing for each zero-argument launch function in `fns`, timed in `rounds` rounds
    that visit every function in turn, so that slow drift of the GPU (clocks, temperature)
    falls on all of them alike.

    Each function is warmed up (`warmup_ms` of launches, at least one) and then gets at least
    `min_launches` timed launches, or as many as fill `rep_ms`, spread over the rounds; each
    launch is timed alone with CUDA events, the L2 flushed before it (see flush_l2). `budget_s`
    bounds very slow kernels: then fewer launches are timed (at least 3) and Timing.n says how many.
    """
    est, wanted = {}, {}
    for name, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        est[name] = max(_one_launch_ms(fn), 1e-3)
        fill = max(min_launches, int(rep_ms / est[name]))
        wanted[name] = fill if est[name] * fill <= budget_s * 1e3 else \
            max(3, int(budget_s * 1e3 / est[name]))
    times = {name: [] for name in fns}
    for r in range(rounds):
        for name, fn in fns.items():
            for _ in range(min(int(warmup_ms / rounds / est[name]), 1000)):  # warm-up, not timed
                fn()
            goal = -(-wanted[name] * (r + 1) // rounds)  # spread the launches over the rounds
            times[name] += _timed_launches(fn, goal - len(times[name]))
    out = {}
    for name, t in times.items():
        q25, q75 = _quartiles(t)
        out[name] = Timing(statistics.median(t), min(t), max(t), q25, q75, len(t), TIMER)
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


#: The read-only passes tried for the read ceiling; the fastest is the ceiling. (threads per
#: block, blocks per SM) stride a grid over A; (threads per block, 0) read one row per block.
CEILING_CONFIGS = ((1024, 2), (512, 4), (1024, 0), (512, 0), (256, 0), (64, 0))


def ceiling_configs(M: int, K: int) -> list[tuple[int, int]]:
    """The CEILING_CONFIGS that apply to an M x K matrix: a row per block needs K % 4 == 0 and
    rows of at least one float4 per thread."""
    return [(b, per_sm) for b, per_sm in CEILING_CONFIGS if per_sm or (K % 4 == 0 and K // 4 >= b)]


def _ceiling_row(M, K, t: Timing, block, grid) -> dict:
    return dict(kind="read_ceiling", stage="read ceiling", number=None, M=M, K=K, block=block,
                variant=grid, **t.as_dict(), GBps=gbps(4 * M * K, t.ms), rel_err=None, status="ok")


def measure_read_ceiling(A, **timing) -> dict:
    """The fastest float4 read-only pass over A, over the ceiling_configs. GB/s counts A's bytes.
    (`variant` holds the grid: 0 for a row per block, else the blocks striding over A.)"""
    M, K = A.shape
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    sink = torch.empty(1, device=A.device)
    fns = {(block, sms * per_sm): read_ceiling_launcher(A, block, sms * per_sm, sink)
           for block, per_sm in ceiling_configs(M, K)}
    timed = time_round_robin(fns, **timing)
    (block, grid), t = min(timed.items(), key=lambda kv: kv[1].ms)
    return _ceiling_row(M, K, t, block, grid)


def compare(A, B, configs: list, ref=None, rounds: int = 5, peers: bool = True, gemv: bool = False,
            **timing) -> list[dict]:
    """Stages at the given (stage, block, variant) configurations, with `gemv` the dispatcher, and
    with `peers` torch.matmul and the read ceiling, checked against float64 and then timed
    round-robin in `rounds` rounds: the fair way to rank versions whose times differ by a percent
    or two. Stage 4's step (warp_shuffle_l1) may be among the configurations."""
    M, K = A.shape
    ref = reference(A, B) if ref is None else ref
    fns, rows = {}, {}
    for stage, block, variant in configs:
        st = get_stage(stage)
        err = check(st, A, B, block, variant, ref)
        key = st.name if len({get_stage(c[0]).name for c in configs}) == len(configs) else (st.name, block, variant)
        fns[key], _ = prepare(A, B, st, block, variant)
        rows[key] = (st, block, variant, err)
    if gemv:
        from . import dispatch

        launch = dispatch.launcher(A, B)
        C = launch(A, B, torch.full((M, 1) if B.dim() == 2 else (M,), float("nan"), device=A.device))
        fns["gemv"] = lambda: launch(A, B)
        rows["gemv"] = (launch.plan.name, relative_error(C, ref))
    if peers:
        fns["torch.matmul"] = lambda: torch.matmul(A, B)
        rows["torch.matmul"] = relative_error(torch.matmul(A, B), ref)
        if A.data_ptr() % 16 == 0:
            pick = measure_read_ceiling(A, warmup_ms=5, rep_ms=20)  # which grid reads fastest
            fns["read ceiling"] = read_ceiling_launcher(A, pick["block"], pick["variant"])
            rows["read ceiling"] = (pick["block"], pick["variant"])
    timed = time_round_robin(fns, rounds=rounds, **timing)
    out = []
    for name, t in timed.items():
        if name == "gemv":
            chosen, err = rows[name]
            out.append(dict(kind="dispatch", stage="gemv", number=None, M=M, K=K, block=None, variant=None,
                            **t.as_dict(), GBps=gbps(bytes_moved(M, K), t.ms), rel_err=err, status="ok",
                            chosen=chosen))
        elif name == "torch.matmul":
            out.append(_torch_row(M, K, t, rows[name]))
        elif name == "read ceiling":
            out.append(_ceiling_row(M, K, t, *rows[name]))
        else:
            st, block, variant, err = rows[name]
            out.append(_stage_row(st, M, K, block, variant, t, err))
    return out


def fit_shape(M: int, K: int, device=None, fraction: float = 0.4, free_bytes: int | None = None) -> tuple[int, int]:
    """(M, K) with K halved until A fits in `fraction` of the GPU's free memory (`free_bytes`, or
    what the GPU reports). The rest is for B, C, the float64 reference (computed in chunks) and
    the L2 flush buffer. On a 15 GB T4 the headline's 8 GiB A becomes M = 2048, K = 524,288."""
    free = torch.cuda.mem_get_info(device)[0] if free_bytes is None else free_bytes
    while 4 * M * K > fraction * free and K > 1024:
        K //= 2
    return M, K
