"""gemvlab.gemv and gemvlab.explain: the one module that knows both the stage path and the
dispatcher (gemvlab.stages and gemvlab.dispatch do not import each other)."""

from __future__ import annotations

import torch

from . import checks
from .dispatch import launch as dispatch
from .dispatch.ops import gemv_op
from .stages import launch as stages


class Explanation(str):
    """Text that shows as itself in a notebook cell (not as a quoted string)."""

    def __repr__(self) -> str:
        return str(self)


def gemv(A, B, stage=None, block: int | None = None, variant: int | None = None, out=None):
    """C = A @ B. C has shape (M, 1) when B is (K, 1), else (M,).

    Without a stage, the dispatcher (gemvlab.dispatch) picks the kernel for the shape and takes
    any float32 A whose rows are adjacent floats: any M, K, K % 4, row stride or first address.
    With `stage` (a name or 1 to 5), that stage's kernel runs at `block` and `variant`, exactly
    as the notebooks teach it; the float4 stages then refuse unaligned rows rather than fall back.
    Every input is checked first; a bad one raises GemvInputError naming the fix, before any
    kernel runs. M = 0 or K = 0 give the right answer without a launch. Inputs that require grad
    (without a stage) go through the custom op, torch.ops.gemvlab.gemv, which has a backward.
    """
    if stage is not None:
        return stages.run(A, B, stage, block, variant, out)
    if block is not None or variant is not None:
        raise checks.GemvInputError("block and variant choose a stage's launch: pass stage= too "
                                    "(without a stage the dispatcher chooses the launch)")
    if out is None and torch.is_grad_enabled() and getattr(A, "requires_grad", False) | getattr(
            B, "requires_grad", False):
        return gemv_op(A, B)
    return dispatch.run(A, B, out)


def explain(A, B) -> Explanation:
    """Which kernel gemv(A, B) runs, its launch, and why (works on CPU tensors too)."""
    return Explanation(dispatch.explain(A, B))
