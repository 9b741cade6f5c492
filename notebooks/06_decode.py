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
# A language model makes each token with a **decode step**. Each layer multiplies its weights W (N x K) by one
# activation vector per sequence, or a few: a small batch, or the tokens a speculative decoder checks. Here n
# counts the vectors. The weights are usually **bf16** (bfloat16): 16 bits, float32's exponent range, 8 bits of
# precision. Below, `gemv` is gemvlab's GEMV (C = W B); an SM is one of the GPU's streaming multiprocessors.
#
# In this notebook you will:
# - halve the bytes with bf16, and keep the sums in float32;
# - see why a second to fourth vector costs almost nothing;
# - find the **ridge point**, where arithmetic catches up with memory, and use the **tensor cores**;
# - keep loads in flight while the tensor cores work, and free registers for more warps;
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
# and fp16 before sm_80. In one `step` each lane reads 16 bytes of each of the warp's R rows. Each load of W
# is converted to float once (`to_float`), then multiplied by the same elements of every vector:

# %%
dc.show_function("decode_cores", "step")

# %% [markdown]
# The prediction: half the bytes, so about half the **floor** time: the bytes over the bandwidth of the **read
# ceiling**, a plain read of W timed on the same GPU. The measurement takes two vectors, so that float32 runs
# this notebook's kernel too. Parentheses give gemv's kernel; its first template argument is the dtype: 0
# float32, 1 fp16, 2 bf16. On the H200 bf16 runs `decode_mma` (below).

# %%
dc.floors(ctx.recorded, N, K)

# %% [markdown]
# bf16 takes 0.53 of float32's time, close to the floors' 0.54. The floors' ratio is not 0.5: the smaller read
# runs at a lower rate (3983 against 4276 GB/s).
#
# ### Why the sums stay in float32
#
# A bf16 value keeps 8 bits of precision, so from 256 to 512 its values are 2 apart. A bf16 running sum of products
# at most 1 stops growing at 256. On the CPU, such sums over 512 rows of 4,096 products,
# beside float32 sums rounded to bf16 once:

# %%
dc.accumulation()

# %% [markdown]
# Summed from k = 0 up, the float32 sums are good to about 6 digits. Rounding C to
# bf16 once costs under 2^-8. The bf16 running sum stops at 256, a quarter of the answer.

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
# In gemv the time moves little from n = 1 to n = 16. torch.matmul's time is high at n = 2 to 4 (3.73x gemv's at
# n = 3) and falls back by n = 8.
#
# ### What cuBLAS does
#
# `torch.profiler` lists each kernel torch.matmul launches, with its grid and time:

# %%
dc.cublas_kernels(ctx.recorded)

# %% [markdown]
# torch.matmul runs cuBLAS, NVIDIA's matrix library. At n = 1, 8 and 16 it runs `nvjet`, its Hopper (sm_90)
# kernels. At n = 2 and 4 it picks a GEMM (matrix-matrix multiply) kernel of its `cutlass_80` family, a design
# from the Ampere GPUs before Hopper. Its 112 blocks leave 20 of 132 SMs idle. At n = 4 it takes 1.65x n = 1's
# time (51.0 against 31.0 us). The idle SMs explain at most 132 / 112 = 1.18x; the profile does not show the
# rest. At n = 3 a row of C is 3 elements, an odd count, and cuBLAS picks an older `align1` kernel: it moves data
# one element at a time.
#
# `torch.compile` with `mode="max-autotune-no-cudagraphs"` times cuBLAS and kernels that Triton (a Python GPU
# compiler) generates, and keeps the fastest. Here it is within 2 % of torch.matmul at every n.

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
# On CUDA cores, n = 16 is close to the ridge, before counting each weight's conversion to float.
#
# ### Tensor cores
#
# `mma.sync.m16n8k16`, a tensor-core instruction, multiplies 16 rows of W by 16 elements of 8 vectors. It takes
# bf16 as it is and sums in float32. Each lane holds a **fragment** of each tile: a few elements, which the PTX
# ISA (the instruction set's manual) fixes.
#
# The trick in `decode_mma.cu`, drawn below: a dot product does not care in which order it meets its K terms. Let
# g = lane / 4 and t = lane % 4. Each lane loads 8 contiguous elements of W's rows g and g + 8, and the same 8
# of vector g (and g + 8 when n > 8). Its first mma.sync takes elements 0 to 3 as the lane's fragment, the
# second 4 to 7. W's column c and B's row c sit in lanes with the same t, which load both from the same k. So
# every product still pairs W and B at the same k.

# %%
pic.mma_tile()

# %%
dc.show_function("decode_mma", "load_trip")

