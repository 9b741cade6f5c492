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
# activation vector per sequence, or a few: a small batch, or a few guessed tokens checked in one step
# (speculative decoding). Here n counts the vectors. The weights are usually **bf16** (bfloat16): 16 bits, float32's exponent range, 8 bits of
# precision. Below, `gemv` is gemvlab's GEMV (C = W B); an SM is one of the GPU's streaming multiprocessors.
#
# In this notebook you will:
# - halve the bytes with bf16, and keep the sums in float32;
# - see why a second to fourth vector costs almost nothing;
# - find the **ridge point** and use the **tensor cores**;
# - keep loads in flight while the tensor cores work, and free registers for more warps;
# - write a kernel that reads W once for two vectors.
#
# Bold words are defined where they first appear, and in the [glossary](#Glossary).

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
# `decode_cores.cu` runs on **CUDA cores**, the SM's ordinary arithmetic lanes: gemv's float32 at n > 1, and its
# bf16 and fp16 before sm_80 (Ampere). In one `step` each lane reads 16 bytes of each of the warp's R rows. Each load of W
# is converted to float once (`to_float`), then multiplied by the same elements of every vector:

# %%
dc.show_function("decode_cores", "step")

# %% [markdown]
# The prediction: half the bytes, so about half the **floor** time: the bytes over the bandwidth of the **read
# ceiling**, a plain read of W timed on the same GPU. At n = 1, float32 runs notebook 05's kernels, so the
# measurement takes two vectors. Parentheses give gemv's kernel; its first template argument is the dtype: 0
# float32, 1 fp16, 2 bf16 (`decode_cores`'s second is n). On the H200 bf16 runs `decode_mma` (below).

# %%
dc.floors(ctx.recorded, N, K)

# %% [markdown]
# bf16 takes 0.53 of float32's time, close to the floors' 0.54. The floors' ratio is not 0.5: each timed call
# carries a fixed cost of about 4 us, which weighs more on the shorter read (Details).
#
# ### Why do the sums stay in float32?
#
# A bf16 value keeps 8 bits of precision, so from 256 to 512 its values are 2 apart. A bf16 running sum of products
# at most 1 stops growing at 256. The cell below sums 512 rows of 4,096 products on the CPU, both ways:

# %%
dc.accumulation()

# %% [markdown]
# Summed from k = 0 up, the float32 sums are good to about 6 digits. Rounding C to
# bf16 once costs under 2^-8. The bf16 running sum stops at 256, a quarter of the answer (about 1,024).

# %% [markdown]
# ## A few vectors share each read of W
#
# The problem: at n vectors, a GEMV does n times the arithmetic. But it still needs to read W only once.
#
# The change: each 16-byte load of W is multiplied by the same 8 elements of every vector, into n sums.

# %%
pic.shared_read(4)

# %% [markdown]
# The prediction: the bytes grow only by the vectors in and out, 0.13 % of W at n = 4. So the time should stay at
# n = 1's for n = 2, 3 and 4. The measurement, with B = x.t() for an activation x (n, K):

# %%
dc.vectors_table(ctx.recorded, N, K)

# %%
# NBVAL_IGNORE_OUTPUT
if ctx.live:  # the same, measured now on this GPU (without torch.compile, whose autotuning takes seconds)
    dc.vectors_table(doc, N, K)

# %% [markdown]
# In gemv the time moves little from n = 1 to n = 16. The time of torch.matmul is high at n = 2 to 4 (3.73x gemv's
# at n = 3) and falls back by n = 8.
#
# ### What does cuBLAS do?
#
# `torch.profiler` lists each kernel torch.matmul launches, with its grid and time:

# %%
dc.cublas_kernels(ctx.recorded)

# %% [markdown]
# torch.matmul runs cuBLAS, NVIDIA's matrix library. At n = 1, 8 and 16 it runs `nvjet`, its Hopper kernels.
# At n = 2 and 4 it runs `cutlass_80`, a GEMM (matrix-matrix) kernel designed for Ampere. Its 112 blocks leave
# 20 of 132 SMs idle. At n = 4 it runs 51.0 us, against 31.0 us at n = 1. Idle SMs explain at most 132 / 112 =
# 1.18x of that. At n = 3 a row of C is 3 elements, and cuBLAS picks an `align1` kernel: one element per load.
# `torch.compile` (max-autotune, Details) is within 2 % of torch.matmul at every n.

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
# ### What do tensor cores do?
#
# The tensor-core instruction `mma.sync.m16n8k16` multiplies 16 rows of W (m) by 16 elements along K (k) of 8
# vectors (its n). It takes bf16 and sums in float32. Each lane holds a **fragment** of each
# operand: a few elements, which the PTX ISA (the instruction set's manual) fixes.
#
# The trick in `decode_mma.cu`, drawn below: a dot product does not care in which order it meets its K terms. Let
# g = lane / 4 and t = lane % 4. Each lane loads 8 contiguous elements of W's rows g and g + 8, and the same 8
# of vector g (and g + 8 when n > 8). Its first mma.sync takes elements 0 to 3 as the lane's fragment, the
# second 4 to 7. W's column c and B's row c sit in lanes with the same t. Those lanes load both from the same
# k, so every product still pairs W and B at the same k.

