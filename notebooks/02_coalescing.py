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
# # 2. One block per row: coalesced loads, and many more warps
#
# Stage 1 has two problems. Each load instruction of a warp touches 32 cache lines, one per row. And M = 2048
# rows make only 64 warps, which keep far too few bytes in flight. Stage 2 fixes both at once by giving each row
# a whole block.
#
# In this notebook you will:
# - read the change from stage 1 to stage 2, and see which threads read which bytes;
# - predict stage 2's time, then measure it;
# - take stage 2's two changes apart, to see which one pays;
# - meet occupancy, waves and the shared-memory tree;
# - run the tree's three classic bugs;
# - write the tree yourself.
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

ctx = nb.setup(upto=2)  # on a GPU: stages 1 and 2 are measured now (about 10 s)

# %% [markdown]
# ## The change
#
# Thread `t` of a block now reads elements `t`, `t + blockDim.x`, `t + 2·blockDim.x` and so on of the block's
# row. Each thread ends with a partial sum, and the block adds them. The diff from stage 1:

# %%
nb.show_diff("naive", "coalesced")

# %% [markdown]
# At each step the 32 threads of a warp read 32 neighbouring floats: 128 contiguous bytes, one cache line. This
# is **coalescing**: a warp's addresses fall in as few cache lines as possible.

# %%
pic.access("coalesced")

# %% [markdown]
# The L1 cache fills a line in 32-byte sectors. Stage 1's load needs 32 sectors and uses 4 bytes of each at
# once. The other 28 bytes are the thread's next floats; they are used later if they are still in the L1.
# Stage 2's load needs 4 sectors and uses all of them at once:

# %%
pic.sectors()

# %% [markdown]
# ## The tree
#
# The block adds its threads' partial sums as a tree in **shared memory**. That is a small fast memory on the
# SM, shared by a block's threads. Half the threads add the other half's values, then half of those, and so on.
# `__syncthreads()` is a **barrier**: no thread of the block passes it until all have reached it. The tree needs
# one between its levels.

# %%
pic.tree_vs_shuffle(8, shuffle=False)

# %% [markdown]
# ## The prediction
#
# Each thread now waits for one 4-byte load at a time: 128 bytes in flight per warp. But the grid has 2048
# blocks, so every SM can be full of warps. The model:

# %%
nb.predict_line(ctx, "coalesced")

# %% [markdown]
# ## The measurement

# %%
nb.table(ctx, upto=2)
_ = plots.plot_stages(ctx.doc, upto=2)

# %% [markdown]
# ## Which change pays?
#
# Stage 2 changes two things: coalesced loads, and far more warps. A third kernel separates them. It has stage
# 2's coalesced loads, but only stage 1's 64 warps: 64 blocks of 32 threads that walk the rows
# (`gemvlab/stages/02_few_warps.cu`). The three, timed round-robin in one run:

# %%
nb.warps_table(ctx.recorded)

# %% [markdown]
# With stage 1's 64 warps, coalescing alone is 4.41x slower in one run (the step column). A coalesced warp keeps 128 bytes
# in flight, a scattered one about 1 KiB. The model gives 351.1 ms against 88.2 ms, about 4x: a scattered warp's
# round takes about twice as long (556 + 118 against 334 ns, notebook 01). With 2048 warps, coalesced loads are 32.82x
# faster still. So here coalescing pays only together with many warps.
#
# On Little's law's curve, stage 2 sits far to the right of stage 1. Each point is a stage's bytes in flight
# per SM in the model, averaged over all 132 SMs. Stage 2's point sits below the curve by the ratio of its
# measured time to the model's. Stage 1's sits lower still: its model round is 674 ns, not the curve's 334 ns.

# %%
pic.littles_law_of(ctx, upto=2)

# %% [markdown]
# Coalescing also cuts the cache lines one load instruction touches, from 32 to 1.
#
# ## Occupancy and waves
#
# **Occupancy** is the warps resident on an SM over the most it can hold, 64 on the H200. The **occupancy
# calculator** says how many blocks *could* share an SM, from their registers, shared memory and threads. The
# grid says how many exist. 2048 blocks on 132 SMs is 15.5 per SM.

# %%
nb.occupancy_table("coalesced", recorded=ctx.recorded)

# %% [markdown]
# A **wave** is the set of blocks resident at once. Blocks beyond it wait for a slot. At 256 threads, 8 blocks
# fit per SM, so 2048 blocks run in two waves:

# %%
pic.waves(2048, 8, 132)

# %% [markdown]
# The model at every block size, beside the recorded time. Small blocks leave SMs short of warps:

# %%
nb.sweep_model(ctx, "coalesced")

# %%
# NBVAL_IGNORE_OUTPUT
nb.block_slider(ctx, "coalesced")

