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
# # 5. Every shape: a dispatcher that picks the kernel
#
# The stages taught one design each, and notebook 04's shape sweep showed each design fast only for some
# shapes. A library cannot ask its users for the right shape. `lab.gemv(A, B)` without a stage runs a
# **dispatcher**: a rule that looks at M, K, the alignment of the rows, the GPU's SM count, its L2 and the
# kernels' occupancy, and picks one of two kernels, each in its own `.cu` file, commented like the stages.
#
# **What you will learn here:** why one kernel cannot serve every shape (waves, rows per SM, and, presumed,
# a fixed cost per block); split-K, built and measured, deterministic without atomics; float4 loads for rows that do not
# start 16-byte aligned; several rows per warp for short rows; the rule, and how to read its reasons
# (`lab.explain`); what a call costs in Python; and a shape explorer.

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
# Live on a GPU (torch.matmul and the read ceiling are measured now at the headline shape); recorded otherwise.
import torch
import gemvlab as lab
from gemvlab import notebook as nb, plots
ctx = nb.setup(upto=0)

# %% [markdown]
# ## Why one kernel cannot serve every shape
#
# Stage 4 launches one block per row. Across the sweep's shapes, what its grid leaves on the SMs, what the
# model makes of that, and what was measured:

# %%
nb.model_inputs(ctx)
nb.one_kernel_every_shape(ctx)

# %% [markdown]
# Three ways to fail show up in that table:
# - **Too few blocks.** M = 16 rows are 16 blocks: at most 16 of 132 SMs have work (116 idle if the
#   scheduler spreads them, as the model assumes), and a busy SM holds one block's warps. M = 1 leaves 131 SMs idle. The model is optimistic here (the ratio column): it assumes
#   a busy SM can take any share of the bandwidth its bytes in flight allow, and the *GB/s per busy SM*
#   column shows what one SM actually pulled.
# - **One block per SM.** M = 128 rows give 128 blocks for 132 SMs (the model assumes one per SM and 4
#   idle; where the scheduler puts them is not measured): the model and the
#   measurement say that is nearly enough at 1024 threads per block (the dispatcher's split-K uses
#   256-thread blocks, for which 128 rows are too few). It fails when the rows are a small fraction of the
#   SMs (M = 16, M = 1).
# - **A fixed cost per block (presumed, not measured apart).** At K = 128 each block reads 512 bytes, then
#   reduces across its warps and retires. The model has no term for such a cost and is far too optimistic
#   there (the ratio column); stages 2 to 4 all take about the same time at this shape (notebook 04's shape
#   table), whatever their loads, as a cost per block would make them.
#
# ## Split-K: blocks for every SM however few the rows
#
# When rows are few, cut each row into `S` stretches, one block each, and add each row's `S` partial sums
# in a second kernel, in a fixed order: the same bits on every run (no float atomics, whose order changes
# from run to run; the GPU tests in `tests/`, not run here, check the bits). `gemvlab/cuda/split_k.cu`:

# %%
nb.show_source("split_k")

# %% [markdown]
# With one stretch it is stage 4's design (2 loads in flight per thread, A past the L1), writing C
# directly. How many stretches: enough for about four waves of blocks. The model for the plan the rule
# makes at M = 16 and at M = 1, printed with the recorded times; not blind: the rule's constants were tuned
# in an earlier exploration on the H200, and the model's cost per launch comes from this record's smallest
# shape:

# %%
for M, K in ((16, 16777216), (1, 67108864)):
    nb.explain_shape(ctx, M, K)
    print()

# %% [markdown]
# The lines starting *recorded* are the measurement, beside torch.matmul. At M = 16 gemv reads at 0.93 of
# the read ceiling's bandwidth (the sweep table below); at M = 1, B is as large as A, and the read ceiling
# reads A alone, so compare bandwidths (bytes moved over time), not times: the table below does.
#
# ## Rows that start anywhere
#
# float4 loads need 16-byte aligned addresses. With K = 4099, row r starts at byte 4 · 4099 · r: only every
# fourth row is aligned. A view such as `A[:, 1:]` starts mid-row. The dispatcher's kernels cut each
# stretch into a scalar head up to the first 16-byte boundary, a float4 body, and a scalar tail
# (`gemvlab/cuda/any_alignment.cuh`, included by both kernels). In the source, the head's and tail's
# floats are loaded before the body's first trip and added after it, and the body's last trip loads what
# is left with predicated loads. As compiled, the head and tail are one wait for memory before the body
# rather than one before and one after it (the file's comment says how that was read; not printed here). The file's comment gives what the two
# changes together did in an exploration on the H200 (they were not timed apart; the logs are in
# `tools/explore/round5/`, not re-run here):

# %%
from IPython.display import Code
Code(open(lab.kernels.CUDA_DIR / "any_alignment.cuh").read(), language="cuda")