# %%
pic.mma_tile()

# %%
dc.show_function("decode_mma", "load_trip")

# %% [markdown]
# ### Keep a trip of loads in flight
#
# A block works on a **tile**: 16 rows of W. A **trip** is a warp's step of 32 x U elements along K: each lane
# makes U 16-byte loads for each of its rows (g and g + 8) and each of its vectors, then the mma.sync use them.
# The block's warps take the tile's trips in turn, then add their sums in shared memory in a fixed order.
# An **n-tile** is 8 vectors, one mma.sync's B tile: n up to 8 takes one, up to 16 two. `STAGES` (below) says what
# is in flight during a trip's mma.sync. So `decode_mma<2, 1, 4, 2>` is bf16, one n-tile, U = 4 and
# `STAGES = 2`.
#
# The problem: with two n-tiles, ptxas (the compiler's last step) issues 4 of a trip's 16 loads (U = 4) after
# its first mma.sync. So the trip waits on memory twice.
#
# The change (`STAGES = 2`): issue the next trip's loads before this trip's mma.sync.

# %%
dc.show_function("decode_mma", "gemv_decode_mma", first="if constexpr (STAGES == 1)", last="STAGES == 3")

# %% [markdown]
# The prediction: n = 16 gains most, as its trips no longer wait twice. The measurement is from the **tuning
# run** (`bench/tune_dispatch.py --decode` on the H200). It times each shape's **plans** side by side. A plan is
# a kernel, its template arguments, and its warps per block. Each call, gemv's **rule** picks one. For each n,
# the table gives the fastest `STAGES = 2` plan, `STAGES = 1` at the same warps, and the fastest `STAGES = 1`
# plan:

# %%
dc.stages(N, K)

# %% [markdown]
# At n = 16, at those warps (3), one trip in flight takes 1.26x the time of two. At n <= 8 it is a tie (0.99x to
# 1.01x). At n = 16 the fastest `STAGES = 1` plan (4 warps, U = 8) takes 1.05x. The rule keeps `STAGES = 2` at
# n <= 8; n = 16 gets the next step's `STAGES = 3`.
#
# ### Free registers for more warps
#
# The problem: at n = 16 two trips in flight take 168 registers per thread. An SM's 65,536 registers then hold
# 12 warps, and 132 SMs hold 132 x 12 = 1,584. A **wave** is the blocks all SMs hold at once. At 2 warps per
# tile, this shape's 896 tiles need 1,792 warps: a second wave. In one wave, `STAGES = 2` runs 1 warp per
# tile: 896 / 132, about 7 warps per SM.
#
# The change (`STAGES = 3`): keep only W's next trip in flight, and load this trip's B just before its
# mma.sync. Every block reads all of B, and about 7 blocks share an SM here, so B's loads can hit in L1.

# %%
dc.show_function("decode_mma", "gemv_decode_mma", first="STAGES == 3", last="trip_checked")

# %% [markdown]
# The prediction: 128 registers, so 16 warps per SM, 2,112 in all: 2 warps per tile fit. The time should come
# near n = 8's. At 1 warp per tile, where both fit, it should be slower: B's wait is not hidden.

# %%
dc.late_b(N, K)

# %% [markdown]
# At 1 warp `STAGES = 3` is slower (0.0381 against 0.0363 ms). At 2 warps it takes 0.0335 ms: 0.92x
# `STAGES = 2`'s best one-wave time (1 warp). It is 1.03x n = 8's 0.0325 ms. `STAGES = 2` at 2 warps is slow
# (0.0411 ms): its second wave holds only 208 of 1,792 warps. The rule takes `STAGES = 3` where its one wave
# holds at least twice `STAGES = 2`'s warps per tile. In the record, n = 16 takes 1.04x n = 1's time.

# %%
# NBVAL_IGNORE_OUTPUT
if ctx.live:  # the same count for the GPU this notebook runs on
    _ = dc.ridge(doc, N, K, live=True)

# %% [markdown]
# ## Explore
#
# Pick N, K, n and dtype: the widget shows gemv's plan and why, the floor, and the times (live on a GPU).

# %%
# NBVAL_IGNORE_OUTPUT
dc.explorer(ctx)

# %% [markdown]
# Time against n, beside CUDA cores at their peak (dashed). Past the ridge, arithmetic would set their time.

# %%
dc.plot_vs_n(doc, N, K, cores_TFLOPs=cores)

