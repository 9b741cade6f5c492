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
# # 3. float4 loads, and the warp shuffle
#
# Stage 2 fills every SM with warps, but each warp keeps only 128 bytes in flight. Two stages raise that.
# Stage 3 loads 16 bytes per thread instead of 4. Stage 4 adds three changes: a reduction through registers,
# several loads in flight, and A read past the L1 cache.
#
# In this notebook you will:
# - read each change, predict its time, and measure it;
# - see float4 loads in the machine code, and what alignment they need;
# - take stage 4 apart one change at a time, and learn when a step is real;
# - see how registers set occupancy and waves;
# - write the warp-shuffle reduction yourself.
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

ctx = nb.setup(upto=4)  # on a GPU: stages 1 to 4 are measured now (about 15 s)

# %% [markdown]
# ## Stage 3: float4 loads
#
# A **float4** is four floats loaded by one instruction: 16 bytes per thread, 512 per warp. The diff from
# stage 2:

# %%
nb.show_diff("coalesced", "vectorized")

# %%
pic.access("float4")

# %% [markdown]
# The machine code says it. **SASS** is the GPU's machine code; `LDG` is a load from global memory, and
# `LDG.E.128` moves 128 bits per thread:

# %%
nb.build_report("coalesced", "vectorized")
nb.sass_lines("vectorized", pattern="LDG")

# %% [markdown]
# Four times the bytes per load, the same warps. The model:

# %%
nb.predict_line(ctx, "vectorized")

# %%
nb.table(ctx, upto=3)

# %% [markdown]
# ## Pitfall: alignment
#
# A float4 load needs an address that is a multiple of 16 bytes: the address is **aligned**. A view such as
# `B[1:]` is contiguous but starts 4 bytes in. A raw float4 kernel given one stops:

# %%
nb.pitfall(ctx, "misaligned_float4")

# %% [markdown]
# gemvlab checks first, and names the fix. `.contiguous()` is not one: the view is already contiguous. (Here
# the checks alone run, so that they need no GPU.)

# %%
from gemvlab.stages.launch import check_inputs

