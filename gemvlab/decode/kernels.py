"""The decode kernels, the numbers they share with Python, and the variants compiled.

decode_mma.cu runs bf16 and fp16 on tensor cores (sm_80 and later); decode_cores.cu runs float32,
and bf16 and fp16 before sm_80, on CUDA cores. Both read their constants as macros gemvlab passes
to nvcc (``DEFINES``), so they are defined here once; each .cu lists its instantiations, and a
test checks that they, the lists below and what the rule returns agree.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..native.kernel import VARIANT_BITS, Kernel, encode

HERE = Path(__file__).parent

#: The element type codes both kernels' first template argument takes (elements.cuh's Elem).
DTYPE_CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}
#: Elements in one 16-byte load.
PER_LOAD = {torch.float32: 4, torch.float16: 8, torch.bfloat16: 8}
#: decode_cores: rows per warp (each load of B serves them all): CORE_ROWS_FEW where the kernel is
#: compiled for at most CORE_FEW_VECTORS vectors (more warps for the same rows), else
#: CORE_ROWS.
CORE_ROWS_FEW = 2
CORE_ROWS = 4
CORE_FEW_VECTORS = 2

#: decode_mma: rows of W per tile (one block's), 16 (the m16n8k16 mma's rows) or 8 (its first 8, the rest
#: zeros: twice the blocks for the same N). The rule counts tiles of this many rows.
MMA_ROWS = 16

DEFINES = (("GEMV_VARIANT_BITS", VARIANT_BITS), ("GEMV_CORE_ROWS_FEW", CORE_ROWS_FEW), ("GEMV_CORE_ROWS", CORE_ROWS),
           ("GEMV_CORE_FEW_VECTORS", CORE_FEW_VECTORS), ("GEMV_MMA_ROWS", MMA_ROWS))

#: (CODE, NT, U, STAGES): fp16 and bf16, one or two n-tiles of 8 vectors, 4 or 8 16-byte loads per
#: row per lane per trip (a warp's trip reads 4 or 8 KiB of W), and what is in flight during a trip's
#: mma.sync: nothing (1), the next trip's W and B (2), or the next trip's W alone (3, with two n-tiles,
#: where B's registers would cost warps). Two or three only at U = 4: two trips of U = 8 take 246
#: registers with one n-tile, so 8 warps per SM, and spill with two.
MMA_COMPILED = tuple((c, nt, u, s) for c in (1, 2) for nt in (1, 2)
                     for u, s in ((4, 1), (8, 1), (4, 2), *(((4, 3),) if nt == 2 else ())))
#: (CODE, NV): float32 for 2 to 16 vectors (one goes to gemvlab.dispatch), halves for 1 to 16.
CORES_COMPILED = tuple((0, nv) for nv in (2, 4, 8, 16)) + tuple((c, nv) for c in (1, 2) for nv in (1, 2, 4, 8, 16))


def core_rows(nv: int) -> int:
    """decode_cores' rows per warp when compiled for `nv` vectors (core_rows in the .cu)."""
    return CORE_ROWS_FEW if nv <= CORE_FEW_VECTORS else CORE_ROWS


def _kernel(name, template, compiled, **kw) -> Kernel:
    return Kernel(name=name, source_path=HERE / f"{name}.cu", launcher=f"launch_{name}", symbol=f"gemv_{name}",
                  signature="plan", template=template, variants=tuple(encode(*t) for t in compiled),
                  defines=DEFINES, **kw)


MMA = _kernel("decode_mma", ("CODE", "NT", "U", "STAGES"), MMA_COMPILED, loads_from=("U",))
CORES = _kernel("decode_cores", ("CODE", "NV"), CORES_COMPILED, fixed_loads=CORE_ROWS)
KERNELS = {k.name: k for k in (MMA, CORES)}
