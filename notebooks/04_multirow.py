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
# # 4. Several rows per block, and which kernel for which shape
#
# Every block of stages 2 to 4 reads all of B, once per row. Stage 5 gives a block several rows, so that each
# load of B serves all of them. Whether that pays depends on the shape. So this notebook also times every stage
# on ten shapes, and asks why torch.matmul is slower at the headline shape.
#
# In this notebook you will:
# - read stage 5's change, its registers and spills, and measure it;
# - find which kernel wins at which shape, and why none wins everywhere;
# - see what torch.matmul launches, and what the hardware counters say;
# - run two more pitfalls: 32-bit offsets and too many registers;
# - write a two-row kernel yourself.
#
# Words in bold are defined where they first appear, and in the [glossary](#Glossary).

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
import torch

import gemvlab as lab
from gemvlab import workbook as nb
from gemvlab.workbook import pictures as pic
from gemvlab.workbook import plots

ctx = nb.setup(upto=5)  # on a GPU: stages 1 to 5 are measured now (about 15 s)

# %% [markdown]
# ## Stage 5: several rows per block
#
# A block now computes `ROWS` neighbouring rows. Each trip, a thread loads one float4 of B and the float4 at the
# same column of each of its rows. The diff from stage 4:

# %%
nb.show_diff("warp_shuffle", "multirow")

# %%
pic.access("multirow", rows_per_block=4)

# %% [markdown]
# ## Registers and spills
#
# Each extra row costs a float4 and a running sum per thread, in registers. At 64 rows the compiler runs out of
# its 255 registers per thread and **spills**. It keeps values in **local memory**: per-thread memory in DRAM,
# reached through the caches. The report shows the spill bytes; the SASS shows them as `STL` and `LDL`:

# %%
nb.build_report("multirow")
nb.sass_lines("multirow", 64, pattern="LDL|STL", limit=4)

# %% [markdown]
# At the headline shape B is far smaller than the L2, so reads of B already hit the L2. The model counts only
# A's bytes in flight, and it already has stage 4 at the read ceiling:

# %%
print(f"B: {4 * ctx.doc['headline']['K'] / 2**20:.0f} MiB; L2: {ctx.doc['machine']['l2_bytes'] / 2**20:.0f} MiB  [{ctx.label}]")
nb.predict_line(ctx, "multirow")

# %%
nb.table(ctx, upto=5)

# %% [markdown]
# Stage 5 with 4 rows per block, by block size. On a GPU the slider times it now; without one it shows the
# recorded sweep.

# %%
# NBVAL_IGNORE_OUTPUT
nb.block_slider(ctx, "multirow", 4)

# %% [markdown]
# ## Which kernel for which shape
#
# The reference sweep has ten shapes, from few long rows to many short ones. Each stage runs at its best
# block size, re-timed round-robin beside torch.matmul and the read ceiling. For stage 5, `/2` means 2 rows
# per block:

# %%
nb.shapes_table(ctx.recorded)
_ = plots.plot_shapes(ctx.recorded)

# %% [markdown]
# Below, `gemv` is notebook 05's dispatcher. The sweep runs once, so a lead of a few percent is not yet a real
# step: notebook 03's rule asks for two runs.

# %%
nb.which_kernel(ctx.recorded)

# %% [markdown]
# Three cases stand out:
# - **Many long rows:** one block per row comes within about 2% of the read ceiling, and extra rows per block
#   add nothing.
# - **Many short rows** (K = 128): a block has little work, and fewer, fuller blocks win.
# - **Few rows** (M = 16 or 1): the grid leaves most SMs idle.
#
# At M = 16, stage 4's grid at its best block size, 1024 threads, is 16 blocks of 32 warps for 132 SMs:

# %%
pic.sm_map(16, 32, 132)

# %% [markdown]
# No single kernel serves every shape. Notebook 05 builds a dispatcher that picks one per shape.
#
# ## What torch.matmul does differently
#
# torch.matmul runs cuBLAS, NVIDIA's matrix library. `torch.profiler` shows the kernels it launches at the
# headline shape, with their grids and times:

# %%
nb.matmul_kernels(ctx)
nb.matmul_overhead(ctx)

