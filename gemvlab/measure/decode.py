"""Measuring the decode GEMV: inputs, the float64 reference and its error bound, the bytes moved,
and gemv timed round-robin beside torch.matmul, torch.compile's max-autotuned matmul and the read
ceiling over W (the same timing loop as everything else: gemvlab.measure.timing)."""

from __future__ import annotations

import time

import torch

from ..api import gemv
from ..decode import launch as decode
from . import ceiling
from .accuracy import relative_error
from .timing import gbps, time_round_robin

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
#: Unit roundoff of C's dtype: rounding the fp32 sum to it costs at most this, relatively.
OUTPUT_ROUNDOFF = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float32: 0.0}


def error_bound(dtype, K: int) -> float:
    """The relative 2-norm error gemv is held to against float64 of its (already rounded) inputs: a
    model, not a proof. For inputs of one sign, fp32 sums of K exact products (each in fp32's normal
    range), each addition assumed off by at most 2^-23 of its sum (2^-24 rounding to nearest; how
    mma.sync adds is not documented, and Fasi et al., "Numerical behavior of NVIDIA tensor cores",
    2021, measured truncation), so K * 2^-23 to first order, then C rounded to its dtype
    (OUTPUT_ROUNDOFF), C within its dtype's normal range. For bf16 the rounding term is most of it; for
    fp16 at K >= 4096 and for float32 the sums' term is, and measured errors sit far under it, so
    either way the sums' term is checked only loosely."""
    return OUTPUT_ROUNDOFF[dtype] + K * 2.0**-23


def inputs(N: int, K: int, n: int, dtype, activation: bool = True, seed: int | None = None, device="cuda"):
    """W (N, K) and B (K, n) of torch.rand values in `dtype` ((K,) when n == 0). `activation`: B is
    x.t() for a contiguous x (n, K), as decode code holds it; else B is contiguous (K, n)."""
    g = torch.Generator(device=device)
    g.manual_seed(seed if seed is not None else time.time_ns() % 2**63)
    W = torch.rand(N, K, device=device, generator=g).to(dtype)
    if n == 0:
        return W, torch.rand(K, device=device, generator=g).to(dtype)
    x = torch.rand(n, K, device=device, generator=g).to(dtype)
    return W, (x.t() if activation else x.t().contiguous())


def reference(W, B, chunk_bytes: int = 2**30) -> torch.Tensor:
    """W @ B in float64 of the rounded inputs, (N, n), a block of rows at a time."""
    N, K = W.shape
    b = B.reshape(K, -1).double()
    rows = max(1, chunk_bytes // max(1, 8 * K))
    out = torch.empty(N, b.shape[1], dtype=torch.float64, device=W.device)
    for r in range(0, N, rows):
        out[r:r + rows] = W[r:r + rows].double() @ b
    return out


def bytes_moved(N: int, K: int, n: int, dtype) -> int:
    """The fewest bytes: W read once, n vectors of K in, n vectors of N out."""
    e = torch.empty((), dtype=dtype).element_size()
    return e * (N * K + n * K + n * N)


def compiled_matmul():
    """torch.compile of torch.matmul, max-autotuned (Triton templates and cuBLAS timed by inductor),
    without CUDA graphs: what a user would pick instead of cuBLAS. Compiles on first call per shape."""
    return torch.compile(lambda W, B: torch.matmul(W, B), mode="max-autotune-no-cudagraphs", dynamic=False)


def compare(W, B, rounds: int = 3, compiled=None, peers: bool = True, **timing) -> list[dict]:
    """gemv, torch.matmul, the compiled matmul (when `compiled` is given: compiled_matmul()) and
    the read ceiling over W's bytes, checked and timed round-robin. Rows: kernel, ms, q1, q3,
    GBps, rel_err, chosen."""
    N, K = W.shape
    n = 1 if B.dim() == 1 else B.shape[1]
    ref = reference(W, B)
    launch = decode.launcher(W, B) if decode.takes(W, B) else None
    fns = {"gemv": (lambda: launch(W, B)) if launch else (lambda: gemv(W, B))}
    errs = {"gemv": relative_error(gemv(W, B).float(), ref)}
    chosen = launch.plan.name if launch else "float32 dispatcher"
    if peers:
        fns["torch.matmul"] = lambda: torch.matmul(W, B)
        errs["torch.matmul"] = relative_error(torch.matmul(W, B).float(), ref)
        if compiled is not None:
            compiled(W, B)  # compile (and autotune) before any timing
            fns["torch.compile"] = lambda: compiled(W, B)
            errs["torch.compile"] = relative_error(compiled(W, B).float(), ref)
        found = ceiling.fastest(W)
        if found:
            fns["read ceiling"] = found[0]
    timed = time_round_robin(fns, rounds=rounds, **timing)
    moved = bytes_moved(N, K, n, W.dtype)
    out = []
    for name, t in timed.items():
        nbytes = W.numel() * W.element_size() if name == "read ceiling" else moved
        out.append({"kernel": name, "ms": t.ms, "q1": t.q25_ms, "q3": t.q75_ms, "n_launches": t.n,
                    "GBps": gbps(nbytes, t.ms), "rel_err": errs.get(name), "chosen": chosen if name == "gemv" else None})
    return out