B_view = torch.rand(4097)[1:]
print("contiguous:", B_view.is_contiguous(), " data_ptr() % 16 =", B_view.data_ptr() % 16)
try:
    check_inputs(torch.rand(16, 4096), B_view, "vectorized", 256, 0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %% [markdown]
# When K % 4 != 0, half or more of the rows do not start on a 16-byte boundary. `lab.pad_k` pads K with zeros, which add
# nothing to the product:

# %%
A, B = torch.rand(16, 4099), torch.rand(4099, 1)
A4, B4 = lab.pad_k(A, B)
print("padded:", tuple(A4.shape), tuple(B4.shape), " same product:", torch.allclose(A4 @ B4, A @ B))

# %% [markdown]
# ## Stage 4: three changes
#
# - **The shuffle.** `__shfl_down_sync(mask, v, offset)` reads `v` from the lane `offset` places up, register
#   to register. Five steps add a warp's 32 values, with no shared memory and no barrier. A **register** is a
#   thread's own storage on the SM, the fastest there is.
# - **Loads in flight.** Each trip of the loop writes `LOADS` independent float4 loads before using any.
# - **A past the L1.** A's bytes are used once, and every block reads all of B. `__ldcg` loads A without
#   keeping it in the L1. The intent is more L1 hits on B; notebook 04's counters show the L1's
#   overall hit rate.

# %%
nb.show_diff("vectorized", "warp_shuffle")

# %%
pic.tree_vs_shuffle(8)

# %% [markdown]
# The mask `0xffffffff` promises that all 32 lanes take part, so a block must be a whole number of warps.
# **ptxas** is the assembler that turns the compiler's PTX into SASS. How many loads it issues before the first
# use is its own choice. The model counts the loads in the SASS, not in the source. The SASS says:

# %%
nb.loads_in_flight("warp_shuffle")

# %%
nb.predict_line(ctx, "warp_shuffle")

# %%
nb.table(ctx, upto=4)
_ = plots.plot_stages(ctx.doc, upto=4)

# %% [markdown]
# ## Stage 4, one change at a time
#
# Stage 3, then the shuffle, then 2 loads in flight, then `__ldcg`, all timed round-robin. The record runs this
# twice, minutes apart. **A step is real when it repeats**: beyond both timings' quartiles, in both runs.
# Otherwise it is a **tie**.

# %%
nb.steps_table(ctx.recorded, M=2048)

# %% [markdown]
# With few rows the grid is small, and the picture changes:

# %%
nb.steps_table(ctx.recorded, M=16)
nb.steps_table(ctx.recorded, M=128)

# %% [markdown]
# The shuffle alone changes little: a tie in all but one case, where it is 1.002x faster. A block's reduction
# is expected to be a small part of its time. Two loads in flight
# pay most where few warps are resident, in small blocks or with few rows. `__ldcg` pays with 2048 rows at most
# block sizes, and costs a little, or ties, with 16 or 128 rows.
#
# ## Registers set occupancy
#
# More loads in flight need more registers: each float4 waiting in flight holds 4. An SM has 65,536 registers,
# handed out per warp within each quarter of the SM. So more registers per thread can mean fewer resident
# blocks. The report counts every load in the kernel, the unrolled body's and the tail loop's; the SASS table
# above counted only those before the first use. The occupancy table is for `LOADS = 4`, whose 40 registers
# limit an SM to 48 warps:

# %%
nb.build_report("warp_shuffle")
nb.occupancy_table("warp_shuffle", 4, recorded=ctx.recorded)

# %% [markdown]
# Fewer blocks per SM means more waves, and a last wave can be nearly empty:

# %%
pic.waves_of("warp_shuffle", 512, 4, 2048, nb.sm_limits(ctx.recorded), ctx.recorded["machine"]["sm_count"])

# %%
nb.sweep_model(ctx, "warp_shuffle", 2)

# %%
# NBVAL_IGNORE_OUTPUT
nb.block_slider(ctx, "warp_shuffle")

# %% [markdown]
# ## Looking back

# %%
nb.look_back(ctx, upto=4)

# %%
pic.littles_law_of(ctx, upto=4)

# %% [markdown]
# At each stage's chosen block size, from stage 3 on, the model puts every SM past Little's knee. The knee is
# the bytes in flight that the ceiling needs (the dotted line). So the read
# ceiling bounds it. What remains is
# the distance between the measurement and that ceiling.
#
# ## Exercise: the warp shuffle
#
# `exercises/03_shuffle.cu` has stage 3's float4 loop and the block's final step. `warp_sum` is empty. Write
# it with `__shfl_down_sync`, and run the cell. It passes when the result is right and the time is at most 1.1
# times step 4a's. That is the steps table's "+ shuffle reduction" (`warp_shuffle_l1` to `try_kernel`): float4
# plus the shuffle, `LOADS = 1`. A solution is in
# `solutions/03_shuffle.cu`.

# %%
lab.try_kernel("03_shuffle")

# %% [markdown]
# ## Glossary
#
# - **aligned**: an address that is a multiple of the bytes loaded; a float4 needs 16.
# - **float4**: four floats loaded or stored by one instruction, 16 bytes.
# - **L1, L2**: the GPU's caches; each SM has its own L1, and all SMs share one L2.
# - **ptxas**: the assembler that turns PTX, the compiler's output, into SASS.
# - **register**: a thread's own storage on the SM, the fastest there is.
# - **SASS**: the GPU's machine code, read here with `cuobjdump`.
# - **shuffle**: a warp instruction that reads another lane's register.
# - **step is real**: faster beyond both timings' quartiles, in two runs minutes apart.
# - **tie**: two times whose quartiles overlap, or whose gap does not repeat in a second run minutes apart.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **Default caching.** The compiler reads A and B through the read-only path (`LDG.E.128.CONSTANT`) because
#   both are `const __restrict__`. `__ldcg` compiles to `LDG.E.128.STRONG.GPU`: the load still passes through
#   the L1 but is not kept there.
# - **Why `__ldcg` pays** where it does is the intent, not a measurement: leaving the L1 to B. Nsight Compute's
#   counters for each kernel are in notebook 04.
# - **The occupancy table** follows CUDA's own calculator: registers go to each warp in units of 256, within
#   each of the SM's four quarters.
# - **The steps study** runs at 32 and 64 threads, where stage 3's grid leaves SMs short of warps. It also runs
#   at 128 and 256, where they are nearly full, and at 16 and 128 rows, where the grid is smaller than the GPU.
# - **Little's law here** uses one fixed latency; under load, queueing in the memory system is the usual reason
#   a real latency grows.
