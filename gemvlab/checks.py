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


def _tensors(A, B, dtype_arg: str) -> None:
    """A and B must be tensors; the fix names torch.as_tensor with `dtype_arg` ("" or "dtype=..., ")."""
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, torch.Tensor):
            raise GemvInputError(f"{name} is a {type(t).__name__}, not a torch.Tensor: "
                                 f"pass torch.as_tensor({name}, {dtype_arg}device='cuda')")


def _one_gpu_and_rows(A, B, M: int, K: int, require_cuda: bool) -> None:
    """A and B on one device (a GPU unless `require_cuda` is False), and A's rows of adjacent elements."""
    if A.device != B.device:
        raise GemvInputError(f"A is on {A.device} and B on {B.device}; a kernel runs on one GPU and reads "
                             f"both from its memory. Put both on the same GPU: A, B = A.cuda(), B.cuda()")
    if require_cuda:
        for name, t in (("A", A), ("B", B)):
            if t.device.type != "cuda":
                raise GemvInputError(not_on_gpu_message(name, t.device))
    if K > 1 and A.stride(1) != 1:  # one row too: a strided or expanded row is not adjacent elements
        raise GemvInputError(
            f"A's rows are not contiguous (strides {A.stride()}: a transpose or a strided column slice); "
            f"the kernels read each row as adjacent elements. Pass A.contiguous() (a copy)")


def operands(A, B, *, any_row_stride: bool, require_cuda: bool = True) -> tuple[int, int, int]:
    """Check A (M, K) and B (K,) or (K, 1) for a launch; returns (M, K, lda), lda the floats from
    one row of A to the next.

    `any_row_stride`: the dispatcher takes any row stride and first address (rows of adjacent
    floats) and copies a strided B; the stages need A and B contiguous. `require_cuda=False`
    skips only the "on a GPU" check, so the rest can be tested with CPU or meta tensors.
    """
    _tensors(A, B, "dtype=torch.float32, ")
    for name, t in (("A", A), ("B", B)):
        if t.dtype != torch.float32:
            raise GemvInputError(f"{name} is {t.dtype}; gemvlab's kernels read float32. "
                                 f"Convert it: {name} = {name}.float()")
    if A.dim() != 2:
        raise GemvInputError(f"A must be a 2-D matrix (M, K); got {A.dim()}-D, {_describe(A)}")
    M, K = A.shape
    if tuple(B.shape) not in ((K,), (K, 1)):
        raise GemvInputError(f"B must have shape ({K},) or ({K}, 1) to match A's K = {K}; got {tuple(B.shape)}")
    _one_gpu_and_rows(A, B, M, K, require_cuda)
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


#: What the decode path (gemvlab.decode) reads: W and B of one of these dtypes, the same for both.
DECODE_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
#: The most vectors B may hold (B is (K, n)); more is a matrix multiply, torch.matmul's job.
MAX_VECTORS = 16


def decode_operands(A, B, *, require_cuda: bool = True) -> tuple[int, int, int, int, int, int]:
    """Check W = A (N, K) and B (K,), (K, 1) or (K, n), 1 <= n <= MAX_VECTORS, of one dtype of
    DECODE_DTYPES, for the decode kernels; returns (N, K, n, lda, ldb, ldv): A's row stride and B's
    stride from one k to the next and from one vector to the next, in elements. B may have any
    strides (contiguous (K, n), or x.t() for an activation x of shape (n, K))."""
    _tensors(A, B, "")
    for name, t in (("A", A), ("B", B)):
        if t.dtype not in DECODE_DTYPES:
            kind = "integer" if not (t.dtype.is_floating_point or t.dtype.is_complex) else str(t.dtype)
            raise GemvInputError(
                f"{name} is {t.dtype}; gemvlab reads float32, bfloat16 or float16. Quantized ({kind}) weights "
                f"need their own kernel: dequantize first, e.g. {name} = ({name}.to(torch.bfloat16) * scale), "
                f"or convert: {name} = {name}.to(torch.bfloat16)")
    if A.dtype != B.dtype:
        raise GemvInputError(f"A is {A.dtype} and B is {B.dtype}; gemvlab reads both in one dtype and "
                             f"returns C in it. Convert B: B = B.to(A.dtype)")
    if A.dim() != 2:
        raise GemvInputError(f"A must be a 2-D matrix (N, K); got {A.dim()}-D, {_describe(A)}")
    N, K = A.shape
    if B.dim() not in (1, 2) or B.shape[0] != K:
        raise GemvInputError(f"B must have shape ({K},), ({K}, 1) or ({K}, n) to match A's K = {K}; "
                             f"got {tuple(B.shape)}")
    n = 1 if B.dim() == 1 else B.shape[1]
    if not 1 <= n <= MAX_VECTORS:
        raise GemvInputError(
            f"B holds {n} vectors; gemvlab.gemv takes 1 to {MAX_VECTORS} (a GEMV reads A once for a few "
            f"vectors). For more, call it on chunks of at most {MAX_VECTORS} columns, or use torch.matmul "
            f"(a GEMM)" if n else f"B has no vectors (shape {tuple(B.shape)}): pass at least one column")
    _one_gpu_and_rows(A, B, N, K, require_cuda)
    lda = A.stride(0) if N > 1 else K
    ldb = B.stride(0) if K > 1 else 1
    ldv = B.stride(1) if B.dim() == 2 and n > 1 else K
    return N, K, n, lda, ldb, ldv


def check_decode_out(out, shape: tuple, dtype, device) -> None:
    """The decode path's out=: a contiguous tensor of C's elements, in A's dtype, on A's GPU."""
    if out is None:
        return
    if not isinstance(out, torch.Tensor) or out.dtype != dtype:
        raise GemvInputError(f"out must be a {dtype} tensor (C has A's dtype): torch.empty({shape}, "
                             f"dtype={dtype}, device=A.device)")
    count = 1
    for s in shape:
        count *= s
    if out.numel() != count or not out.is_contiguous():
        raise GemvInputError(f"out must be a contiguous tensor of {count} elements, shape {shape}; got {_describe(out)}")
    if out.device != device:
        raise GemvInputError(f"out is on {out.device} but A on {device}: allocate it on {device}")
