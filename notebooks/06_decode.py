# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 6. Decode: bf16 weights and a few vectors
#
# A language model makes each new token with a **decode step**. Each layer multiplies its weights W (N x K) by
# one activation vector (the layer's input) per sequence. Often there are a few vectors: a small batch, or the
# tokens a speculative decoder checks. The weights are usually **bf16** (bfloat16): 16 bits, with float32's
# exponent range and 8 bits of precision. n counts the vectors.
#
# In this notebook you will:
# - halve the bytes with bf16, and keep the sums in float32;
# - see why a second to fourth vector costs almost nothing, and what cuBLAS does there;
# - find the **ridge point**, where arithmetic catches up with memory, and what **tensor cores** (units that
#   multiply small matrices in one instruction) change;
# - keep the next loads in flight while the tensor cores work;
# - explore any shape, dtype and n;
# - write a kernel that reads W once for two vectors.
#
# Bold words are defined where they first appear and in the [glossary](#Glossary).

# %%
# Colab, or a Python without gemvlab: install this clone, editable (so an edited .cu file is the one used).
import importlib.util
import os
import subprocess
import sys

spec = importlib.util.find_spec("gemvlab")
if spec is None or spec.origin is None:  # absent, or only a folder named gemvlab: a namespace package
    clone = next((d for d in map(os.path.abspath, ("..", ".", "gemvlab", "/content/gemvlab"))
                  if os.path.isfile(os.path.join(d, "gemvlab", "__init__.py"))), None)
    if clone is None:
        raise SystemExit("gemvlab is not installed. Clone it first (Colab: !git clone <its URL> /content/gemvlab)")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", clone], check=True)
    sys.path.insert(0, clone)  # this process imports the clone too (the install counts from the next start)
import gemvlab

print("gemvlab", gemvlab.__version__)

# %%
# NBVAL_IGNORE_OUTPUT
import gemvlab as lab
from gemvlab import workbook as nb
from gemvlab.workbook import decode_cells as dc
from gemvlab.workbook import decode_pictures as pic

ctx = nb.setup(upto=0)
N, K = 14_336, 4096  # a Llama 3 8B MLP weight
doc = dc.live_vectors(ctx, N, K)  # on a GPU: gemv, torch.matmul and the read ceiling at n = 1 to 16, now

# %% [markdown]
# ## From float32 to bf16
#
# The problem: a GEMV's time is its bytes over the memory's bandwidth, and W is almost all of the bytes. In
# bf16, W has half the bytes of float32.
#
# The change: a kernel still reads 16 bytes per load, but a load now holds 8 elements, not 4.

# %%
pic.loads()

# %% [markdown]
# `decode_cores.cu` runs on **CUDA cores**, the SM's ordinary arithmetic lanes: float32 on any GPU, and bf16
# on GPUs without bf16 tensor cores. Each 16-byte load of W is converted to float once (`to_float`), then
# multiplied by the same elements of every vector:

# %%
dc.show_function("decode_cores", "step")

# %% [markdown]
# The prediction: half the bytes, so about half the **floor** time: the bytes over the bandwidth of the **read
# ceiling** (a plain read of W, timed on the same GPU).
# The measurement uses two vectors, so that both dtypes run this notebook's kernels (one float32 vector goes
# to notebook 05's). gemv's kernel is in parentheses:

# %%
dc.floors(ctx.recorded, N, K)

# %% [markdown]
# bf16 takes 0.53 of float32's time, close to the floors' 0.54. The floors are not in a ratio of 0.5: fewer bytes
# read at a lower rate (3894 against 4231 GB/s), as a kernel's start and end cost the same at any size. On the
# H200, bf16 runs on the tensor cores (`decode_mma`, below) and float32 on CUDA cores. Both sum in float32. A
# kernel's first template argument is the dtype's code: 0 float32, 1 fp16, 2 bf16. `decode_cores<0, 2>` then
# names the vectors it is compiled for. `decode_mma<2, 1, 4, 2>` names its n-tiles, its 16-byte loads per row per
# lane in a trip (U), and its trips in flight (all three below).
#
# ### Why the sums stay in float32
#
# bf16 keeps 8 bits of precision. From 256 to 512 its neighbouring values are 2 apart. So a running sum in bf16
# stops growing at 256 when each product is at most 1, as every product here is. Below, on this machine's CPU:
# such a sum, beside the same products summed in float32 and rounded to bf16 once:

