"""Launching one stage, exactly as the notebooks teach it, after checking everything.

    C = gemvlab.gemv(A, B, "warp_shuffle", block=256)   # what this module does

Every input goes through gemvlab.checks first (dtype, shape, device, layout, block size, variant,
float4 alignment, grid size, whether a block of this size fits on an SM); a bad one raises
GemvInputError naming the fix, and no kernel runs.
"""

from __future__ import annotations

import torch

from .. import checks
from ..gpu import occupancy
from ..native import launch as native
from . import Stage, get_stage

_limits: dict = {}


def check_fits(st: Stage, block: int, variant: int, limits: occupancy.SMLimits) -> None:
    """Raise before launching a block that cannot fit on an SM (too many registers or shared memory)."""
    if st.occupancy(block, variant, limits).blocks_per_sm == 0:
        res = st.resources(variant)
        biggest = occupancy.largest_block(res.registers, limits, st.shared_per_thread, res.shared_bytes)
        raise checks.GemvInputError(
            f"{st.kernel_name(variant)} uses {res.registers} registers per thread: a block of {block} "
            f"threads needs more registers than an SM has ({limits.registers}), so the launch would fail "
            f"with 'too many resources requested for launch'. Use block <= {biggest}"
            + (" or fewer rows per block" if st.grid_rule == "block per variant rows" else ""))


def check_inputs(A, B, stage, block: int, variant: int, out=None, require_cuda: bool = True) -> tuple[int, int]:
    """Every check for one launch, in order; returns (M, K). Needs no GPU."""
    st = get_stage(stage)
    M, K, _ = checks.operands(A, B, any_row_stride=False, require_cuda=require_cuda)
    checks.check_block(block, st.block_rule, st.name)
    if st.variant_name:
        checks.check_variant(variant, st.variants, st.variant_name, st.name)
    checks.check_out(out, M, A.device)
    if M and K:
        if st.float4:
            checks.check_alignment(A, B, K)
        checks.check_grid(st.grid(M, block, variant), st.name)
    return M, K


def _device_index(device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


def prepare(A, B, stage="warp_shuffle", block: int | None = None, variant: int | None = None, out=None):
    """Check everything once and return (launch, C): calling launch() runs the kernel into C.

    This is what gemv() does; the benchmarks time launch() alone, so Python's checking is not
    counted as kernel time. M = 0 or K = 0 give a launch() that launches nothing.
    """
    st = get_stage(stage)
    block = st.default_block if block is None else block
    variant = st.default if variant is None else variant
    M, K = check_inputs(A, B, st, block, variant, out)
    C = torch.empty(M, device=A.device, dtype=torch.float32) if out is None else out.view(M)
    if M == 0:
        launch = lambda: None
    elif K == 0:
        launch = C.zero_  # an empty sum
    else:
        index = _device_index(A.device)
        if index not in _limits:
            _limits[index] = occupancy.limits_of_device(index)
        check_fits(st, block, variant, _limits[index])
        fn = st.function()
        what = st.kernel_name(variant)
        args = (A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, block, variant, native.stream(index))

        def launch():
            fn.check(fn(*args), what)

    return launch, (C.view(M, 1) if B.dim() == 2 else C)


def run(A, B, stage, block: int | None = None, variant: int | None = None, out=None):
    """C = A @ B with one stage's kernel (see gemvlab.gemv)."""
    launch, C = prepare(A, B, stage, block, variant, out)
    launch()
    return C


def pad_k(A, B):
    """Copies of A and B with K padded by zeros to a multiple of 4, for the float4 stages.

    Zeros add nothing to a dot product, so the result is unchanged; the price is a copy of A.
    """
    _M, K, _ = checks.operands(A, B, any_row_stride=True, require_cuda=False)
    pad = -K % 4
    A2 = torch.nn.functional.pad(A, (0, pad))
    B2 = torch.nn.functional.pad(B.reshape(K), (0, pad))
    return A2, (B2.view(-1, 1) if B.dim() == 2 else B2)