# %% [markdown]
# B is read at the same columns as A. Where B is aligned exactly where every row of A is, its body is float4s
# too; otherwise four scalar loads per float4 of A. Where many rows share B, B should come mostly from the
# L1 or L2, so that the scalar path costs instructions and L1 lookups (each scalar load's lanes are 16
# bytes apart) rather than DRAM bytes; where rows are few, B is read from DRAM like A. Both are
# expectations: no counters for the dispatcher's scalar path are shown here, and what it costs in time is
# not separated. What the rule says for aligned rows, for K = 4099, and for a view that starts mid-row
# (CPU tensors are enough: `explain` needs no GPU):

# %%
print(lab.explain(torch.empty(4096, 4096), torch.empty(4096)))
print()
print(lab.explain(torch.empty(4096, 4099), torch.empty(4099)))
print()
big = torch.empty(4096, 4100)
print(lab.explain(big[:, 1:], torch.empty(4099, 1)))

# %% [markdown]
# ## Several rows per warp, for short rows
#
# When a row is too short to keep a block busy, G lanes take one row and add their sums with log2(G)
# shuffles: no shared memory, no barrier, a warp holds 32 / G rows. How many lanes depends on K and on
# how much data there is (the rule, below). `gemvlab/cuda/rows_per_warp.cu`:

# %%
nb.show_source("rows_per_warp")

# %% [markdown]
# What ptxas made of both dispatcher kernels: registers (which set how many blocks fit on an SM), and the
# float4 loads of A each source writes per trip against those the SASS issues before the first use (the
# model uses the SASS count):

# %%
for kernel in ("split_k", "rows_per_warp"):
    nb.build_report(kernel)
    nb.loads_in_flight(kernel)
    print()

# %% [markdown]
# ## The rule
#
# `gemvlab/dispatch.py`, `choose()`:
# - Rows up to 2048 floats go to `rows_per_warp`, in blocks of 128 threads. Its G depends on how much data
#   there is. When A fits in one trip of every resident thread (4 float4s each), the call is a few round
#   trips to memory, so each lane gets as few trips as G ≤ 32 allows: one up to K = 512, two at K = 1024.
#   With more data, a group's load instruction should cover at least 128 contiguous bytes of its row
#   (G ≥ 8), with about 32 floats per lane. Rows under 64 floats get 4 lanes.
# - Longer rows go to `split_k`: one block per row when the rows alone keep at least half of each SM's warp
#   slots busy (enough bytes in flight: half is the exploration's choice; Little's law alone would ask for
#   fewer). Otherwise they are split into stretches for about four waves, but no stretch is shorter than
#   8,192 floats: rows under 16,384 floats are not split at all, and few long rows can get fewer than four
#   waves (M = 128, K = 65,536: 8 stretches, one wave). Where the rule does split little data (one trip of
#   every resident thread, again), the stretches are one trip per thread instead.
#
# Each constant in `dispatch.py` cites the exploration it came from (`tools/explore/h200-dispatch-round1.txt`
# and `tools/explore/round4` to `round6`, not printed here). Its choices and reasons on every shape of the sweep:

# %%
for M, K in lab.results.shapes(ctx.recorded):
    print(lab.dispatch.choose(M, K, K, 0, 0 if K % 4 == 0 else 4, lab.dispatch.Device.recorded(ctx.recorded)).describe())
    print()

# %% [markdown]
# ## Measured: the sweep
#
# The dispatcher, torch.matmul and the read ceiling on every shape of the sweep, round-robin in one run:

# %%
nb.dispatch_table(ctx.recorded, "shape_best")

# %%
_ = plots.plot_dispatch(ctx.recorded)

# %% [markdown]
# And on shapes beyond the sweep, same run: a grid of M and K, then shapes outside it (odd K, a few rows,
# millions of rows). Some of them were among the shapes the explorations tuned the rule on; the last five
# (500,000 × 200 to 123,457 × 777) were in none of them:

# %%
nb.dispatch_table(ctx.recorded, "explorer")

# %% [markdown]
# The *bar* column holds each shape to two marks: at least torch.matmul's speed everywhere (in kernel time
# per launch, as timed in these tables: events around one launch, the L2 flushed before it), and at least
# 0.91 of the read ceiling's bandwidth where A and B are too large for the L2 to help. The shapes that
# miss one, listed:

# %%
nb.dispatch_misses(ctx.recorded)