# %%
dc.accumulation()

# %% [markdown]
# The float32 sums are good to about 7 digits. Rounding C to bf16 once costs under 2^-8. The bf16 running sum
# stops at 256, a quarter of the answer.

# %% [markdown]
# ## A few vectors share each read of W
#
# The problem: at n vectors, a GEMV does n times the arithmetic. But it still needs to read W only once.
#
# The change: each 16-byte load of W is multiplied by the same 8 elements of every vector, into n sums.

# %%
pic.shared_read(4)

# %% [markdown]
# The prediction: the bytes grow only by the vectors in and out, under 1% here. So the time should stay at
# n = 1's for n = 2, 3 and 4. The measurement, with B = x.t() for an activation x (n, K), as decode code holds
# it:

# %%
dc.vectors_table(ctx.recorded, N, K)

# %%
# NBVAL_IGNORE_OUTPUT
if ctx.live:  # the same, measured now on this GPU (without torch.compile, whose autotuning takes seconds)
    dc.vectors_table(doc, N, K)

# %% [markdown]
# gemv's time moves little from n = 1 to n = 8. torch.matmul's jumps at n = 2, 3 and 4.
#
# ### What cuBLAS does
#
# `torch.profiler` lists each kernel torch.matmul launches, with its grid and time:

# %%
dc.cublas_kernels(ctx.recorded)

# %% [markdown]
# At n = 2 and 4 cuBLAS picks a GEMM (matrix-matrix multiply) template from CUTLASS (NVIDIA's open-source GEMM
# library), built for sm_80 (Ampere). Its grid has 112 blocks for the H200's 132 SMs, so some SMs read nothing. That
# explains at most 132 / 112 = 1.18x. Its time is 1.65x n = 1's (50.9 against 30.8 us). At n = 3 it picks one
# built for sm_75, slower still. At n = 8 and 16 it returns to `nvjet`, cuBLAS's own kernels for Hopper (sm_90),
# the H200's architecture.
#
# `torch.compile` with `mode="max-autotune-no-cudagraphs"` (no CUDA graphs) times cuBLAS and several kernels that
# Triton (a compiler for GPU kernels written in Python) generates, and keeps the fastest. Here its times are
# within 1 % of torch.matmul's at n = 1 to 8; at n = 16 it kept a slower one (1.14x).

# %% [markdown]
# ## The ridge point
#
# The problem: the arithmetic grows with n, the bytes do not. Each element of W does 2n FLOP (floating-point
# operations: n multiply-adds) for its 2 bytes. So a bf16 decode GEMV does n FLOP per byte of W. The **ridge
# point** is where arithmetic takes as long as reading W. It is the GPU's FLOP/s over its bandwidth. Counted for
# the recorded H200:

# %%
bw, cores, tensor = dc.ridge(ctx.recorded, N, K)

# %% [markdown]
# A **roofline** draws it: attainable FLOP/s against FLOP per byte. Memory's slope rises until it meets a
# roof, the CUDA cores' or the tensor cores':

# %%
pic.roofline(bw, cores, tensor, "recorded H200, " + ctx.recorded["machine"]["gpu"])

