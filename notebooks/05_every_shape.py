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
# Notebook 04 found no kernel that wins at every shape. One block per row leaves SMs idle when rows are few, and
# wastes most of each block when rows are short. The float4 stages also refuse rows that do not start 16-byte
# aligned. `gemvlab.gemv(A, B)` without a stage picks one of three kernels, by a rule over the shape, the
# alignment and the GPU.
#
# In this notebook you will:
# - meet split-K, rows per warp and row tiles, each for one kind of shape;
# - read the rule's reasons for any shape with `lab.explain`;
# - see the dispatcher beside torch.matmul and the read ceiling on every shape recorded;
# - see what a call costs beyond its kernel;
# - write the group reduction of rows per warp.
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

ctx = nb.setup(upto=0)  # on a GPU: torch.matmul and the read ceiling are measured now

# %% [markdown]
# ## One kernel cannot serve every shape
#
# Each stage at its best and the dispatcher (`gemv`), over the read ceiling's bandwidth:

# %%
_ = plots.plot_shapes(ctx.recorded, gemv=True)

# %% [markdown]
# ## Few long rows: split-K
#
# M = 16 rows, one block each, give 16 blocks for 132 SMs. **Split-K** cuts each row into **stretches** and
# gives each stretch its own block. Each block writes a **partial sum**. A second kernel adds each row's partial
# sums in one fixed order. Floating-point addition is not associative, so a fixed order gives the same bits on
# every run of the same plan. Float atomics, whose order changes from run to run, would not.

# %%
pic.split_k(3, 4)

# %% [markdown]
# The rule cuts rows into enough stretches for about four waves of blocks. Here is its **plan** for 16 rows of
# 2^24 floats, with its reasons:

# %%
nb.explain_shape(ctx, 16, 1 << 24)

# %% [markdown]
# A kernel's name lists its template arguments. `split_k<LOADS, B_VEC, ROWS>` is the loads of A in flight per
# row, whether B is read as float4s, and the rows per block.

# %% [markdown]
# Many long rows can go unsplit, one block per row. But a last wave that is only partly full leaves SMs idle
# while it runs. The rule then splits the rows too, for at least eight waves:

# %%
pic.waves(1100, 8, 132)

# %%
nb.explain_shape(ctx, 1100, 240_000)

# %% [markdown]
# ## Many short rows: several rows per warp
#
# At K = 300 a row is 75 float4s, too little for a whole block. **Rows per warp** gives each row a group of G
# lanes, so a warp holds 32 / G rows. The group adds its G sums with shuffles:

# %%
pic.access("rows_per_warp", G=8)

# %%
nb.explain_shape(ctx, 1_000_000, 300)

# %% [markdown]
# `rows_per_warp<G, B_VEC>` is G lanes per row, and B as float4s or not.

# %% [markdown]
# ## Very short rows: row tiles
#
# Rows of at most 64 floats are short even for a few lanes. But consecutive rows lie one after another in
# memory. **Row tiles** load a block's rows as one flat stretch into shared memory, each warp's load 512
# contiguous bytes. Then a lane or two sum each row from there:

# %%
pic.access("row_tiles")

# %%
nb.explain_shape(ctx, 4_000_000, 33)

# %% [markdown]
# `row_tiles<G, R, U>` is G lanes per row, R rows per thread, and U float4 loads per thread per trip.

# %% [markdown]
# ## Rows that start anywhere
#
# With K = 4099, most rows do not start on a 16-byte boundary. The dispatcher's kernels cut each row into a
# **head** of up to 3 floats, a **body** of float4s, and a **tail** of up to 3 floats. So they take any K, any
# row stride and any first address, such as a view `A[:, 1:]`:

# %%
big = torch.rand(64, 4100)
print(lab.explain(big[:, 1:], torch.rand(4099)))

