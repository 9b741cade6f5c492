"""gemvlab: write a CUDA GEMV kernel that runs at the speed of GPU memory, by measurement.

    import gemvlab as lab
    lab.STAGES                               # the five stages, in teaching order
    lab.build_stage("vectorized")            # compile (cached); registers, spills, SASS load widths
    C = lab.gemv(A, B)                       # the kernel the dispatcher picks for this shape (a GPU)
    C = lab.gemv(A, B, "warp_shuffle", 256)  # one stage's kernel, as the notebooks teach it
    print(lab.explain(A, B))                 # which kernel gemv(A, B) runs, its launch, and why
    y = lab.linear(x, W)                     # F.linear for bf16 / fp16 / fp32 W and 1 to 16 vectors x
    doc = lab.results.load()                 # the recorded H200 run, on any machine

The package, by role: api (gemv, linear, explain), checks (the one input validator), native (building
.cu files and calling them), gpu (limits and occupancy), stages (the five teaching kernels),
dispatch (the rule and its kernels), measure (timing, accuracy, the read ceiling, the model),
results (the schema, the record, tables), workbook (what the notebooks call), cli.
"""

__version__ = "0.1.0"

from . import checks, results
from .api import explain, gemv, linear
from .checks import GemvInputError
from .kernels import build_all, build_stage, get_stage, resources
from .measure.ceiling import READ_CEILING
from .stages import STAGES
from .stages.launch import pad_k


def try_kernel(name_or_path, timeout: float = 120):
    """Build, check against float64 and time a kernel file you wrote (gemvlab.workbook.exercises)."""
    from .workbook.exercises import try_kernel as _try_kernel

    return _try_kernel(name_or_path, timeout)


def copy_stage(stage, to=None):
    """A copy of a stage's .cu file in exercises/, to edit and try (gemvlab.workbook.exercises)."""
    from .workbook.exercises import copy_stage as _copy_stage

    return _copy_stage(stage, to)


__all__ = ["READ_CEILING", "STAGES", "GemvInputError", "build_all", "build_stage", "checks", "copy_stage",
           "explain", "gemv", "get_stage", "linear", "pad_k", "resources", "results", "try_kernel"]