# %% [markdown]
# On CUDA cores, n = 16 is close to the ridge. Each weight's conversion to float, left out of the count, makes
# them fall behind sooner.
#
# ### Tensor cores
#
# `mma.sync.m16n8k16`, a tensor-core instruction, multiplies 16 rows of W by 16 elements of 8 vectors, with
# float32 sums. It takes bf16 as it is: no conversion. Each lane holds a **fragment** of each tile: a few
# elements, which the PTX ISA (the instruction set's manual) fixes; the picture's bottom row shows them.
#
# The trick in `decode_mma.cu`: in exact arithmetic, a dot product does not care in which order it meets its K
# terms. So each lane loads 16 contiguous bytes (8 elements) of two rows of W (g and g + 8, with g = lane / 4)
# and of vector g (and g + 8 when n > 8). Its first mma.sync takes elements 0 to 3 of each as the lane's
# fragment, the second elements 4 to 7. The layout puts W's column c and B's row c in lanes with the same t (lane
# % 4), which load both from the same k. So every product still pairs W and B at the same k.

# %%
pic.mma_tile()

# %%
dc.show_function("decode_mma", "load_trip")

# %% [markdown]
# ### Keep a trip of loads in flight
#
# A **trip** is one pass of a warp over 32 U elements of its 16 rows: U 16-byte loads per row and per vector in
# each lane (U = 4 here, so 128 elements), then the mma.sync that use them. An **n-tile** is 8 vectors, one
# mma.sync's B tile: n = 1 to 8 takes one, 9 to 16 two. The problem: with two n-tiles, ptxas issues some of a
# trip's loads after its first mma.sync. That mma.sync waits for memory, so the trip waits twice.
#
# The change (`STAGES = 2`): issue the next trip's loads before this trip's mma.sync. Registers hold both trips.

# %%
dc.show_function("decode_mma", "gemv_decode_mma", first="if constexpr (STAGES == 1)", last="trip_checked")

# %% [markdown]
# The prediction: with one trip in flight, a warp at n = 16 waits on memory twice per trip; with two, the next
# trip's loads fly while this trip's mma.sync run. So n = 16 should gain most. Measured in the tuning run, the
# same plan with two trips in flight and with one. "Warps" are a block's warps, which split each tile's K
# between them:

# %%
dc.stages(N, K)

# %% [markdown]
# At n = 16 and the same warps, one trip in flight takes 1.39x the time of two. At n <= 8 it is a tie here: two
# warps per tile already keep enough loads in flight to read W at 0.90 of the read ceiling or more. More warps
# hide the wait at n = 16 too: one trip with 4 warps of U = 8 ties. Yet in the record's table above, n = 16
# still takes 1.15x n = 1's time, slower than cuBLAS, though the tensor cores' ridge is far past it (Details).

# %%
# NBVAL_IGNORE_OUTPUT
if ctx.live:  # the same count for the GPU this notebook runs on
    _ = dc.ridge(doc, N, K, live=True)

# %% [markdown]
# ## Explore
#
# Pick N, K, n and dtype. A running Jupyter kernel shows gemv's kernel and why, the floor, and the recorded or
# live times against n.

# %%
# NBVAL_IGNORE_OUTPUT
dc.explorer(ctx)

# %% [markdown]
# Time against n at 14,336 x 4,096. The dashed line is CUDA cores at their peak: the longer of reading W and
# doing the arithmetic, drawn to n = 32. Past the ridge, arithmetic sets it.

# %%
dc.plot_vs_n(doc, N, K, cores_TFLOPs=cores)

# %% [markdown]
# ## Exercise: two vectors per read of W
#
# `exercises/06_two_vectors.cu` is a bf16 decode GEMV on CUDA cores, one warp per row. The file calls W's rows
# M, as notebooks 01 to 05 did, and the vectors X. Its two vectors lie one after the other in X. As given, it
# computes C's first column only. Make each 16-byte load of W serve both vectors (the TODOs say where). Edit the
# file, then run the cell again. It passes when its error is within gemv's bound (Details) and it takes at most
# 1.25x gemv's time at this shape with two vectors. A solution is in `solutions/06_two_vectors.cu`.

# %%
lab.try_kernel("06_two_vectors")

