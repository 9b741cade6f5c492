"""gemv for bf16, fp16 or several vectors: check once per layout, plan, launch.

As in gemvlab.dispatch.launch, a repeated call finds its launch in a dictionary keyed by
everything the plan depends on, so it costs a lookup, one allocation and one ctypes call.
"""

from __future__ import annotations

import ctypes

import torch

from .. import checks
from ..gpu import device as gpu
from ..native import launch as native
from .kernels import KERNELS, PER_LOAD
from .rule import DecodePlan, choose

_launches: dict = {}


def takes(A, B) -> bool:
    """Whether gemv(A, B) is a decode call: A or B is not float32, or B holds more than one vector
    (everything else goes to gemvlab.dispatch's float32 kernels)."""
    return (isinstance(A, torch.Tensor) and isinstance(B, torch.Tensor)
            and (A.dtype != torch.float32 or B.dtype != torch.float32 or (B.dim() == 2 and B.shape[1] != 1)))


def plan_for(A, B, require_cuda: bool = False) -> tuple[DecodePlan, tuple]:
    """(the plan gemv uses for these A and B, their strides (lda, ldb, ldv)): on their GPU, or for
    CPU tensors on the recorded one. Checks the inputs first."""
    N, K, n, lda, ldb, ldv = checks.decode_operands(A, B, require_cuda=require_cuda)
    plan = choose(N, K, n, A.dtype, lda, A.data_ptr() % 16, ldb, ldv, B.data_ptr() % 16, gpu.for_tensor(A.device))
    return plan, (lda, ldb, ldv)


def make_launch(plan: DecodePlan, strides: tuple, out_shape: tuple, dtype, device, transposed: bool = False,
                kernel=None):
    """launch(A, B, out=None) -> C for inputs already checked to match `plan`. C is `out_shape`,
    contiguous; `transposed`: C is (n, N) (gemvlab.linear's layout) rather than (N, n). `kernel`:
    another build of the plan's kernel (the tuning script's, with other constants)."""
    N, n = plan.N, plan.n
    if plan.kernel in ("none", "zeros"):
        def launch(A, B, out=None):
            C = torch.empty(out_shape, dtype=dtype, device=device) if out is None else out
            return C.zero_() if plan.kernel == "zeros" else C

        launch.plan = plan
        return launch
    index = device.index if device.index is not None else torch.cuda.current_device()
    fn = (kernel or KERNELS[plan.kernel]).function()
    K = plan.K
    padded = -(-K // PER_LOAD[dtype]) * PER_LOAD[dtype]  # a copied B's rows: every vector starts aligned
    lda, ldb, ldv = (strides[0], 1, padded) if plan.copy_b else strides
    ldc, ldcv = (1, N) if transposed else (n, 1)
    args = native.LaunchArgs(lda, N, K, 0, 1, plan.block, plan.variant, ldb, ldv, ldc, ldcv, n, plan.vec)
    args_address = ctypes.addressof(args)  # valid while launch.args (below) holds the struct
    name = plan.name

    copy_b = plan.copy_b

    def launch(A, B, out=None):
        if copy_b:  # aligned (n, padded) rows: n K elements copied, far fewer than W's
            B = torch.empty(n, padded, dtype=dtype, device=device)[:, :K].copy_(B.reshape(K, n).t())
        C = torch.empty(out_shape, dtype=dtype, device=device) if out is None else out
        code = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), None, args_address, native.stream(index))
        if code:
            fn.check(code, name)
        return C

    launch.plan = plan
    launch.args = args  # keeps the struct alive: the kernel reads it through args_address
    return launch


def _out_shape(A, B, transposed: bool) -> tuple:
    N = A.shape[0]
    if B.dim() == 1:
        return (N,)
    return (B.shape[1], N) if transposed else (N, B.shape[1])


def launcher(A, B, transposed: bool = False):
    """The launch gemv uses for A and B: from the cache when this layout was seen before, else
    checked and planned now. Has a .plan."""
    try:
        key = (*native.layout_key(A, B), transposed)
    except AttributeError:  # not tensors: let the full check say what they are
        checks.decode_operands(A, B)
        raise
    launch = _launches.get(key)
    if launch is None:
        plan, strides = plan_for(A, B, require_cuda=True)
        launch = _launches[key] = make_launch(plan, strides, _out_shape(A, B, transposed), A.dtype, A.device,
                                              transposed)
    return launch


def run(A, B, out=None):
    """C = A @ B: (N,) for B (K,), (N, 1) or (N, n) for B (K, 1) or (K, n), in A's dtype."""
    launch = launcher(A, B)
    if out is not None:
        shape = _out_shape(A, B, False)
        checks.check_decode_out(out, shape, A.dtype, A.device)
        out = out.view(shape)
    return launch(A, B, out)


def explain(A, B) -> str:
    """Which decode kernel gemv(A, B) launches, how, and why; A and B may be on the CPU."""
    plan, _ = plan_for(A, B)
    device = gpu.for_tensor(A.device)
    where = f"on this {device.name}" if A.device.type == "cuda" else f"on the recorded {device.name}"
    return plan.describe() + f"\n  ({where}: {device.sms} SMs, {device.l2_bytes / 2**20:.0f} MiB of L2)"
