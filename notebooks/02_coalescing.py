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
# # 2. Coalescing: one block per row
#
# **What you will learn here**
# - what "coalesced" means in bytes: the 32-byte sectors one warp's load instruction touches;
# - the change that gives the first large step: all threads of a block share one row;
# - occupancy as the GPU really runs it: what the calculator allows, and what the grid leaves on the SMs;
# - the shared-memory reduction tree, and its three traps: an array sized for another block size, a block
#   size that is not a power of two, and a missing `__syncthreads()`.

# %%
# Colab, or any Python where gemvlab is not installed yet: install it beside the torch already there.
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("gemvlab") is None:
    clones = [os.path.abspath(".."), "/content/gemvlab"]  # this notebook's repository, or a clone in Colab
    source = next((c for c in clones if os.path.exists(os.path.join(c, "pyproject.toml"))),
                  os.environ.get("GEMVLAB_SOURCE"))
    if source is None:
        raise SystemExit("gemvlab is not installed here. In Colab: !git clone <the repository's URL> /content/gemvlab "
                         "(or set GEMVLAB_SOURCE to a pip requirement for it), then run this cell again.")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", source], check=True)
import gemvlab  # noqa: E402
print("gemvlab", gemvlab.__version__)

# %%
# NBVAL_IGNORE_OUTPUT
# Live on a GPU (stages 1 to 2 are measured now, about 10 s); recorded H200 results otherwise.
import torch
import gemvlab as lab
from gemvlab import notebook as nb, plots
ctx = nb.setup(upto=2)

# %% [markdown]
# ## The two numbers (unchanged: the same bytes must move)

# %%
nb.two_numbers(ctx)

# %% [markdown]
# ## Coalescing, drawn
#
# Global memory is fetched in 32-byte sectors. When the 32 lanes of a warp execute one load, the L1 gathers
# the sectors their addresses fall in. Stage 1's lanes each read a different row, 4 MiB apart; stage 2's
# lanes read 32 neighbouring floats of one row. The percentages below are the L1's **sector efficiency**
# for one load instruction: the bytes the lanes asked for over the bytes of the sectors the L1 had to
# provide. They say nothing about DRAM traffic: the other 28 bytes of each of stage 1's sectors are the next
# seven floats of that row, which its next loads ask for, so a sector fetched once can serve eight loads if
# it stays in the cache.

# %%
from gemvlab.plots import warp_sectors
for pattern in ("naive", "coalesced", "float4"):
    w = warp_sectors(pattern)
    print(f"{pattern:>9}: {len(w['sectors']):2} sectors, {w['bytes_fetched']:4} B for {w['bytes_used']:3} B asked for "
          f"(L1 sector efficiency {w['efficiency']:.1%})")
_ = plots.plot_warp_sectors()

# %% [markdown]
# ## A model, before measuring
#
# Stage 2 launches one block per row: 2048 blocks. Each warp reads 128 contiguous bytes per load (one line
# instead of 32), and each thread waits for its load before issuing the next: one load of 4 bytes per lane
# in flight, 128 bytes per warp. So this stage is all about how many warps are resident: the model at the
# block size the stage table uses:

# %%
nb.model_inputs(ctx)
nb.predict(ctx, "coalesced")

# %% [markdown]
# The rounding error should also shrink, because each thread sums only K / blockDim.x products and the tree
# adds the rest.
#
# ## The kernel, and what changed since stage 1

# %%
nb.show_source("coalesced")

# %%
nb.show_diff("naive", "coalesced")

# %% [markdown]
# ## Building it

# %%
nb.build_report("naive", "coalesced")

# %% [markdown]
# The two `BAR` instructions are `__syncthreads()` (one before the tree, one inside its loop); the loads are
# still 32-bit, and there are two of them (A and B): no unrolling, so one load of A in flight per thread:

# %%
nb.sass_lines("coalesced", pattern="LDG|BAR")

# %% [markdown]
# ## Is it correct?

# %%
nb.correctness(ctx, "coalesced")

# %% [markdown]
# ## How fast?

# %%
nb.table(ctx, upto=2)

# %%
_ = plots.plot_stages(ctx.doc, upto=2)

# %% [markdown]
# ## Block size: occupancy as the GPU really runs it
#
# The block size now sets how many threads share a row. The occupancy calculator (the same arithmetic as
# CUDA's `cuda_occupancy.h`; the workbook's tests compile that header and compare, block size by block
# size) says how many blocks an SM
# *could* hold: 32 blocks of 32 or 64 threads (the SM's block slots), or 64 warps (its warp slots). But the
# grid has 2048 blocks for 132 SMs, about 15.5 per SM: where the calculator allows more than that, the
# grid, not the calculator, sets the resident warps.

# %%
nb.occupancy_table("coalesced", recorded=ctx.recorded)

# %% [markdown]
# So at 32 threads the grid leaves 15.5 warps per SM on average (even spreading assumed), at 64 threads 31,
# at 128 threads 62: resident warps double with
# each step, and with one 128-byte load in flight per warp, so do the bytes in flight. The model against the
# recorded sweep:

# %%
nb.sweep_model(ctx, "coalesced")