# %% [markdown]
# All the misses are bandwidth misses, of two kinds:
# - **Few long rows**: M = 3 and M = 64 with odd K (rows that do not start 16-byte aligned, B read as
#   scalars, at 0.882 and 0.877), and M = 8 with aligned rows (0.890). In the explorer table, the aligned
#   shapes with 16 to 300 rows held to the bandwidth bar reach 0.91 to 0.94; in the sweep, 128 × 2,097,152
#   reaches 0.952 and 1 × 67,108,864 0.974, so few rows alone do not set the gap. This run does not
#   separate a cost of odd K from a cost of few rows. The explorations tried reading B as aligned float4s
#   shifted into place, and a head that runs to a 128-byte line; neither was adopted (the kernel's comment
#   above gives their effect on the shapes tried; whether either would reach 0.91 on these is not shown).
# - **Rows under 64 floats** (K = 50): 4 lanes per row, 12 or 13 floats each.
#
# In kernel time per launch, no shape is slower than torch.matmul beyond the quartiles (a whole call from
# Python is another matter: the next section). Three are slower in the median, though:
# M = 1 at K = 65,536 and 1,048,576, and M = 16 at K = 65,536 (the explorer table). Their quartile ranges
# are wide, several microseconds, and overlap torch.matmul's, so this run calls them ties. It does not
# separate them.
#
# ## The cost of a call
#
# `lab.gemv(A, B)` checks its inputs and picks its plan once per layout (shape, strides, alignment, device),
# then finds them in a dictionary on every later call. CUDA events around the whole call against events
# around the launch alone, and torch.matmul's whole call. *added us* is the median of the differences
# between a gemv call and the launch alone timed just before it, not the difference of the medians: timed
# from an idle GPU, the medians moved by tens of microseconds between runs (the note under the table, which
# also says which run these numbers come from), far more than the Python they are meant to show:

# %%
nb.overhead_table(ctx.recorded)

# %% [markdown]
# These were timed with the GPU idle before each call (synchronized, then the events), which is how one
# call from Python meets the GPU. So the start event fires before the launch reaches the GPU, and even the
# *launch alone* column includes the launch's way from Python to the GPU. It is longer than the same
# kernel in the sweep and explorer tables, where each launch is queued behind an L2 flush that keeps the
# GPU busy meanwhile, by 15.9 us at 4096 × 4096 (35.8 against 19.9) and 25.0 us at 1024 × 1024 (30.2
# against 5.2), comparing this table's run with the record's. Such unpaired medians moved by tens of
# microseconds between runs, so whether the excess is a fixed cost is not shown (an idle GPU's clocks, the
# L2's state without a flush, and the launch path are candidates). In this run's medians a whole gemv call
# took longer than a whole torch.matmul call at both shapes (by 2.7 and 6.7 us); these too are unpaired
# medians, so this run does not show a difference.
# The *host us/call* column is the Python side alone, for calls made back to back: at 1024 × 1024 it is
# longer than that kernel's time in the explorer table (5.2 us), so back-to-back calls of that size would
# spend more time in Python than on the GPU (not measured as a loop here).

# %% [markdown]
# For use inside `torch.compile` or CUDA graphs, the dispatcher is also a PyTorch custom operator,
# `torch.ops.gemvlab.gemv`, with a fake implementation (the output's shape, for the compiler) and a backward
# (the GPU tests in `tests/test_gpu_dispatch.py`, not run in this notebook, run it under `torch.compile`,
# in a captured CUDA graph and through autograd):

# %%
A = torch.empty(7, 33, device="meta")
print(torch.ops.gemvlab.gemv(A, torch.empty(33, 1, device="meta")).shape, "from the fake implementation, on meta tensors")

# %% [markdown]
# ## Explore
#
# Pick M and K: the kernel the rule chooses and why, the model's time, and the recorded time beside
# torch.matmul (on a GPU: timed now).

# %%
# NBVAL_IGNORE_OUTPUT
nb.shape_slider(ctx)

# %% [markdown]
# ## Looking back
#
# The model's time for each chosen plan, plus a fixed cost per launch (taken from this same run's smallest
# shape, so not an independent input), beside the measurement:

# %%
nb.dispatch_look_back(ctx)

# %% [markdown]
# The model finds every chosen plan on the sweep bound by the read ceiling, and the measurements are 1.00
# to 1.13 times its time (the ratio column). The largest is at 4096 × 4099 (1.13), a 20-us shape where the
# assumed 3.6 us per launch weighs heavily; the aligned 4096 × 4096 (explorer table, 0.0199 ms) has
# quartiles that touch those of 4096 × 4099 (0.0204), so this run cannot attribute the 1.13 to the odd K.
# Next is M = 16 (1.06): B (64 MiB) is larger than the L2 and shared by 16 rows per stretch, while the model
# counts it once; that is a candidate, not separated. The
# model's times for the four shapes that miss their bar (above) are not printed here; it has no per-block
# cost, no per-SM limit and no cost for rows that do not start aligned, so it could not account for them.
#
# ## Exercise
#
# Pick a shape from the explorer table where `gemv` misses its bar. Use `lab.dispatch.make_plan` to build
# other plans for it (another G, another split count, another block size), time them against the rule's
# with `gemvlab.bench.time_round_robin` and `lab.dispatch.make_launch`, and decide with the quartiles
# whether any is better. If one is, change the rule's constant, and check that the other shapes of the
# sweep do not get worse.