# %% [markdown]
# ## Pitfall: a shared array sized for another block
#
# Stage 2 sizes its shared array at launch (`extern __shared__`, the third launch parameter). A common version
# declares `__shared__ float partial[256]` and is later launched with 1024 threads. Threads 256 to 1023 then
# write past the array:

# %%
nb.pitfall(ctx, "smem_too_small")

# %%
nb.pitfall(ctx, "smem_sanitizer")

# %% [markdown]
# ## Pitfall: a block that is not a power of two
#
# With 384 threads the halving goes 192, 96, 48, 24, 12, 6, 3, then 1. The value in slot 2 is never added.
# There is no error message, only a wrong answer. The library refuses such a block before launching.
# Here the checks alone run, so that they need no GPU:

# %%
from gemvlab.stages.launch import check_inputs

try:
    check_inputs(torch.rand(8, 64), torch.rand(64), "coalesced", block=384, variant=0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %%
nb.pitfall(ctx, "not_power_of_two")

# %% [markdown]
# ## Pitfall: a missing `__syncthreads()`
#
# Without the barriers, a thread can read its partner's slot before the partner has written it. It then reads
# whatever the slot held before, perhaps left by another kernel. The result changes from run to run: a **race**.
# The demo runs the same inputs several times, then after kernels that leave 0.0 or NaN in shared memory:

# %%
nb.pitfall(ctx, "missing_sync")

# %% [markdown]
# `compute-sanitizer --tool racecheck` names the hazard whatever the answer (here it was also wrong):

# %%
nb.pitfall(ctx, "racecheck")

# %% [markdown]
# ## Looking back

# %%
nb.look_back(ctx, upto=2)

# %% [markdown]
# The model is optimistic for stage 2 by the ratio printed. It charges each warp one latency per load and
# nothing else. What else a warp waits for is not separated here.
#
# ## Exercise: a tree for any block size
#
# `exercises/02_tree.cu` is stage 2 launched with 384 threads, so its tree drops slot 2 (the pitfall above).
# Fix the tree. Let p be the largest power of two up to the block size, here 256. First, thread t below
# `blockDim.x - p` adds `partial[t + p]` into `partial[t]`, then all threads meet at a barrier. Then the usual
# tree runs over p slots, from p / 2 down.
#
# Predict the time first. An SM holds 2048 threads, so 5 blocks of 384. The 2048 blocks then run in 4 waves,
# the last about 10% full, where stage 2 at 256 threads runs 2 waves. Run the cell. It passes when the result is right and the time is at most 1.35 times
# stage 2's at 256 threads. A solution is in `solutions/02_tree.cu`.

# %%
lab.try_kernel("02_tree")

# %% [markdown]
# ## Glossary
#
# - **barrier**: `__syncthreads()`; no thread of the block passes it until all have reached it.
# - **coalescing**: a warp's addresses falling in as few cache lines as possible.
# - **occupancy**: resident warps per SM over the most it can hold.
# - **occupancy calculator**: the arithmetic of how many blocks fit on an SM, from registers, shared memory and
#   threads.
# - **race**: a result that depends on the order threads happen to run in.
# - **shared memory**: fast memory on the SM, shared by a block's threads.
# - **tie**: two times whose quartiles overlap, or whose gap does not repeat in a second run minutes apart.
# - **wave**: the blocks resident at once; later blocks wait for a slot.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **The occupancy calculator** is gemvlab's own Python (`gemvlab/gpu/occupancy.py`). A test compiles CUDA's
#   `cuda_occupancy.h` with g++ and compares it block size by block size; on a GPU another test compares it
#   with the driver's answer.
# - **Where blocks land** is not measured. The model assumes the scheduler spreads blocks evenly over the SMs.
# - **The few-warps kernel** adds each row with stage 2's tree, one block of 32 threads per row at a time. It
#   issues one load of A per thread before it first uses one, as stage 2 does (count them with
#   `nb.loads_in_flight`).
# - **A step is real** when it repeats: faster beyond both timings' quartiles, in two runs minutes apart. The
#   few-warps study runs once, round-robin, so its steps are judged within that one run.
# - **The missing barrier**: with 0.0 left in shared memory first, some rows can still come out NaN. Those stale
#   bits were left by something else; where each kernel's blocks landed is not controlled.
# - **The exercise** on the H200 (2026-12-01, `docs/design/exercises.md`): `solutions/02_tree.cu` at 384
#   threads took 0.2847 ms, stage 2 at 256 threads 0.2253 ms (1.26x).
# - **Each table is its own timed run**, so one kernel's time can differ by about 0.5% between tables.
# - **The sanitizer** ends a kernel it finds at fault, so the program sees error 719.