# %% [markdown]
# ### Keep a trip of loads in flight
#
# A block works on a **tile**: 16 rows of W; its warps split the tile's K. A **trip** is a warp's step of 32 x U
# elements along K: each lane makes U 16-byte loads per row of W and per vector of B, then the mma.sync use them.
# An **n-tile** is 8 vectors, one mma.sync's B tile: n up to 8 takes one, up to 16 two. `STAGES` (below) says what
# is in flight during a trip's mma.sync. So `decode_mma<2, 1, 4, 2>` is bf16, one n-tile, U = 4 and
# `STAGES = 2`.
#
# The problem: with two n-tiles, ptxas (the compiler's last step) issues some of a trip's loads after its first
# mma.sync. So the trip waits on memory twice.
#
# The change (`STAGES = 2`): issue the next trip's loads before this trip's mma.sync.

# %%
dc.show_function("decode_mma", "gemv_decode_mma", first="if constexpr (STAGES == 1)", last="STAGES == 3")

# %% [markdown]
# The prediction: n = 16 gains most, as its trips no longer wait twice. The measurement is from the **tuning
# run** (`bench/tune_dispatch.py --decode` on the H200). It times each shape's **plans** side by side. A plan is
# a kernel, its template arguments, and its warps per block. Each call, gemv's **rule** picks one. Per n, the
# fastest plan with `STAGES = 2`, one trip at its warps, and the fastest with one:

# %%
dc.stages(N, K)

# %% [markdown]
# At n = 16, at those warps (3), one trip in flight takes 1.26x the time of two. At n <= 8 it is a tie (0.99x to
# 1.01x). At n = 16 the fastest one-trip plan (4 warps, U = 8) takes 1.05x. The rule keeps two; n = 16 gets the
# next step's variant.
#
# ### Free registers for more warps
#
# The problem: at n = 16 two trips in flight take 168 registers per thread. An SM's 65,536 registers then hold
# 12 warps. At 2 warps per tile, this shape's 896 tiles need 1,792 warps, more than 132 SMs hold at once
# (1,584): they need a second **wave**, the blocks all SMs hold at once. In one wave, `STAGES = 2` runs 1
# warp per tile: an SM runs about 7 warps.
#
# The change (`STAGES = 3`): keep only W's next trip in flight, and load this trip's B just before its
# mma.sync. Every block reads all of B, and about 7 blocks share an SM here, so many may hit in L1 (not
# measured).

# %%
dc.show_function("decode_mma", "gemv_decode_mma", first="STAGES == 3", last="trip_checked")

# %% [markdown]
# The prediction: 128 registers, so 16 warps per SM, 2,112 in all: 2 warps per tile fit. The time should come
# near n = 8's. At 1 warp per tile, where both fit, it should be slower: B's wait is not hidden.

# %%
dc.late_b(N, K)

# %% [markdown]
# At 1 warp `STAGES = 3` is slower (0.0381 against 0.0363 ms). At 2 warps it takes 0.0335 ms: 0.92x
# `STAGES = 2`'s one-wave time, and 1.03x n = 8's. Three warps of `STAGES = 2`, in 1.7 waves, tie with it (1.02x): a
# second wave adds warps too. The rule takes `STAGES = 3` where one wave then holds at least twice the warps per
# tile. In the record, n = 16 takes 1.04x n = 1's time, and cuBLAS 1.03x gemv's (Details).

# %%
# NBVAL_IGNORE_OUTPUT
if ctx.live:  # the same count for the GPU this notebook runs on
    _ = dc.ridge(doc, N, K, live=True)

# %% [markdown]
# ## Explore
#
# Pick N, K, n and dtype: a running kernel shows gemv's plan and why, the floor, and the times against n.

# %%
# NBVAL_IGNORE_OUTPUT
dc.explorer(ctx)

# %% [markdown]
# Time against n here, beside CUDA cores at their peak (dashed). Past the ridge, arithmetic would set their
# time.

# %%
dc.plot_vs_n(doc, N, K, cores_TFLOPs=cores)

# %% [markdown]
# ## Exercise: two vectors per read of W
#
# `exercises/06_two_vectors.cu` is a bf16 decode GEMV on CUDA cores, one warp per row. It calls W's rows M, as
# notebooks 01 to 05 did, and holds its two vectors one after the other in X. As given, it computes C's first
# column only. Make each 16-byte load of W serve both vectors at the TODOs, then run the cell again. It
# passes if its error is within gemv's bound (Details) and its time is at most 1.25x gemv's on the same inputs,
# timed in the same cell. A solution is in `solutions/06_two_vectors.cu`.

