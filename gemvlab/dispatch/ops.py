"""``torch.ops.gemvlab.gemv``: the dispatcher as a PyTorch custom operator.

Registered with ``torch.library`` so that it works where a plain Python function would not:
inside ``torch.compile`` (the fake implementation tells the compiler the output's shape and
device without running anything) and in CUDA graph capture (the launch goes to the current
stream and allocates through torch's caching allocator). It also has a backward, so inputs
that require grad get gradients (computed with torch: the backward is not gemvlab's subject).

    C = torch.ops.gemvlab.gemv(A, B)      # or gemvlab.dispatch.ops.gemv_op(A, B)
"""

from __future__ import annotations

import torch

from .launch import check, run


@torch.library.custom_op("gemvlab::gemv", mutates_args=())
def gemv_op(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """C = A @ B with the kernel gemvlab's dispatcher picks; (M,) for B (K,), (M, n) for B (K, n)."""
    return run(A, B)


@gemv_op.register_fake
def _(A, B):
    check(A, B)  # the same GemvInputError as a call would raise, while torch.compile traces
    M = A.shape[0]
    return A.new_empty((M, B.shape[1]) if B.dim() == 2 else (M,))


def _setup_context(ctx, inputs, output):
    A, B = inputs
    ctx.save_for_backward(A, B)


def _backward(ctx, grad):
    A, B = ctx.saved_tensors
    g = grad.reshape(A.shape[0], -1)  # (M, n)
    grad_A = g @ B.reshape(A.shape[1], -1).t() if ctx.needs_input_grad[0] else None
    grad_B = (A.t() @ g).reshape(B.shape) if ctx.needs_input_grad[1] else None
    return grad_A, grad_B


gemv_op.register_autograd(_backward, setup_context=_setup_context)
