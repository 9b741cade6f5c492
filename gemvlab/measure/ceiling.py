"""The read ceiling: the fastest read-only pass over A, timed in the same run as what it measures.

Every kernel's bandwidth is compared with it (vs_ceiling = ceiling ms / kernel ms), never with a
number from elsewhere: a datasheet's peak is a lead, and the bandwidth a GPU reaches moves between
machines and runs. read_ceiling.cu has two passes; CEILING_CONFIGS are the launches tried.
"""

from __future__ import annotations

from pathlib import Path

import torch

from .. import checks
from ..native import launch as native
from ..native.kernel import Kernel
from .timing import gbps, time_round_robin

#: Its variant is the grid: 0 for one block per row (read_rows), else that many blocks striding (read_grid).
READ_CEILING = Kernel(name="read_ceiling", source_path=Path(__file__).with_name("read_ceiling.cu"),
                      launcher="launch_read_ceiling", symbol="read_rows", fixed_loads=2, reads_b=False)
#: What a launch needs (gemvlab build prints it beside each stage's).
NEEDS = ("block size: multiple of 32 (1 to 1024 threads)",
         ("A and B start 16-byte aligned, and K % 4 == 0 (float4 loads); otherwise gemvlab raises GemvInputError "
         "naming the fix (no silent fallback)"), "M <= 2^31 - 1 (one block per row)")
#: (threads per block, blocks per SM): a grid of that many blocks per SM strides over A; blocks
#: per SM 0: one block per row.
CEILING_CONFIGS = ((1024, 2), (512, 4), (1024, 0), (512, 0), (256, 0), (64, 0))


def ceiling_configs(M: int, K: int) -> list[tuple[int, int]]:
    """The CEILING_CONFIGS that apply to an M x K matrix: a row per block needs K % 4 == 0 and rows
    of at least one float4 per thread."""
    return [(b, per_sm) for b, per_sm in CEILING_CONFIGS if per_sm or (K % 4 == 0 and K // 4 >= b)]


def launcher(A, block: int = 512, blocks: int | None = None, sink=None):
    """A launch() for a read-only pass over all of A (float32, CUDA, contiguous, aligned):
    `blocks` = 0 reads one row per block (needs K % 4 == 0), `blocks` > 0 strides a grid of that
    many blocks over A as one flat array of float4s; None: 4 blocks per SM."""
    M, K, _ = checks.operands(A, A[0] if len(A) else A.new_empty(A.shape[1]), any_row_stride=False)
    checks.check_block(block, "multiple of 32", READ_CEILING.name)
    if blocks is None:
        blocks = torch.cuda.get_device_properties(A.device).multi_processor_count * 4
    if A.data_ptr() % 16 or (blocks == 0 and K % 4):
        raise checks.GemvInputError(
            "the read-ceiling kernels read A as float4s: they need A.data_ptr() % 16 == 0, and "
            + ("K % 4 == 0 to read it a row per block" if blocks == 0 else "")
            + " (pass A.clone(), or pad it with gemvlab.pad_k)")
    if blocks == 0:
        checks.check_grid(M, READ_CEILING.name)
    sink = sink if sink is not None else torch.empty(1, device=A.device)
    fn = READ_CEILING.function()
    index = A.device.index if A.device.index is not None else torch.cuda.current_device()
    args = (A.data_ptr(), A.data_ptr(), sink.data_ptr(), M, K, block, blocks, native.stream(index))

    def launch():
        fn.check(fn(*args))

    return launch


def fastest(A, **timing):
    """(launch, measurement) of the fastest read-only pass over A's bytes (any dtype, viewed as
    float32 rows), for timing beside a kernel in the same run; None where A is not contiguous, its
    rows are not a whole number of floats, or it does not start 16-byte aligned."""
    if A.dtype != torch.float32:
        if not A.is_contiguous() or (A.element_size() * A.shape[-1]) % 4:
            return None
        A = A.view(torch.float32)
    if A.data_ptr() % 16:
        return None
    pick = measure(A, **{"warmup_ms": 5, "rep_ms": 20, **timing})
    return launcher(A, pick["block"], pick["variant"]), pick


def row(M: int, K: int, t, block: int, grid: int) -> dict:
    """A read-ceiling measurement as a row of the results schema (GB/s counts A's bytes alone)."""
    return dict(kind="read_ceiling", stage="read ceiling", number=None, M=M, K=K, block=block, variant=grid,
                **t.as_dict(), GBps=gbps(4 * M * K, t.ms), rel_err=None, status="ok")


def measure(A, **timing) -> dict:
    """The fastest read-only pass over A, of the ceiling_configs, as a row (`variant` holds the
    grid: 0 for a row per block, else the blocks striding over A)."""
    M, K = A.shape
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    sink = torch.empty(1, device=A.device)
    fns = {(block, sms * per_sm): launcher(A, block, sms * per_sm, sink) for block, per_sm in ceiling_configs(M, K)}
    timed = time_round_robin(fns, **timing)
    (block, grid), t = min(timed.items(), key=lambda kv: kv[1].ms)
    return row(M, K, t, block, grid)