# %%
lab.try_kernel("06_two_vectors")

# %% [markdown]
# ## Glossary
#
# - **bf16** (bfloat16): a sign bit, float32's 8 exponent bits, and 8 bits of precision (7 stored).
# - **CUDA cores**: the SM's ordinary arithmetic lanes.
# - **decode step**: making one token: each layer times one vector per sequence.
# - **floor**: the bytes a kernel must move over the read ceiling's bandwidth.
# - **fragment**: the elements of an mma tile that one lane holds.
# - **n-tile**: 8 vectors, one mma.sync's B tile; n up to 8 takes one, up to 16 two.
# - **plan**: a kernel, its template arguments and its warps per block.
# - **read ceiling**: a plain read of W's bytes, timed on the same GPU.
# - **ridge point**: the FLOP per byte at which arithmetic takes as long as reading the bytes.
# - **roofline**: attainable FLOP/s against FLOP per byte.
# - **rule**: gemv's choice of plan from the shape, the dtype and the GPU.
# - **tensor core**: a unit that multiplies small tiles; `mma.sync` drives it from one warp.
# - **tile**: 16 rows of W, one block's; its warps split its K.
# - **trip**: a warp's step of 32 x U elements along K: its loads, then its mma.sync.
# - **tuning run**: `bench/tune_dispatch.py --decode`, timing plans side by side on the H200.
# - **wave**: the blocks all SMs hold at once.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **The bound**: gemv's relative error (the norm of C's error over the norm of C) against float64 of the
#   rounded inputs is held to 2^-8 (bf16) or 2^-11 (fp16) for rounding C, plus K x 2^-23 for the float32 sums. It
#   assumes inputs of one sign and C in its dtype's normal range. It is a model: how `mma.sync` adds is not
#   documented, so each addition is allowed 2^-23, as for an add that truncates. No recorded row is over 0.53 of it, most of that C's rounding. `try_kernel` holds the exercise to
#   the same bound.
# - **Unused slots**: for n under 8 (or 16), the tiles' other vector slots repeat vector n - 1, and rows past N
#   repeat row N - 1. Their sums are never written.
# - **The same bits**: each plan adds in one fixed order, so the same inputs give the same bits. The plan
#   depends on n (here `decode_mma<2, 1, 4, 2>` at n <= 8, `decode_mma<2, 2, 4, 3>` at n = 16), so a vector's
#   result can differ in its last bits between batch sizes, within the bound.
# - **The peaks** use the SM clock the record of 2026-12-01 measured (1,973 MHz), so they are upper bounds: 4,096
#   dense bf16 FLOP per SM per clock at that clock is 8 % above the datasheet's 989 TFLOP/s. `mma.sync` reaches
#   less than `wgmma`, Hopper's larger asynchronous tensor-core instruction. Its ridge is still far past n = 16.
# - **Dates**: the setup cell names the main record's date; the decode study and the tuning run are from
#   2026-12-03 (UTC).
# - **Layouts**: W and B are read in 16-byte loads where W's address is 16-byte aligned and its row stride a
#   multiple of 8 elements (4 for float32); else element by element. B is first copied into
#   aligned rows unless its vectors are contiguous (strides (1, ldv)) and 16-byte aligned, with ldv a multiple
#   of 8 (4 for float32) when n > 1.
# - **torch.compile** was autotuned before timing, for every bf16 and fp16 case. Its pick is one
#   autotune outcome: at n = 2 and 4 here it kept cuBLAS's kernel (50.8 and 51.7 us profiled).
# - **Profile times** are a kernel's own duration; event times add microseconds (torch.matmul at n = 16:
#   34.2 us timed, 28.5 us profiled).
# - **The exercise** on the H200 (2026-12-02, `docs/design/exercises.md`): `solutions/06_two_vectors.cu` took
#   0.0387 ms, 1.17x gemv's 0.0331 ms there.
# - **n = 16**: each warp loads as many bytes of the vectors as of W; a kernel that loads half as many was not
#   faster (`docs/design/decode.md`). At the 8 tuning shapes the fastest one-trip plan takes 1.04x to 1.09x the
#   rule's time.
# - **Before sm_80** there is no m16n8k16 `mma.sync`, which `decode_mma` uses: gemv runs bf16 and fp16 on
#   `decode_cores.cu` there.
# - **The record**: `python -m gemvlab table --decode` prints every recorded shape, dtype and n. What it meets and
#   misses against cuBLAS is in `docs/design/decode.md`. In the tuning run, unlike the record, cuBLAS was faster
#   at n = 16 (0.0319 against gemv's 0.0335 ms).