# %% [markdown]
# ## Glossary
#
# - **bf16** (bfloat16): a sign bit, float32's 8 exponent bits, and 8 bits of precision (7 stored).
# - **CUDA cores**: the SM's ordinary arithmetic lanes.
# - **decode step**: making one token; each layer multiplies its weights by one vector per sequence.
# - **floor**: the bytes a kernel must move over the read ceiling's bandwidth.
# - **fragment**: the elements of an mma tile that one lane holds.
# - **n-tile**: 8 vectors, one mma.sync's B tile; n up to 8 takes one, up to 16 two.
# - **read ceiling**: a plain read of W's bytes, timed on the same GPU.
# - **ridge point**: the FLOP per byte at which arithmetic takes as long as reading the bytes.
# - **roofline**: attainable FLOP/s against FLOP per byte.
# - **tensor core**: a unit that multiplies small tiles in one warp instruction.
# - **trip**: one pass of a warp over 32 U elements of its 16 rows (U 16-byte loads per lane per row): its
#   loads, then the mma.sync that use them.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **The bound**: gemv's relative error (the norm of C's error over the norm of C) against float64 of the
#   rounded inputs is held to 2^-8 (bf16) or 2^-11 (fp16) for rounding C, plus K x 2^-23 for the float32 sums. It
#   assumes inputs of one sign and C in its dtype's normal range. It is a model: how `mma.sync` adds is not
#   documented. No recorded row is over 0.50 of it, most of that C's rounding. `try_kernel` holds the exercise to
#   the same bound.
# - **Unused slots**: for n under 8 (or 16), the tiles' other vector slots repeat vector n - 1, and rows past N
#   repeat row N - 1. Their sums are never written.
# - **The same bits**: each plan adds in one fixed order, so the same inputs give the same bits. The plan
#   depends on n (here 2 warps per tile at n <= 8, 1 at n = 16), so a vector's result can differ in its last
#   bits between batch sizes, within the bound.
# - **The peaks** use the SM clock the record of 2026-12-01 measured (1,973 MHz), so they are upper bounds: 4,096
#   dense bf16 FLOP per SM per clock at that clock is 8 % above the datasheet's 989 TFLOP/s. `mma.sync` reaches
#   less than `wgmma`, Hopper's larger asynchronous tensor-core instruction. Its ridge is still far past n = 16.
# - **Dates**: the setup cell names the main record's date; the decode study was recorded on 2026-12-02 (UTC).
# - **Layouts**: W and B are read in 16-byte loads where W's address is 16-byte aligned and its row stride a
#   multiple of 8 elements (4 for float32); else element by element. B is first copied into
#   aligned rows unless its vectors are contiguous (strides (1, ldv)) and 16-byte aligned, with ldv a multiple
#   of 8 (4 for float32) when n > 1.
# - **torch.compile** was compiled and autotuned before timing, for every bf16 and fp16 case. Its pick is one
#   autotune outcome: at n = 2 and 4 here it kept cuBLAS's kernel (51.0 and 52.6 us profiled).
# - **Profile times** are a kernel's own duration; the tables' event times add a few microseconds (torch.matmul
#   at n = 16: 32.9 us timed, its kernel 29.1 us profiled).
# - **The exercise** on the H200 (2026-12-02, `docs/design/exercises.md`): `solutions/06_two_vectors.cu` took
#   0.0387 ms, 1.17x gemv's 0.0331 ms with two vectors.
# - **n = 16**: each warp loads as many bytes of the vectors as of W. A kernel that loads half as many was not
#   faster. What costs the rest is not settled (`docs/design/decode.md`). At the 8 tuning shapes, one trip in
#   flight at its fastest warps takes 1.00x to 1.08x the rule's time.
# - **Before sm_80** there is no m16n8k16 `mma.sync` (the shape `decode_mma` uses): gemv runs bf16 and fp16
#   on `decode_cores.cu` there.
# - **The record**: `python -m gemvlab table --decode` prints every recorded shape, dtype and n. What it meets and
#   misses against cuBLAS is in `docs/design/decode.md`.
