"""gemvlab.gemv, gemvlab.linear and gemvlab.explain: the one module that knows both the stage path and the
dispatcher (gemvlab.stages and gemvlab.dispatch do not import each other)."""

from __future__ import annotations

import torch

from . import checks
from .decode import launch as decode
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


def linear(x, W, bias=None):
    """torch.nn.functional.linear(x, W, bias) for x (K,) or (n, K), 1 <= n <= 16: x W^T (+ bias),
    (N,) or (n, N), in W's dtype, with gemv's kernels (the bias is added by torch afterwards).
    W is (N, K) = (out_features, in_features), as nn.Linear keeps it."""
    if not isinstance(x, torch.Tensor) or x.dim() not in (1, 2):
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise checks.GemvInputError(f"x must be (K,) or (n, K); got {shape}. For more leading dimensions, "
                                    f"reshape: gemvlab.linear(x.reshape(-1, K), W).reshape(*x.shape[:-1], -1)")
    if not isinstance(W, torch.Tensor) or W.dim() != 2:
        raise checks.GemvInputError("W must be a 2-D tensor (out_features, in_features), as nn.Linear.weight")
    if x.shape[-1] != W.shape[1]:
        raise checks.GemvInputError(f"x has {x.shape[-1]} features but W is {tuple(W.shape)} (out_features, "
                                    f"in_features): x's last dimension must be W.shape[1] = {W.shape[1]}")
    if x.dtype != W.dtype:
        raise checks.GemvInputError(f"x is {x.dtype} and W is {W.dtype}; linear reads both in one dtype. "
                                    f"Convert x: x = x.to(W.dtype)")
    if x.dim() == 2 and not 1 <= x.shape[0] <= checks.MAX_VECTORS:
        raise checks.GemvInputError(f"x holds {x.shape[0]} vectors; gemvlab.linear takes 1 to {checks.MAX_VECTORS}. "
                                    f"For more, call it on chunks of at most {checks.MAX_VECTORS} rows of x, or use "
                                    f"torch.nn.functional.linear")
    if bias is not None and (not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (W.shape[0],)
                             or bias.dtype != W.dtype or bias.device != W.device):
        raise checks.GemvInputError(f"bias must be a ({W.shape[0]},) tensor of {W.dtype} on {W.device}")
    if x.dim() == 1 or (x.shape[0] == 1 and x.dtype == W.dtype == torch.float32):
        C = gemv(W, x.reshape(-1)).reshape(x.shape[:-1] + (W.shape[0],))  # one vector
    elif torch.is_grad_enabled() and (x.requires_grad or W.requires_grad):
        C = gemv_op(W, x.t()).t()
    else:
        C = decode.launcher(W, x.t(), transposed=True)(W, x.t())  # writes (n, N) directly
    return C if bias is None else C + bias


def explain(A, B) -> Explanation:
    """Which kernel gemv(A, B) runs, its launch, and why (works on CPU tensors too)."""
    return Explanation(dispatch.explain(A, B))