# %% [markdown]
# The measured time nearly halves from 32 to 64 threads (÷1.95) and falls 1.8 times from 64 to 128, as the
# bytes in flight double each time, then changes by under 1% from 256 threads on, once every SM holds its
# 64 warps (3.461 to 3.431 ms; the spreads are not printed here, so whether these differ is not shown). The
# model follows the shape; its times are too short by the ratio printed in the table. The *implied latency*
# column is Little's law run backwards from the measurement: the latency at which these bytes in flight
# would give the measured bandwidth: the model's miss expressed as a latency, not a measured one. It sits
# above the chased latency, and rises from 384 to 427 ns as the bytes in flight go from 0.25 to 1.0 MiB
# (the column divides the first wave's bytes in flight by the measured bandwidth; where a last wave is
# partly empty, the average bytes in flight are lower, and so would be the latency they imply). Two candidates, neither measured here: the
# latency grows under load (queueing in the memory system is the usual reason), or a warp spends time
# between its loads that the model leaves out (its arithmetic and loop overhead; B's load is issued together
# with A's, the SASS above, and is expected to come from the L1 or L2, every block reading all of it, so it is a
# throughput candidate, not a latency one).
# Either way, stage 2 is short of bytes in
# flight at every block size: 64 warps × 128 bytes per SM is not enough, so the next step must put more
# bytes in flight per warp.

# %%
# NBVAL_IGNORE_OUTPUT
nb.block_slider(ctx, "coalesced")

# %% [markdown]
# ## The tree's traps
#
# **1. A shared array sized for another block size.** Stage 2 sizes its shared array at launch
# (`extern __shared__`, third launch parameter), so it always has `blockDim.x` floats. A common version
# declares `__shared__ float partial[256];` and is later launched with more threads
# (`gemvlab/cuda/pitfalls/smem_sized_for_256.cu`), here 1024:

# %%
nb.pitfall(ctx, "smem_too_small")

# %% [markdown]
# Threads 256 to 1023 write past the end of the 256-float array, and the kernel faulted: with 256 threads the
# same kernel is right. compute-sanitizer names bad writes, with their threads and addresses (the first few
# it reports are shown; as in notebook 01, the program then sees error 719: the sanitizer ends the kernel, as
# its documentation describes):

# %%
nb.pitfall(ctx, "smem_sanitizer")

# %% [markdown]
# **2. A block size that is not a power of two.** The tree halves the active threads at each level; with
# 384 threads the halving reaches 3 (384, 192, 96, 48, 24, 12, 6, 3), then 1, and the partial sum in slot 2,
# which by then covers a third of the row, is never added: the relative error below is 0.33. No error
# message, just a wrong answer.
# gemvlab refuses such a block before launching:

# %%
A, B = torch.rand(8, 64), torch.rand(64)
try:
    lab.kernels.check_inputs(A, B, "coalesced", block=384, variant=0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %%
nb.pitfall(ctx, "not_power_of_two")

# %% [markdown]
# **3. A missing `__syncthreads()`.** Without a barrier between levels, a thread can read its partner's slot
# before the partner has written it, or before it has even stored its partial sum
# (`gemvlab/cuda/pitfalls/tree_without_syncthreads.cu`). It then reads whatever that slot held before: a
# value left by an earlier block, or by an earlier kernel that used the same shared memory for something
# else. Any 32 bits read as a float; where they happen to be a NaN pattern, the row's sum becomes NaN. The
# demo runs the tree five times on the same inputs, then after a kernel that leaves 0.0 in the shared-memory
# arrays of four blocks per SM, then after one that leaves NaN there:

# %%
nb.pitfall(ctx, "missing_sync")

# %% [markdown]
# Leaving NaN in those arrays first makes many more rows NaN than any of the five runs before. Leaving 0.0
# there gave fewer NaN rows than any of the five runs before, but those counts varied from run to run, and
# one run cannot say whether the difference is the 0.0 or that variation. Even after the 0.0, some rows
# were NaN (10 in the run above), which that kernel's 0.0s and the rows' own small positive partial sums cannot make: some of the stale
# bits the race read were not left by that kernel (where its blocks landed is not measured). The answer
# depends on what ran before and on how the warps were scheduled: a race. `compute-sanitizer --tool
# racecheck` finds the hazard without needing a wrong answer:

# %%
nb.pitfall(ctx, "racecheck")

# %% [markdown]
# ## Looking back at the predictions

# %%
nb.look_back(ctx, upto=2)

# %% [markdown]
# Stage 2's prediction is short of the measurement by about the same factor as the sweep above. The miss
# shows up in the model's round, one fixed latency per load and nothing else; whether the round is what is
# wrong, or the bytes in flight it assumes (waves that do not run in lockstep), or B's extra L1 and L2
# requests, is not separated here. Even at 32 threads, with under
# a fifth of the bytes in flight Little's law asks for (0.25 of 1.47 MiB), the implied latency is above the
# chased one, where little queueing is expected: so the time a warp spends between its loads (its
# arithmetic and loop overhead) is a candidate as much as a latency that grows under load. This notebook separates
# neither.
#
# ## Exercises
#
# 1. The loads are coalesced, yet each thread still moves 4 bytes per load instruction and waits for each
#    load before issuing the next. How many bytes per warp would have to be in flight, with 64 warps per
#    SM, to reach the read ceiling at the latency above? Predict what changes if each thread loads 16 bytes
#    at once. That is stage 3, in the next notebook.
# 2. At block 64 the grid leaves 31 warps per SM and at block 128, 62. Predict block 64's time if the loop
#    were unrolled by 2 (`#pragma unroll 2` on the `for` loop), build it with `gemvlab.build.build`, and
#    check in the SASS how many loads of A it issues before the first multiply (expect six `LDG` in all, the
#    remainder loop adding two, as in stage 1's ten); then time it.