# %% [markdown]
# ## Exercise: two vectors per read of W
#
# Open `exercises/06_two_vectors.cu`: a bf16 GEMV on CUDA cores, one warp per row, 14,336 x 4,096, n = 2. It
# calls W's rows M, and holds the two vectors one after the other in X. As given, it computes C's first column
# only. At the TODOs, make each 16-byte load of W serve both vectors, then run the cell again.
#
# It passes if its error is within gemv's bound (Details) and its time is at most 1.25x gemv's. Both kernels
# wait on reading W. Without a GPU the cell only builds it (BUILT, NOT TIMED): one read of W for two vectors
# adds one vector's loads, not W's. The solution: `solutions/06_two_vectors.cu`.

# %%
lab.try_kernel("06_two_vectors")

# %% [markdown]
# ## Glossary
#
# - **bf16** (bfloat16): float32's 8 exponent bits, and 8 bits of precision.
# - **CUDA cores**: the SM's ordinary arithmetic lanes.
# - **decode step**: making one token: each layer times one vector per sequence.
# - **floor**: the bytes a kernel must move over the read ceiling's bandwidth.
# - **fragment**: the elements of an mma tile that one lane holds.
# - **n-tile**: 8 vectors, one mma.sync's B tile.
# - **plan**: a kernel, its template arguments and its warps per block.
# - **read ceiling**: a plain read of W's bytes, timed on the same GPU.
# - **ridge point**: the FLOP per byte at which arithmetic takes as long as reading the bytes.
# - **roofline**: attainable FLOP/s against FLOP per byte.
# - **rule**: gemv's choice of plan.
# - **tensor core**: a unit that multiplies small tiles (`mma.sync`).
# - **tile**: 16 rows of W, one block's; its warps take its trips in turn.
# - **trip**: a warp's step of 32 x U elements along K.
# - **tuning run**: `bench/tune_dispatch.py --decode`: plans timed together.
# - **wave**: the blocks all SMs hold at once.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **The bound**: gemv's relative error (norm of C's error over norm of C) against float64 of the rounded
#   inputs is held to 2^-8 (bf16) or 2^-11 (fp16) for rounding C, plus K x 2^-23 for the float32 sums. It
#   assumes inputs of one sign and C in its dtype's normal range. How `mma.sync` adds is not documented, so each
#   addition is allowed 2^-23, as for an add that truncates. The largest recorded error is 0.53 of the bound,
#   mostly C's rounding. `try_kernel` holds the exercise, on uniform [0, 1) inputs, to the same bound.
# - **Unused slots**: vector slots past n repeat vector n - 1, and rows past N repeat row N - 1. Their sums are
#   never written.
# - **The same bits**: each plan adds in one fixed order. The order depends on the kernel, U and the warps per
#   block, not on the n-tiles or `STAGES`. Where the rule changes U or the warps with n (at 4,096 x 4,096: 8
#   warps at n <= 8, 6 at n = 16), a vector's last bits can change with n, within the bound.
# - **The peaks** use the record's SM clock (1,973 MHz), so they are upper bounds, 8 % above the datasheet's
#   989 bf16 TFLOP/s. `wgmma`, Hopper's larger tensor-core instruction, reaches more than `mma.sync`.
# - **Dates**: the setup cell names the main record's date; the decode study and tuning run are from 2026-12-03.
# - **Layouts**: 16-byte loads need W 16-byte aligned with a row stride of 8k elements (4k for float32).
#   B is copied into aligned rows unless its vectors are contiguous and aligned.
# - **torch.compile** (`mode="max-autotune-no-cudagraphs"`) times cuBLAS and Triton kernels and keeps the
#   fastest. It was tuned before timing; at n = 2 and 4 here it kept cuBLAS's kernel.
# - **Floors** are event-timed, like gemv: a measured reference, not a bound. The two floors fit about 4 us per
#   call plus the bytes at 4.6 TB/s. Profiled, cuBLAS at n = 16 takes 28.5 us (34.2 us timed), under the bf16
#   floor (29.5 us).
# - **L1**: at n = 16 with `STAGES = 2` (1 warp per tile), Nsight Compute counted 42.9 % of load requests
#   hitting L1 (`docs/design/decode.md`).
# - **The exercise** on the H200 (2026-12-02, `docs/design/exercises.md`): the solution took 0.0387 ms, 1.17x
#   gemv's 0.0331 ms in that run. Built with CUDA 13.0, the starter makes 10 loads of 128 bits, the solution 15.
# - **n = 16**: at the 8 tuning shapes the fastest `STAGES = 1` plan takes 1.04x to 1.09x the rule's time.
# - **The record**: `python -m gemvlab table --decode` prints every case; `docs/design/decode.md` says where
#   gemv meets and misses cuBLAS. In the tuning run cuBLAS was faster at n = 16 (0.0319 against 0.0335 ms).
