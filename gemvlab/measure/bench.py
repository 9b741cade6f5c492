"""Checking and timing kernels honestly, peers in the same run.

A stage (or the dispatcher) is checked against float64 on NaN-poisoned output (gemvlab.measure
.accuracy), then timed round-robin beside torch.matmul (cuBLAS) and the read ceiling
(gemvlab.measure.timing, .ceiling), so every kernel is compared with its peers as ratios measured
minutes apart, never with numbers from elsewhere.
"""

from __future__ import annotations

import torch

from ..dispatch import launch as dispatch
from ..stages import get_stage
from ..stages import launch as stages
from . import ceiling
from .accuracy import poisoned, reference, relative_error
from .timing import Timing, bytes_moved, gbps, time_launches, time_round_robin


def check(stage, A, B, block=None, variant=None, ref=None) -> float:
    """Relative error of one stage on A, B, with the output poisoned with NaN first."""
    ref = reference(A, B) if ref is None else ref
    C = stages.run(A, B, stage, block, variant, out=poisoned(A.shape[0], A.device))
    torch.cuda.synchronize()
    return relative_error(C, ref)


def stage_row(st, M, K, block, variant, t: Timing, err) -> dict:
    return dict(kind="stage", stage=st.name, number=st.number, M=M, K=K, block=block,
                variant=variant if st.variant_name else None, **t.as_dict(),
                GBps=gbps(bytes_moved(M, K), t.ms), rel_err=err, status="ok")


def torch_row(M, K, t: Timing, err) -> dict:
    return dict(kind="torch_matmul", stage="torch.matmul", number=None, M=M, K=K, block=None,
                variant=None, **t.as_dict(), GBps=gbps(bytes_moved(M, K), t.ms), rel_err=err, status="ok")


def measure_stage(stage, A, B, block=None, variant=None, ref=None, **timing) -> dict:
    """One row: a stage's relative error and timing at one configuration."""
    st = get_stage(stage)
    block = st.default_block if block is None else block
    variant = st.default if variant is None else variant
    M, K = A.shape
    err = check(st, A, B, block, variant, ref)
    launch, _ = stages.prepare(A, B, st, block, variant)  # checks once; times the launches alone
    return stage_row(st, M, K, block, variant, time_launches(launch, **timing), err)


def compare(A, B, configs: list, ref=None, rounds: int = 5, peers: bool = True, gemv: bool = False,
            **timing) -> list[dict]:
    """Stages at the given (stage, block, variant) configurations, with `gemv` the dispatcher, and
    with `peers` torch.matmul and the read ceiling, checked against float64 and then timed
    round-robin in `rounds` rounds: the fair way to rank versions whose times differ by a percent
    or two."""
    M, K = A.shape
    ref = reference(A, B) if ref is None else ref
    fns, rows = {}, {}
    unique = len({get_stage(c[0]).name for c in configs}) == len(configs)
    for stage, block, variant in configs:
        st = get_stage(stage)
        key = st.name if unique else (st.name, block, variant)
        err = check(st, A, B, block, variant, ref)
        fns[key], _ = stages.prepare(A, B, st, block, variant)
        rows[key] = (st, block, variant, err)
    if gemv:
        launch = dispatch.launcher(A, B)
        C = launch(A, B, poisoned(M, A.device, B.dim() == 2))
        fns["gemv"] = lambda: launch(A, B)
        rows["gemv"] = (launch.plan.name, relative_error(C, ref))
    if peers:
        fns["torch.matmul"] = lambda: torch.matmul(A, B)
        rows["torch.matmul"] = relative_error(torch.matmul(A, B), ref)
        found = ceiling.fastest(A)  # which grid reads fastest
        if found:
            fns["read ceiling"], pick = found
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
            out.append(torch_row(M, K, t, rows[name]))
        elif name == "read ceiling":
            out.append(ceiling.row(M, K, t, *rows[name]))
        else:
            st, block, variant, err = rows[name]
            out.append(stage_row(st, M, K, block, variant, t, err))
    return out


def fit_shape(M: int, K: int, device=None, fraction: float = 0.4, free_bytes: int | None = None) -> tuple[int, int]:
    """(M, K) with K halved until A fits in `fraction` of the GPU's free memory (`free_bytes`, or
    what the GPU reports). The rest is for B, C, the float64 reference (computed in chunks) and
    the L2 flush buffer. On a 15 GB T4 the headline's 8 GiB A becomes M = 2048, K = 524,288."""
    free = torch.cuda.mem_get_info(device)[0] if free_bytes is None else free_bytes
    while 4 * M * K > fraction * free and K > 1024:
        K //= 2
    return M, K
