"""gemvlab: write a CUDA GEMV kernel that runs at the speed of GPU memory, by measurement.

    import gemvlab as lab
    lab.STAGES                               # the five stages, in teaching order
    lab.build_stage("vectorized")            # compile (cached); registers, spills, SASS load widths
    C = lab.gemv(A, B)                       # the kernel the dispatcher picks for this shape (a GPU)
    C = lab.gemv(A, B, "warp_shuffle", 256)  # one stage's kernel, as the notebooks teach it
    print(lab.explain(A, B))                 # which kernel gemv(A, B) runs, its launch, and why
    doc = lab.results.load()                 # the recorded H200 run, on any machine
"""

__version__ = "0.1.0"

from . import checks, results
from .checks import GemvInputError
from .kernels import READ_CEILING, STAGES, build_all, build_stage, gemv, get_stage, pad_k, resources


class Explanation(str):
    """Text that shows as itself in a notebook cell (not as a quoted string)."""

    def __repr__(self) -> str:
        return str(self)


def explain(A, B) -> Explanation:
    """Which kernel gemv(A, B) runs, its launch, and why (works on CPU tensors too)."""
    from .dispatch import explain as _explain

    return Explanation(_explain(A, B))


from . import ops  # noqa: E402,F401 - registers torch.ops.gemvlab.gemv (torch.compile, CUDA graphs)

__all__ = ["STAGES", "READ_CEILING", "GemvInputError", "build_all", "build_stage", "checks", "explain",
           "gemv", "get_stage", "pad_k", "resources", "results"]
