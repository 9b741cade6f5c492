"""The five teaching stages, in order: what each one is and the .cu file it lives in.

    from gemvlab.stages import STAGES, get_stage
    get_stage("warp_shuffle").build().resources["gemv_warp_shuffle<2, true>"].registers

Each stage is one .cu file in this folder, numbered in teaching order, with an ``extern "C"``
launcher of the one signature every stage shares (gemvlab.native.launch: "stage"). Block size
and the stage's variant (loads in flight, rows per block) are launch arguments, so a slider never
rebuilds anything. gemvlab.stages.launch checks inputs and launches them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..checks import GemvInputError
from ..native.kernel import Kernel

HERE = Path(__file__).parent
#: How a stage's grid follows from M: a thread per row in blocks of `block`, a block per row, a
#: block per `variant` rows, or `variant` blocks walking the rows.
GRIDS = ("thread per row", "block per row", "block per variant rows", "variant blocks")


@dataclass(frozen=True, kw_only=True)
class Stage(Kernel):
    number: int
    title: str  # a few words
    block_rule: str  # "any", "power of two", "multiple of 32"
    float4: bool  # needs 16-byte alignment and K % 4 == 0
    default_block: int
    variant_name: str | None = None  # what the template parameter means, in words
    grid_rule: str = "block per row"  # one of GRIDS
    role: str = "stage"  # "stage", or "step" (stage 4 taken apart)

    def grid(self, M: int, block: int, variant: int) -> int:
        if self.grid_rule == "thread per row":
            return -(-M // block)
        if self.grid_rule == "block per variant rows":
            return -(-M // variant)
        if self.grid_rule == "variant blocks":
            return variant
        return M

    def constraints(self) -> list[str]:
        out = [f"block size: {self.block_rule} (1 to 1024 threads)"]
        if self.float4:
            out.append("A and B start 16-byte aligned, and K % 4 == 0 (float4 loads); "
                       "otherwise gemvlab raises GemvInputError naming the fix (no silent fallback)")
        if self.variant_name:
            out.append(f"{self.variant_name} in {list(self.variants)} (compiled in)")
        if self.grid_rule in ("block per row", "block per variant rows"):
            per = "M" if self.grid_rule == "block per row" else "M / rows"
            out.append(f"{per} <= 2^31 - 1 (one block per {'row' if per == 'M' else 'group of rows'})")
        return out

    def __str__(self) -> str:
        return f"stage {self.number}: {self.name} ({self.title})"


def _stage(number, name, title, file, kernel, **kw) -> Stage:
    return Stage(number=number, name=name, title=title, source_path=HERE / file, launcher=f"launch_{name}",
                 symbol=kernel, **kw)


STAGES = (
    _stage(1, "naive", "one thread per row", "01_naive.cu", "gemv_naive", block_rule="any", float4=False,
           default_block=32, grid_rule="thread per row", access="scattered"),
    _stage(2, "coalesced", "one block per row, shared-memory tree", "02_coalesced.cu", "gemv_coalesced",
           block_rule="power of two", float4=False, default_block=256, shared_per_thread=4, access="scalar"),
    _stage(3, "vectorized", "float4 loads of A and B", "03_vectorized.cu", "gemv_vectorized",
           block_rule="power of two", float4=True, default_block=256, shared_per_thread=4),
    _stage(4, "warp_shuffle", "warp-shuffle reduction, loads in flight, A past the L1", "04_warp_shuffle.cu",
           "gemv_warp_shuffle", block_rule="multiple of 32", float4=True, default_block=256,
           variant_name="loads per trip", template=("LOADS",), variants=(1, 2, 4, 8), default_variant=2,
           fixed_args=", true", loads_from=("LOADS",)),
    _stage(5, "multirow", "several rows per block reuse each B load", "05_multirow.cu", "gemv_multirow",
           block_rule="multiple of 32", float4=True, default_block=256, variant_name="rows per block",
           template=("ROWS",), variants=(1, 2, 4, 8, 16, 32, 64), default_variant=4,
           grid_rule="block per variant rows", loads_from=("ROWS",)),
)

#: Stage 4 with A loaded plainly, through the L1: with 1 load in flight it is stage 3 with only
#: the shuffle reduction, with 2 it adds loads in flight; stage 4 itself then adds __ldcg.
STAGE4_STEP = Stage(number=4, name="warp_shuffle_l1", title="stage 4 with A read through the L1 (no __ldcg)",
                    source_path=HERE / "04_warp_shuffle.cu", launcher="launch_warp_shuffle_through_l1",
                    symbol="gemv_warp_shuffle", block_rule="multiple of 32", float4=True, default_block=256,
                    variant_name="loads per trip", template=("LOADS",), variants=(1, 2, 4, 8), default_variant=1,
                    fixed_args=", false", loads_from=("LOADS",), role="step")


#: Stage 2's coalesced loads with stage 1's 64 warps (64 blocks of 32 threads walking the rows):
#: between stages 1 and 2, it separates coalescing from the number of warps.
FEW_WARPS = Stage(number=2, name="few_warps", title="stage 2's coalesced loads with stage 1's 64 warps",
                  source_path=HERE / "02_few_warps.cu", launcher="launch_few_warps", symbol="gemv_few_warps",
                  block_rule="power of two", float4=False, default_block=32, variant_name="blocks in the grid",
                  variants=(64,), default_variant=64, grid_rule="variant blocks", shared_per_thread=4,
                  access="scalar", role="step")
STEPS = (STAGE4_STEP, FEW_WARPS)


def get_stage(stage) -> Stage:
    """A Stage from itself, its name ('warp_shuffle') or its number (4); stage 4's step by name."""
    if isinstance(stage, Stage):
        return stage
    for s in STAGES:
        if stage in (s.name, s.number, str(s.number)):
            return s
    for s in STEPS:
        if stage == s.name:
            return s
    raise GemvInputError(f"no stage {stage!r}: choose one of {[s.name for s in STAGES]} or 1 to 5")
