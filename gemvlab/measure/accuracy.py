"""Checking a result: fresh random inputs, a float64 reference, and the one relative error.

Fresh ``torch.rand`` inputs, never zeros (zeros hide unwritten outputs and wrong indexing); the
output filled with NaN before a launch (an element a kernel forgets stays NaN and fails); the
relative 2-norm error against float64.
"""

from __future__ import annotations

import time

import torch


def random_inputs(M: int, K: int, device="cuda", seed: int | None = None, b_2d: bool = True):
    """Fresh uniform [0, 1) inputs (torch.rand): A (M, K) and B (K, 1) (or (K,))."""
    g = torch.Generator(device=device)
    g.manual_seed(seed if seed is not None else time.time_ns() % 2**63)
    A = torch.rand(M, K, device=device, generator=g)
    B = torch.rand((K, 1) if b_2d else (K,), device=device, generator=g)
    return A, B


def reference(A: torch.Tensor, B: torch.Tensor, chunk_bytes: int = 2**31) -> torch.Tensor:
    """A @ B in float64, (M,), a block of rows at a time, so that it never needs a float64 copy of
    all of A (16 GiB at the headline shape)."""
    M, K = A.shape
    b = B.reshape(K).double()
    rows = max(1, chunk_bytes // max(1, 8 * K))
    out = torch.empty(M, dtype=torch.float64, device=A.device)
    for r in range(0, M, rows):
        out[r:r + rows] = A[r:r + rows].double() @ b
    return out


def relative_error(C: torch.Tensor, ref: torch.Tensor) -> float:
    """||C - ref|| / ||ref|| in float64 (on ref's device); inf when any element is NaN (never written)."""
    c = C.reshape(-1).double().to(ref.device)
    ref = ref.reshape(-1)
    if torch.isnan(c).any():
        return float("inf")
    denom = torch.linalg.vector_norm(ref).item()
    diff = torch.linalg.vector_norm(c - ref).item()
    return diff / denom if denom else diff


def poisoned(M: int, device, b_2d: bool = False) -> torch.Tensor:
    """An output of M floats filled with NaN, for a launch to overwrite."""
    return torch.full((M, 1) if b_2d else (M,), float("nan"), device=device)
