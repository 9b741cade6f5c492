"""The one input validator: every launch in gemvlab runs these checks first, in Python.

A CUDA kernel trusts the pointers and sizes it is given. Handed a CPU pointer, a misaligned float4
address or a wrong length, it reads the wrong memory; the error, if any, arrives later, at an
unrelated call, and leaves the CUDA context unusable ("sticky"). So each failure here raises a
GemvInputError whose message says what is wrong and how to fix it, before any kernel runs. The
stage path and the dispatcher call the same functions, so the same mistake reads the same way on
both. None of them needs a GPU, so all are unit tested on the CPU.
"""

from __future__ import annotations

import torch

#: The largest grid.x a launch may have (2^31 - 1): the row-per-block stages launch M blocks.
MAX_GRID_X = 2**31 - 1


class GemvInputError(ValueError):
    """An input a kernel cannot take; the message names the fix."""


def _describe(t: torch.Tensor) -> str:
    return f"shape {tuple(t.shape)}, {t.dtype}, on {t.device}"


def not_on_gpu_message(name: str, device) -> str:
    return (f"{name} is on the {device.type.upper()}. The kernels read the addresses they are given as "
            f"GPU addresses; an ordinary CPU tensor's memory is not one unless the driver maps host memory "
            f"for the GPU (HMM or ATS, on some Linux systems), so a kernel handed {name}.data_ptr() usually "
            f"fails later with 'an illegal memory access was encountered' (notebook 01 shows it). Move it "
            f"first: {name} = {name}.cuda() (or create it with device='cuda')")


def operands(A, B, *, any_row_stride: bool, require_cuda: bool = True) -> tuple[int, int, int]:
    """Check A (M, K) and B (K,) or (K, 1) for a launch; returns (M, K, lda), lda the floats from
    one row of A to the next.

    `any_row_stride`: the dispatcher takes any row stride and first address (rows of adjacent
    floats) and copies a strided B; the stages need A and B contiguous. `require_cuda=False`
    skips only the "on a GPU" check, so the rest can be tested with CPU or meta tensors.
    """
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, torch.Tensor):
            raise GemvInputError(f"{name} is a {type(t).__name__}, not a torch.Tensor: "
                                 f"pass torch.as_tensor({name}, dtype=torch.float32, device='cuda')")
    for name, t in (("A", A), ("B", B)):
        if t.dtype != torch.float32:
            raise GemvInputError(f"{name} is {t.dtype}; gemvlab's kernels read float32. "
                                 f"Convert it: {name} = {name}.float()")
    if A.dim() != 2:
        raise GemvInputError(f"A must be a 2-D matrix (M, K); got {A.dim()}-D, {_describe(A)}")
    M, K = A.shape
    if tuple(B.shape) not in ((K,), (K, 1)):
        raise GemvInputError(f"B must have shape ({K},) or ({K}, 1) to match A's K = {K}; got {tuple(B.shape)}")
    if A.device != B.device:
        raise GemvInputError(f"A is on {A.device} and B on {B.device}; a kernel runs on one GPU and reads "
                             f"both from its memory. Put both on the same GPU: A, B = A.cuda(), B.cuda()")
    if require_cuda:
        for name, t in (("A", A), ("B", B)):
            if t.device.type != "cuda":
                raise GemvInputError(not_on_gpu_message(name, t.device))
    if K > 1 and M > 1 and A.stride(1) != 1:
        raise GemvInputError(
            f"A's rows are not contiguous (strides {A.stride()}: a transpose or a strided column slice); "
            f"the kernels read each row as adjacent floats. Pass A.contiguous() (a copy)")
    lda = A.stride(0) if M > 1 else K
    if not any_row_stride:
        if M > 1 and K and lda != K:
            raise GemvInputError(
                f"A's rows are {lda} floats apart, not K = {K} (a column slice such as A[:, :{K}]): A is "
                f"not contiguous, and the stages read A as M * K adjacent floats. Pass A.contiguous(), or "
                f"call gemvlab.gemv(A, B) without a stage: the dispatcher takes any row stride")
        if K > 1 and B.stride(0) != 1:
            raise GemvInputError(
                f"B is not contiguous (stride {B.stride(0)}); the stages read B as K adjacent floats. Pass "
                f"B.contiguous(), or call gemvlab.gemv(A, B) without a stage: the dispatcher copies a strided B")
    return M, K, lda


def check_alignment(A, B, K: int) -> None:
    """float4 stages: 16-byte aligned A and B, and K % 4 == 0 so that every row is aligned too."""
    for name, t in (("A", A), ("B", B)):
        ptr = t.data_ptr()
        if ptr % 16:
            raise GemvInputError(
                f"{name}.data_ptr() = {ptr:#x} is not a multiple of 16 ({name} is a view starting "
                f"{t.storage_offset()} floats into its storage, such as A[:, 1:] or B[1:]); float4 loads "
                f"need 16-byte aligned addresses and a raw kernel would stop with 'misaligned address'. "
                f"Pass a fresh copy: {name}.clone() ({name}.contiguous() returns the same view when it "
                f"is already contiguous), or use stage 'coalesced', which has no alignment needs")
    if K % 4:
        raise GemvInputError(
            f"K = {K} is not a multiple of 4: the float4 stages read 4 floats at a time and row r starts "
            f"at r * K floats, so some rows would not be 16-byte aligned (three in four for odd K). Pad K with zeros "
            f"(gemvlab.pad_k(A, B)) or use stage 'coalesced', which takes any K")


def check_block(block, rule: str, stage_name: str) -> None:
    if isinstance(block, bool) or not isinstance(block, int):
        raise GemvInputError(f"block must be an int (threads per block), got {block!r}")
    if not 1 <= block <= 1024:
        raise GemvInputError(f"block = {block}: a CUDA block has 1 to 1024 threads")
    if rule == "power of two" and block & (block - 1):
        raise GemvInputError(
            f"block = {block} is not a power of two: stage '{stage_name}' adds partial sums in a tree "
            f"that halves the block at each level, and with {block} threads it would skip elements. "
            f"Use one of 32, 64, 128, 256, 512, 1024")
    if rule == "multiple of 32" and block % 32:
        raise GemvInputError(
            f"block = {block} is not a multiple of 32: stage '{stage_name}' reduces with "
            f"__shfl_down_sync(0xffffffff, ...), whose full mask promises all 32 lanes of every warp, "
            f"and the last warp would be partial. Use a multiple of 32, e.g. {max(32, block // 32 * 32)}")


def check_variant(variant, allowed: tuple, what: str, stage_name: str) -> None:
    if variant not in allowed:
        raise GemvInputError(f"stage '{stage_name}' is compiled for {what} in {list(allowed)}; got {variant!r}")


def check_grid(blocks: int, stage_name: str) -> None:
    if blocks > MAX_GRID_X:
        raise GemvInputError(f"stage '{stage_name}' would launch {blocks} blocks; grid.x is at most "
                             f"{MAX_GRID_X}. Split A into chunks of rows and call once per chunk")


def check_out(out, M: int, device) -> None:
    if out is None:
        return
    if not isinstance(out, torch.Tensor) or out.dtype != torch.float32:
        raise GemvInputError("out must be a float32 tensor: torch.empty(M, device=A.device)")
    if out.numel() != M or not out.is_contiguous():
        raise GemvInputError(f"out must be a contiguous tensor of {M} elements; got {_describe(out)}")
    if out.device != device:
        raise GemvInputError(f"out is on {out.device} but A on {device}: allocate it on {device}")
