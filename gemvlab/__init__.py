"""gemvlab: write a CUDA GEMV kernel that runs at the speed of GPU memory, by measurement.

    import gemvlab as lab
    lab.STAGES                               # the five stages, in teaching order
    lab.build_stage("vectorized")            # compile (cached); registers, spills, SASS load widths
    C = lab.gemv(A, B, "warp_shuffle", 256)  # checked inputs, then the kernel (needs a GPU)
    doc = lab.results.load()                 # the recorded H200 run, on any machine
"""

from . import checks, results
from .checks import GemvInputError
from .kernels import READ_CEILING, STAGES, build_all, build_stage, gemv, get_stage, pad_k, resources

__all__ = ["STAGES", "READ_CEILING", "GemvInputError", "build_all", "build_stage", "checks", "gemv",
           "get_stage", "pad_k", "resources", "results"]
