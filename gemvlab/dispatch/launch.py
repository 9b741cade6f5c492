"""gemvlab.gemv(A, B) without a stage: check once per layout, plan, launch.

A repeated call finds its launch in a dictionary keyed by everything the plan depends on (shape,
strides, dtype, device, alignment), so it costs a lookup and one ctypes call: a few microseconds
of Python beside its kernel. The first call for a layout checks the inputs (gemvlab.checks), asks
the rule for a plan and builds the launch.
"""

from __future__ import annotations

import ctypes

import torch

from .. import checks
from ..decode import launch as decode
from ..gpu import device as gpu
from ..native import launch as native
from .kernels import KERNELS
from .plan import Plan
from .rule import choose

_plans: dict = {}


def _b_strided(B, K: int) -> bool:
    return K > 1 and B.stride(0) != 1  # gemv copies such a B (K floats) into a fresh, aligned one


def plan_for(A, B, require_cuda: bool = False) -> tuple[Plan, int]:
    """(the plan gemv uses for these A and B, A's row stride): on their GPU, or for CPU tensors on
    the recorded one. Checks the inputs first."""
    M, K, lda = checks.operands(A, B, any_row_stride=True, require_cuda=require_cuda)
    b_mod16 = 0 if _b_strided(B, K) else B.data_ptr() % 16
    return choose(M, K, lda, A.data_ptr() % 16, b_mod16, gpu.for_tensor(A.device)), lda


def make_launch(plan: Plan, lda: int, b_2d: bool, device, b_strided: bool = False):
    """launch(A, B, out=None) -> C for inputs already checked to match `plan` (any plan of a
    compiled variant: the tuning script times plans the rule would not choose)."""
    M, K = plan.M, plan.K
    index = device.index if device.index is not None else torch.cuda.current_device()
    out_shape = (M, 1) if b_2d else (M,)
    if plan.kernel in ("none", "zeros"):
        def launch(A, B, out=None):
            C = torch.empty(out_shape, device=device) if out is None else out
            return C.zero_() if plan.kernel == "zeros" else C

        launch.plan = plan
        return launch
    fn = KERNELS[plan.kernel].function()
    args = native.LaunchArgs(lda, M, K, plan.chunk, plan.splits, plan.block, plan.variant)
    args_address = ctypes.addressof(args)  # valid while launch.args (below) holds the struct
    partial_count = M * plan.splits if plan.splits > 1 else 0
    name = plan.name

    def launch(A, B, out=None):
        if b_strided:
            B = B.reshape(K).contiguous()  # a strided B: K floats copied, far fewer than A's M * K
        C = torch.empty(out_shape, device=device) if out is None else out
        P = torch.empty(partial_count, device=device) if partial_count else None
        code = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr() if partial_count else None, args_address,
                  native.stream(index))
        if code:
            fn.check(code, name)
        return C

    launch.plan = plan
    launch.args = args  # keeps the struct alive: the kernel reads it through args_address
    return launch


def launcher(A, B):
    """The launch gemv uses for A and B: from the cache when this (shape, strides, dtype, device,
    alignment) was seen before, else checked and planned now. Has a .plan."""
    try:
        key = native.layout_key(A, B)
    except AttributeError:  # not tensors: let the full check say what they are
        checks.operands(A, B, any_row_stride=True)
        raise
    launch = _plans.get(key)
    if launch is None:
        plan, lda = plan_for(A, B, require_cuda=True)
        launch = _plans[key] = make_launch(plan, lda, B.dim() == 2, A.device, _b_strided(B, plan.K))
    return launch


def check(A, B) -> None:
    """The checks gemv makes before planning (on any device, meta tensors too): what the custom op's
    fake implementation runs, so that torch.compile refuses bad inputs while tracing."""
    if decode.takes(A, B):
        checks.decode_operands(A, B, require_cuda=False)
    else:
        checks.operands(A, B, any_row_stride=True, require_cuda=False)


def run(A, B, out=None):
    """gemv without the autograd check: what the custom op (gemvlab.dispatch.ops) calls. bf16,
    fp16 and several vectors go to gemvlab.decode, float32 with one vector to the kernels here."""
    if decode.takes(A, B):
        return decode.run(A, B, out)
    launch = launcher(A, B)
    if out is not None:
        checks.check_out(out, A.shape[0], A.device)
        out = out.view((A.shape[0], 1) if B.dim() == 2 else (A.shape[0],))
    return launch(A, B, out)


def explain(A, B) -> str:
    """Which kernel gemv(A, B) launches, how, and why; A and B may be on the CPU (the rule then
    uses the recorded GPU's SM count, L2 and limits)."""
    if decode.takes(A, B):
        return decode.explain(A, B)
    plan, _ = plan_for(A, B)
    device = gpu.for_tensor(A.device)
    where = f"on this {device.name}" if A.device.type == "cuda" else f"on the recorded {device.name}"
    text = plan.describe() + f"\n  ({where}: {device.sms} SMs, {device.l2_bytes / 2**20:.0f} MiB of L2)"
    if _b_strided(B, plan.K):
        text += "\n  - B is strided: gemv copies it (K floats) before the launch"
    return text
