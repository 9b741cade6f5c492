"""Every kernel gemvlab builds, in one list: the stages (and stage 4's step), the dispatcher's, and
the decode kernels, the yardsticks. For the build report, the record's resource tables and the occupancy checks.

    lab.build_all()["multirow"].resources["gemv_multirow<8>"].registers
    lab.resources("warp_shuffle", 4)
"""

from __future__ import annotations

from .checks import GemvInputError
from .decode.kernels import KERNELS as DECODE_KERNELS
from .dispatch.kernels import KERNELS as DISPATCH_KERNELS
from .measure.ceiling import READ_CEILING
from .measure.latency import MEMORY_LATENCY
from .native.build import Built
from .native.kernel import Kernel
from .stages import STAGES, STEPS, Stage
from .stages import get_stage as _stage

ALL_KERNELS = (STAGES + STEPS + (READ_CEILING,) + tuple(DISPATCH_KERNELS.values()) + tuple(DECODE_KERNELS.values())
               + (MEMORY_LATENCY,))


def get_stage(stage) -> Kernel:
    """A stage from itself, its name or number, or any other kernel gemvlab builds by its name."""
    if isinstance(stage, Kernel):
        return stage
    try:
        return _stage(stage)
    except GemvInputError:
        found = next((k for k in ALL_KERNELS if k.name == stage), None)
        if found is None:
            raise
        return found


def build_stage(stage) -> Built:
    """Compile a stage's (or any kernel's) .cu file, or load it from the cache; works without a GPU."""
    return get_stage(stage).build()


def build_all() -> dict:
    """name -> Built for every kernel gemvlab launches; kernels that share a .cu file share a build."""
    return {k.name: k.build() for k in ALL_KERNELS}


def resources(stage, variant: int | None = None):
    """The ptxas line (registers, shared memory, spills) of a kernel's variant."""
    return get_stage(stage).resources(variant)


__all__ = ["ALL_KERNELS", "Stage", "build_all", "build_stage", "get_stage", "resources"]