# %% [markdown]
# Its grid suggests it splits each row into 256 stretches and adds the partial sums in a second kernel. Its
# blocks run in hundreds of waves, where stage 4 has 2048 blocks, one per row. It takes 0.472 ms beyond the read
# ceiling; the cause is not separated here.
#
# Nsight Compute reads the hardware's **counters**. The columns: megabytes read from DRAM; millions of sectors
# through the L2 and the L1; the L1's hit rate; L1 sectors per load request (`sect/req`: 4 for a warp's
# contiguous 4-byte loads, 8 for 8-byte, 16 for float4); and the share of warp slots in use (`warps`). Each
# kernel runs at one fixed block size (the `grid x block` column), not the table's pick. `gemv_split_k` is
# notebook 05's dispatcher:

# %%
# NBVAL_IGNORE_OUTPUT
nb.counters(ctx)

# %% [markdown]
# Every kernel reads A from DRAM once. Each GEMV kernel, cuBLAS's included, keeps 96% to 99% of warp slots
# busy. They differ in cache traffic.
# With `__ldcg` (the `true` kernel) the L1 hit rate was 43% against 39%, and L2 sectors about 3% fewer, in one
# launch each. The cuBLAS kernel
# `dot_kernel` moves twice the L1 sectors of the others.
#
# ## Pitfall: 32-bit offsets
#
# `row * K` in `int` overflows once it passes 2^31 - 1. At the headline shape the largest row offset,
# 2047 · 2^20, still fits. One more row does not. `gemvlab/pitfalls/int32_offsets.cu` is stage 2 with `int`:

# %%
nb.pitfall(ctx, "int32_offsets")

# %% [markdown]
# ## Pitfall: too many registers
#
# 32 rows per block need about 168 registers per thread. A block of 1024 such threads needs more registers than
# an SM has, and the launch fails at once. The library says so before launching:

# %%
from gemvlab.gpu.occupancy import HOPPER
from gemvlab.stages.launch import check_fits

nb.pitfall(ctx, "too_many_registers")
try:
    check_fits(lab.get_stage("multirow"), 1024, 32, HOPPER)  # the check gemvlab runs, for an H200
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %% [markdown]
# ## Looking back

# %%
nb.look_back(ctx, upto=5)

# %%
pic.littles_law_of(ctx, upto=5)

# %% [markdown]
# ## A KernelBench solution
#
# **KernelBench** is a public set of problems, each a PyTorch model for a custom kernel to beat. Its level 1
# problem 4 is this GEMV at the headline shape. `python -m gemvlab kernelbench`
# writes a solution file that embeds a stage's `.cu` file verbatim; `--check` times it on a GPU:

# %%
from gemvlab.cli import kernelbench

print(kernelbench.solution_source("warp_shuffle").split("CUDA_SOURCE")[0][:600])

# %% [markdown]
# ## Exercise: two rows per block
#
# `exercises/04_two_rows.cu` computes rows 2b and 2b + 1 in block b, with one load of B for both. It runs at
# 65,536 rows of 4,096 floats. Row 0 is done;
# write row 1's load and sum, and run the cell. The block needs at least 64 threads: warp r adds row r. It passes when the result is right and the time is at most 1.1
# times stage 5's with 2 rows per block. A solution is in `solutions/04_two_rows.cu`.

# %%
lab.try_kernel("04_two_rows")

# %% [markdown]
# ## Glossary
#
# - **counters**: the hardware's own tallies of bytes and instructions, read by Nsight Compute (`ncu`).
# - **cuBLAS**: NVIDIA's matrix library, which torch.matmul calls.
# - **KernelBench**: a public set of problems, each a PyTorch model for a custom kernel to beat.
# - **local memory**: per-thread memory in DRAM, reached through the caches; where spilled registers go.
# - **spill**: a value the compiler keeps in local memory because the registers ran out.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **The shape sweep** times stages 2 to 5 at 64, 256 and 1024 threads (and stage 5 at 2 to 16 rows), then each
#   at its best, round-robin. K = 4099 runs only the scalar stages; the float4 stages refuse it.
# - **A cost per block** is the likely reason for short rows: stages 2 to 4 take about the same time there,
#   whatever their loads. The cost itself is not measured apart.
# - **cuBLAS's grid** is read from the profile; which floats each block reads is not shown, only the grid.
# - **The int32 demo** needs 8 GiB free; where the wrapped offset points decides between a fault and wrong
#   numbers.
# - **The counters** come from one launch of each kernel under Nsight Compute with the clocks left alone
#   (`--clock-control none`); one launch each gives no spread.
