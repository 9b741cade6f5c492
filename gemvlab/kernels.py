"""The five stages: what each one is, building it, and launching it after checking its inputs.

    import gemvlab as lab
    C = lab.gemv(A, B, stage="warp_shuffle", block=256)     # A (M, K), B (K,) or (K, 1), on a GPU
    report = lab.build_stage("multirow")                      # works without a GPU too
    report.resources["gemv_multirow<8>"].registers

Each stage is one .cu file in gemvlab/cuda/, numbered in teaching order, with an
``extern "C"`` launcher of one shared signature. The library is built once per source
(cached across processes) and its launcher called through ctypes with device pointers, after
the checks in :mod:`gemvlab.checks` have passed. Block size (and the stage's variant: loads in
flight, rows per block) are launch arguments, so a slider never rebuilds anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import torch

from . import checks, occupancy
from .build import Built, build

CUDA_DIR = Path(__file__).parent / "cuda"


@dataclass(frozen=True)
class Stage:
    number: int
    name: str
    title: str  # a few words
    source_file: str
    launcher: str
    kernel: str  # the __global__ function; templated ones get <variant>
    block_rule: str  # "any", "power of two", "multiple of 32"
    float4: bool  # needs 16-byte alignment and K % 4 == 0
    default_block: int
    variant_name: str | None = None  # what the template parameter means
    variants: tuple = (0,)
    default_variant: int = 0
    shared_per_thread: int = 0  # dynamic shared memory bytes per thread, set at launch
    rows_per_block_is_variant: bool = False
    template_suffix: str = ""  # more template arguments after the variant: ", true"
    role: str = "stage"  # "stage", "step" (stage 4 taken apart), "yardstick", "dispatch"

    @property
    def source_path(self) -> Path:
        return CUDA_DIR / self.source_file

    def source(self) -> str:
        return self.source_path.read_text()

    def headers(self, source: str | None = None) -> dict:
        """The local headers the source #includes ({file name: text}), for the build."""
        names = re.findall(r'^#include "([^"]+)"', self.source() if source is None else source, re.M)
        return {name: (CUDA_DIR / name).read_text() for name in names}

    def kernel_name(self, variant: int | None = None) -> str:
        if self.variant_name is None:
            return self.kernel
        v = self.default_variant if variant is None else variant
        if self.name == "split_k":
            loads, b_vec, rows = split_k_template(v)
            return f"{self.kernel}<{loads}, {'true' if b_vec else 'false'}, {rows}>"
        if self.name == "rows_per_warp":  # variant = G * 2 + B_VEC
            return f"{self.kernel}<{v // 2}, {'true' if v % 2 else 'false'}>"
        if self.name == "row_tiles":
            lanes, rows, loads = row_tiles_template(v)
            return f"{self.kernel}<{lanes}, {rows}, {loads}>"
        return f"{self.kernel}<{v}{self.template_suffix}>"

    def grid(self, M: int, block: int, variant: int) -> int:
        if self.name == "naive":
            return -(-M // block)
        if self.rows_per_block_is_variant:
            return -(-M // variant)
        return M

    def constraints(self) -> list[str]:
        out = [f"block size: {self.block_rule} (1 to 1024 threads)"]
        if self.float4:
            out.append("A and B start 16-byte aligned, and K % 4 == 0 (float4 loads); "
                       "otherwise gemvlab raises GemvInputError naming the fix (no silent fallback)")
        if self.variant_name:
            out.append(f"{self.variant_name} in {list(self.variants)} (compiled in)")
        if self.name != "naive":
            per = "M" if not self.rows_per_block_is_variant else "M / rows"
            out.append(f"{per} <= 2^31 - 1 (one block per {'row' if per == 'M' else 'group of rows'})")
        return out

    def __str__(self) -> str:
        return f"stage {self.number}: {self.name} ({self.title})"


STAGES = (
    Stage(1, "naive", "one thread per row", "01_naive.cu", "launch_naive", "gemv_naive",
          block_rule="any", float4=False, default_block=32),
    Stage(2, "coalesced", "one block per row, shared-memory tree", "02_coalesced.cu",
          "launch_coalesced", "gemv_coalesced", block_rule="power of two", float4=False,
          default_block=256, shared_per_thread=4),
    Stage(3, "vectorized", "float4 loads of A and B", "03_vectorized.cu", "launch_vectorized",
          "gemv_vectorized", block_rule="power of two", float4=True, default_block=256,
          shared_per_thread=4),
    Stage(4, "warp_shuffle", "warp-shuffle reduction, loads in flight, A past the L1", "04_warp_shuffle.cu",
          "launch_warp_shuffle", "gemv_warp_shuffle", block_rule="multiple of 32", float4=True,
          default_block=256, variant_name="loads per trip", variants=(1, 2, 4, 8), default_variant=2,
          template_suffix=", true"),
    Stage(5, "multirow", "several rows per block reuse each B load", "05_multirow.cu",
          "launch_multirow", "gemv_multirow", block_rule="multiple of 32", float4=True,
          default_block=256, variant_name="rows per block", variants=(1, 2, 4, 8, 16, 32, 64),
          default_variant=4, rows_per_block_is_variant=True),
)

#: Stage 4 with A loaded plainly, through the L1: with 1 load in flight it is stage 3 with only
#: the shuffle reduction, with 2 it adds loads in flight; stage 4 itself then adds __ldcg.
#: Notebook 03 measures these steps one at a time.
STAGE4_STEP = Stage(4, "warp_shuffle_l1", "stage 4 with A read through the L1 (no __ldcg)",
                    "04_warp_shuffle.cu", "launch_warp_shuffle_through_l1", "gemv_warp_shuffle",
                    block_rule="multiple of 32", float4=True, default_block=256,
                    variant_name="loads per trip", variants=(1, 2, 4, 8), default_variant=1,
                    template_suffix=", false", role="step")

#: Not a stage: the float4 read-only passes over A that measure the read ceiling. Its variant
#: is the grid: 0 for one block per row (read_rows), else that many blocks striding (read_grid).
READ_CEILING = Stage(0, "read_ceiling", "float4 read-only pass over A", "read_ceiling.cu",
                     "launch_read_ceiling", "read_rows", block_rule="multiple of 32",
                     float4=True, default_block=512, role="yardstick")

#: The dispatcher's kernels (gemvlab.dispatch launches them; they take rows that start anywhere).
def split_k_variant(rows: int, loads: int, b_vec: bool) -> int:
    """split_k's variant number, as its launcher's switch reads it: ROWS * 16 + LOADS * 2 + B_VEC."""
    return 16 * rows + 2 * loads + int(b_vec)


def split_k_template(variant: int) -> tuple[int, bool, int]:
    """(LOADS, B_VEC, ROWS), split_k's template arguments, from its variant number."""
    return variant % 16 // 2, bool(variant % 2), variant // 16


def row_tiles_variant(lanes_per_row: int, rows_per_group: int, loads: int = 4) -> int:
    """row_tiles' variant number, as its launcher's switch reads it: G + 64 * (R - 1) + 256 * (U - 4),
    U the float4 loads per thread per trip."""
    return lanes_per_row + 64 * (rows_per_group - 1) + 256 * (loads - 4)


def row_tiles_template(variant: int) -> tuple[int, int, int]:
    """(G, R, U), row_tiles' template arguments, from its variant number."""
    return variant % 64, variant // 64 % 4 + 1, variant // 256 + 4


SPLIT_K_VARIANTS = tuple(split_k_variant(rows, loads, b) for rows, loads in ((1, 2), (1, 4), (2, 1), (2, 2), (4, 1),
                                                                            (4, 2)) for b in (0, 1))
SPLIT_K = Stage(0, "split_k", "K split into stretches, a block per stretch of one or more rows, then a fixed-order reduce",
                "split_k.cu", "launch_split_k", "gemv_split_k", block_rule="multiple of 32", float4=False,
                default_block=256, variant_name="rows * 16 + loads per trip * 2 + B as float4",
                variants=SPLIT_K_VARIANTS, default_variant=16 + 5, role="dispatch")
ROWS_PER_WARP = Stage(0, "rows_per_warp", "G lanes per row, several rows per warp",
                      "rows_per_warp.cu", "launch_rows_per_warp", "gemv_rows_per_warp",
                      block_rule="multiple of 32", float4=False, default_block=256,
                      variant_name="lanes per row * 2 + B as float4",
                      variants=tuple(2 * g + b for g in (1, 2, 4, 8, 16, 32) for b in (0, 1)),
                      default_variant=65, role="dispatch")
ROW_TILES = Stage(0, "row_tiles", "a block loads its rows as one flat stretch, then G lanes sum each row",
                  "row_tiles.cu", "launch_row_tiles", "gemv_row_tiles", block_rule="multiple of 32",
                  float4=False, default_block=128, variant_name="lanes per row + 64 x (rows per group of lanes - 1) + 256 x (loads per trip - 4)",
                  variants=tuple(row_tiles_variant(g, r, u) for g, r, us in (
                      (1, 1, range(4, 13)), (2, 1, range(4, 9)), (4, 1, (4,)), (8, 1, (4,)), (16, 1, (4,)),
                      (32, 1, (4,)), (1, 2, (4,)), (1, 4, range(4, 9))) for u in us),
                  default_variant=2, role="dispatch")
DISPATCH_KERNELS = (SPLIT_K, ROWS_PER_WARP, ROW_TILES)

#: Not a stage: one thread chasing pointers, for the memory latency (gemvlab.latency).
MEMORY_LATENCY = Stage(0, "memory_latency", "one thread chasing pointers", "memory_latency.cu",
                       "launch_pointer_chase", "pointer_chase", block_rule="any", float4=False,
                       default_block=1, role="yardstick")

#: Every kernel gemvlab launches, for the build and the occupancy checks.
ALL_KERNELS = STAGES + (STAGE4_STEP, READ_CEILING) + DISPATCH_KERNELS + (MEMORY_LATENCY,)


def get_stage(stage) -> Stage:
    """A Stage from itself, its name ('warp_shuffle') or its number (4)."""
    if isinstance(stage, Stage):
        return stage
    for s in STAGES:
        if stage in (s.name, s.number, str(s.number)):
            return s
    for s in ALL_KERNELS:
        if stage == s.name:
            return s
    raise checks.GemvInputError(f"no stage {stage!r}: choose one of {[s.name for s in STAGES]} or 1 to 5")


_built: dict = {}


def build_stage(stage) -> Built:
    """Compile a stage's .cu file (or load it from the cache); works without a GPU."""
    st = get_stage(stage)
    source = st.source()
    headers = st.headers(source)
    key = (st.source_file, source, tuple(sorted(headers.items())))
    if key not in _built:
        _built[key] = build(Path(st.source_file).stem.lstrip("0123456789_") or st.name, source,
                            headers=headers)
    return _built[key]


def build_all() -> dict:
    """Every kernel gemvlab launches (stages, stage 4's step, the read ceiling, the dispatcher's),
    built; name -> Built. Stages that share a .cu file share one build."""
    return {s.name: build_stage(s) for s in ALL_KERNELS}


def resources(stage, variant: int | None = None):
    """The ptxas line (registers, shared memory, spills) of a stage's kernel."""
    st = get_stage(stage)
    return build_stage(st).resources[st.kernel_name(variant)]


def stage_occupancy(stage, block: int, variant: int | None, limits: occupancy.SMLimits,
                    dynamic_shared_bytes: int = 0) -> occupancy.Occupancy:
    """Blocks and warps per SM for a stage's kernel at `block` threads, from its resource report
    (registers, static shared memory), the shared memory its launch adds per thread and any more
    its launch sets (row_tiles' tile sized to its rows)."""
    st = get_stage(stage)
    res = resources(st, variant)
    return occupancy.occupancy(res.registers, block, limits, res.shared_bytes,
                               st.shared_per_thread * block + dynamic_shared_bytes)


def check_fits(st: Stage, block: int, variant: int, limits: occupancy.SMLimits) -> None:
    """Raise before launching a block that cannot fit on an SM (too many registers or shared memory)."""
    res = resources(st, variant)
    if stage_occupancy(st, block, variant, limits).blocks_per_sm == 0:
        biggest = occupancy.largest_block(res.registers, limits, st.shared_per_thread, res.shared_bytes)
        raise checks.GemvInputError(
            f"{st.kernel_name(variant)} uses {res.registers} registers per thread: a block of {block} "
            f"threads needs more registers than an SM has ({limits.registers}), so the launch would fail "
            f"with 'too many resources requested for launch'. Use block <= {biggest}"
            + (" or fewer rows per block" if st.rows_per_block_is_variant else ""))


def check_inputs(A, B, stage, block: int, variant: int, out=None, require_cuda: bool = True) -> tuple[int, int]:
    """Every check for one launch, in order; returns (M, K). Needs no GPU."""
    st = get_stage(stage)
    M, K = checks.check_tensors(A, B, require_cuda)
    checks.check_block(block, st.block_rule, st.name)
    if st.variant_name:
        checks.check_variant(variant, st.variants, st.variant_name, st.name)
    checks.check_out(out, M, A.device)
    if M and K:
        if st.float4:
            checks.check_alignment(A, B, K)
        checks.check_grid(st.grid(M, block, variant), st.name)
    return M, K


def _launcher(st: Stage, A, B, C, M: int, K: int, block: int, variant: int):
    """A zero-argument function that launches the kernel on torch's current stream and raises
    if the launch itself fails. Inputs must have been checked already."""
    built = build_stage(st)
    fn = built.function(st.launcher)
    with torch.cuda.device(A.device):
        stream = torch.cuda.current_stream().cuda_stream
    args = (A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, block, variant, stream)

    def launch():
        code = fn(*args)
        if code:  # the launch check: configuration errors show at once (faults show later)
            raise RuntimeError(f"launching {st.kernel_name(variant)} failed: {built.error_string(code)} "
                               f"(CUDA error {code})")

    return launch


_limits: dict = {}


def prepare(A, B, stage="warp_shuffle", block: int | None = None, variant: int | None = None, out=None):
    """Check everything once and return (launch, C): calling launch() runs the kernel into C.

    This is what gemv() does; the benchmarks time launch() alone, so Python's checking is not
    counted as kernel time. M = 0 or K = 0 give a launch() that launches nothing.
    """
    st = get_stage(stage)
    block = st.default_block if block is None else block
    variant = st.default_variant if variant is None else variant
    M, K = check_inputs(A, B, st, block, variant, out)
    C = torch.empty(M, device=A.device, dtype=torch.float32) if out is None else out.view(M)
    if M == 0:
        launch = lambda: None  # noqa: E731 - nothing to compute
    elif K == 0:
        launch = C.zero_  # an empty sum
    else:
        device = A.device.index if A.device.index is not None else torch.cuda.current_device()
        if device not in _limits:
            _limits[device] = occupancy.limits_of_device(device)
        check_fits(st, block, variant, _limits[device])
        launch = _launcher(st, A, B, C, M, K, block, variant)
    return launch, (C.view(M, 1) if B.dim() == 2 else C)


def gemv(A, B, stage=None, block: int | None = None, variant: int | None = None, out=None):
    """C = A @ B. C has shape (M, 1) when B is (K, 1), else (M,).

    Without a stage, the dispatcher (gemvlab.dispatch) picks the kernel for the shape and takes
    any float32 A whose rows are adjacent floats: any M, K, K % 4, row stride or first address.
    With `stage` (a name or 1 to 5), that stage's kernel runs at `block` and `variant`, exactly
    as the notebooks teach it; the float4 stages then refuse unaligned rows rather than fall back.
    Every input is checked first; a bad one raises GemvInputError naming the fix, before any
    kernel runs. M = 0 or K = 0 give the right answer without a launch.
    """
    if stage is None:
        if block is not None or variant is not None:
            raise checks.GemvInputError("block and variant choose a stage's launch: pass stage= too "
                                        "(without a stage the dispatcher chooses the launch)")
        return _dispatch.gemv(A, B, out)
    launch, C = prepare(A, B, stage, block, variant, out)
    launch()
    return C


def read_ceiling_launcher(A, block: int = 512, blocks: int | None = None, sink=None):
    """A launch() for a read-only pass over all of A (float32, CUDA, contiguous, aligned):
    `blocks` = 0 reads one row per block (needs K % 4 == 0), `blocks` > 0 strides a grid of that
    many blocks over A as one flat array of float4s; None: 4 blocks per SM."""
    M, K = checks.check_tensors(A, A[0] if len(A) else A.new_empty(A.shape[1]))  # A's first row as "B"
    checks.check_block(block, READ_CEILING.block_rule, READ_CEILING.name)
    if blocks is None:
        blocks = torch.cuda.get_device_properties(A.device).multi_processor_count * 4
    if A.data_ptr() % 16 or (blocks == 0 and K % 4):
        raise checks.GemvInputError(
            "the read-ceiling kernels read A as float4s: they need A.data_ptr() % 16 == 0, and "
            + ("K % 4 == 0 to read it a row per block" if blocks == 0 else "")
            + " (pass A.clone(), or pad it with gemvlab.pad_k)")
    # The grid pass reads the first M * K // 4 float4s: when M * K % 4 != 0, up to 3 floats of A
    # are left out (at most 12 bytes of a GEMV that moves at least 4 * M * K).
    if blocks == 0:
        checks.check_grid(M, READ_CEILING.name)
    sink = sink if sink is not None else torch.empty(1, device=A.device)
    return _launcher(READ_CEILING, A, A, sink, M, K, block, blocks)


def pad_k(A, B):
    """Copies of A and B with K padded by zeros to a multiple of 4, for the float4 stages.

    Zeros add nothing to a dot product, so the result is unchanged; the price is a copy of A.
    """
    M, K = checks.check_tensors(A, B, require_cuda=False)
    pad = -K % 4
    A2 = torch.nn.functional.pad(A, (0, pad))
    B2 = torch.nn.functional.pad(B.reshape(K), (0, pad))
    return A2, (B2.view(-1, 1) if B.dim() == 2 else B2)


# At the end: gemvlab.dispatch imports this module's kernels. Imported once here rather than in
# gemv(), where a function-level import cost about 0.4 us per call on a development CPU
# (tools/explore/round7/ctypes-call-cost.txt).
from . import dispatch as _dispatch  # noqa: E402