# %% [markdown]
# The rule lives in `gemvlab/dispatch/rule.py`. Its tuned numbers are in `gemvlab/dispatch/tuning.py`, one
# line each, and the measurements behind them are tables in `docs/design/dispatch.md`.
#
# ## Every shape
#
# The dispatcher beside torch.matmul and the read ceiling on the sweep's shapes, timed round-robin. The bar has
# two parts:
# - at least torch.matmul's speed;
# - at least 0.91 of the read ceiling's bandwidth, where A and B together are at least 4 times the L2.

# %%
nb.dispatch_table(ctx.recorded)
_ = plots.plot_dispatch(ctx.recorded)

# %% [markdown]
# The record also times 72 more shapes, most of them outside the sweep. The ones that miss a mark:

# %%
nb.dispatch_misses(ctx.recorded)

# %% [markdown]
# Explore the recorded grid: pick M and K to see the plan, the model's time and the recorded times.

# %%
# NBVAL_IGNORE_OUTPUT
nb.shape_slider(ctx)

# %% [markdown]
# ## The cost of a call
#
# A repeated call finds its plan in a dictionary and makes one `ctypes` call. CUDA events around the whole
# `lab.gemv` call, against events around the launch alone. Each starts on an idle GPU, so Python's time
# counts:

# %%
nb.overhead_table(ctx.recorded)

# %% [markdown]
# ## Looking back
#
# The model beside the recorded time, plan by plan:

# %%
nb.dispatch_look_back(ctx)

# %% [markdown]
# ## Exercise: rows per warp
#
# `exercises/05_rows_per_warp.cu` gives each row a group of G lanes (`variant` is G). Each lane sums its share,
# but the group's G sums are never added. Write that with `__shfl_xor_sync`, offsets G / 2 down to 1, and run the
# cell. `__shfl_xor_sync(mask, v, offset)` reads `v` from lane `lane ^ offset`. With such offsets that lane is
# in the same aligned group of G lanes. After the last step, every lane of the group holds the group's sum. It passes when the result
# is right and the time is at most 1.3 times the dispatcher's at 1,000,000 rows of 128 floats. A solution is in
# `solutions/05_rows_per_warp.cu`.

# %%
lab.try_kernel("05_rows_per_warp")

# %% [markdown]
# ## Glossary
#
# - **head, body, tail**: a row's floats before its first 16-byte boundary, its whole float4s, and the rest.
# - **partial sum**: one stretch's share of a row's sum.
# - **plan**: the kernel, grid and block the rule picks for a shape, with its reasons.
# - **row tiles**: a block loads its rows as one flat stretch into shared memory, then sums each row there.
# - **rows per warp**: G lanes per row, so a warp holds 32 / G rows.
# - **split-K**: a row cut into stretches, a block for each, then a second kernel adds the partial sums.
# - **stretch**: a contiguous part of a row, given to one block.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **The reduce** is a second launch; on compute capability 9.0 and later it is a programmatic dependent
#   launch, which may start before split-K's grid has completed and waits for its writes.
# - **Rows at different offsets from B** (odd K) are split aiming at twelve waves instead of four, where
#   stretches of at least 8,192 floats allow it. Why blocks of such rows end unevenly is not separated.
# - **Several rows per block** share each load of B where a few rows are split and B is over a quarter of the
#   L2. Where the rows are not aligned like B, B is loaded aligned and shifted into place by warp shuffles.
# - **The same bits**: `bench/results/h200-bits.json` holds 85 cases, every kernel, each run twice on the H200
#   with the same bits. They hold for one plan. The plan depends on the GPU's SM count and L2 size. The head and tail
#   depend on each row's alignment. Another plan can round differently.
# - **Each table is its own timed run**, so one shape's time can differ by about 0.5% between tables.
# - **The bar's bandwidth** counts A, B and C for gemv but A alone for the read ceiling, so at M = 1 the ratio can
#   pass 1.
# - **The model's launch cost** is the recorded time of the smallest shape, taken as the cost of one launch.
# - **The tuning**: `bench/tune_dispatch.py` times the rule's plan against plans that change one choice, and
#   writes `bench/results/h200-dispatch.csv`.
