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
# # 1. Naive GEMV: one thread per row
#
# **GEMV** is a matrix times a vector: **C = A·B**. Here A is an M×K matrix of float32, stored row by row, and B
# is a vector of K floats. The headline shape is M = 2048, K = 1,048,576, so A is 8 GiB.
#
# In this notebook you will:
# - count the bytes a GEMV must move, and the fastest time that allows;
# - build, launch and time a first kernel from Python;
# - predict its time with a model, then measure it;
# - see why the block size moves it;
# - see what a kernel does with CPU pointers, and why one bad launch breaks later calls;
# - write the kernel yourself.
#
# Every number says where it comes from. With a GPU here it is **live**. Without one it was **recorded** on an
# NVIDIA H200. Words in bold are defined where they first appear, and again in the [glossary](#Glossary).

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

ctx = nb.setup(upto=1)  # on a GPU: stage 1 is measured now (about 10 s); else the recorded H200 run

# %% [markdown]
# ## The two numbers
#
# Each element of A is read once and used once: 2 floating-point operations per 4 bytes. A GPU does far more
# arithmetic than that per byte it reads. So memory sets the pace, and the **floor** is the bytes moved over the
# bandwidth. We count `4·(M·K + K + M)` bytes: A and B read once, C written once. We use two bandwidths. One is
# the datasheet's peak. The other is the **read ceiling**, measured here by a kernel that only reads A.

# %%
nb.two_numbers(ctx)

# %% [markdown]
# ## The kernel
#
# Thread `row` walks its row of A and keeps a running sum. Each stage is one `.cu` file you can open.

# %%
nb.show_source("naive")

# %% [markdown]
# A **warp** is 32 threads that run each instruction together. A **block** is a group of warps that run on one
# **SM** (streaming multiprocessor); the H200 has 132 SMs. Here one load instruction of a warp reads 32
# different rows. Each read lands in a different 128-byte **cache line**:

# %%
pic.access("naive")

# %% [markdown]
# ## Build, launch, check, time
#
# These are all the lines between Python and the GPU. `lab.build_stage` compiles the file with torch's
# `load_inline`. It needs `nvcc`, not a GPU, and it caches the result. The `extern "C"` launcher at the bottom
# of the file is called through `ctypes`, with the tensors' device addresses.

# %%
st = lab.get_stage("naive")
built = lab.build_stage(st)  # compiled once, then loaded from the cache
print(built.resources["gemv_naive"])  # what the compiler says: registers, shared memory, spills
launch = st.function()  # the launcher, with its argument types set

# %%
# NBVAL_IGNORE_OUTPUT
if torch.cuda.is_available():
    M, K = 2048, 1 << 16
    A, B = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
    C = torch.full((M,), float("nan"), device="cuda")  # poisoned: a row the kernel misses stays NaN
    stream = torch.cuda.current_stream().cuda_stream
    args = (A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, 32, 0, stream)  # ..., block, variant, stream
    launch.check(launch(*args))  # a bad launch configuration raises here, at once
    ref = A.double() @ B.double()
    print("relative error against float64:", ((C.double() - ref).norm() / ref.norm()).item())
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    launch(*args)
    end.record()
    end.synchronize()
    print(f"one launch at M = {M}, K = {K}: {start.elapsed_time(end):.3f} ms")
else:
    print("No GPU here: the kernel is built above, but launching it needs a GPU.")

# %% [markdown]
# One launch timed alone is noisy. The tables below use `gemvlab.measure`. It reports the median of many
# launches. Before each one it empties the **L2**, the GPU's last cache, which all SMs share. torch.matmul and
# the read ceiling are timed in the same run. The **quartiles** beside a median are where the middle half of
# the times fall. Two times are a **tie** when their quartiles overlap, or when their gap does not repeat in a
# second run minutes apart.
#
# ## A model, before measuring
#
# **Latency** is the time from a load's issue to its data's arrival. To keep memory busy, many loads must
# overlap. **Little's law** says how many: bytes in flight = bandwidth × latency. **Bytes in flight** are bytes
# requested and not yet delivered. Read backwards, the law predicts a kernel's bandwidth from what it keeps in
# flight.

# %%
nb.model_inputs(ctx)

# %% [markdown]
# One thread per row makes 2048 threads, only 64 warps. A warp's 32 loads each need a 32-byte **sector** of
# a different row, so a warp keeps about 1 KiB in flight. Each round, the model also adds the time the SM's
# **L1**, a cache inside each SM, takes to look up the other lines the warp's loads touch. It assumes one line
# per clock, a rate fitted below.
# Slots and waves in the working are defined in notebook 02. The model's prediction, with its working:

# %%
nb.predict_line(ctx, "naive", working=True)

# %%
pic.littles_law_of(ctx, upto=0)

# %% [markdown]
# ## The measurement

# %%
nb.table(ctx, upto=1)

# %% [markdown]
# Stage 1 reads at a small fraction of the read ceiling. Its 64 warps keep far too few bytes in flight:
# Little's law asks for about 12 KiB per SM (printed above), and stage 1 has about 1 KiB on each of 64 SMs.

# %%
_ = plots.plot_stages(ctx.doc, upto=1)

# %% [markdown]
# ## Block size
#
# The block size is the number of threads per block, chosen at launch. The grid has `ceil(2048 / block)` blocks.
# With 32 threads per block, 64 blocks of one warp are assumed to land on 64 SMs. With 1024 threads, 2 blocks of
# 32 warps are assumed to land on 2 SMs:

# %%
pic.sm_map(64, 1, 132)

# %%
pic.sm_map(2, 32, 132)

# %% [markdown]
# The recorded sweep, on a log scale so that a factor of 2 reads the same at every height:

# %%
nb.sweep_table(ctx.recorded, "naive")
_ = plots.plot_block_sweep(ctx.recorded, "naive", log=True)

# %% [markdown]
# From 32 to 128 threads the same 64 warps keep the same bytes in flight, so the model's time stays flat. The
# measured time grows by a tenth; the model does not explain that rise. From 256 threads on, all warps share
# at most 8 SMs, and halving the busy SMs doubles the time. Some limit of about one cache line per SM per
# clock fits those points. The model takes it to be the L1's lookups: every float of A is one line lookup.
# That rate is a **fit** to this sweep, not a prediction:

# %%
nb.l1_fit(ctx.recorded)

# %% [markdown]
# The model at every block size, with that fitted rate, beside the recorded time:

# %%
nb.sweep_model(ctx, "naive")

# %% [markdown]
# Drag the slider: on a GPU it times the kernel now; without one it shows the recorded sweep.

# %%
# NBVAL_IGNORE_OUTPUT
nb.block_slider(ctx, "naive")

# %% [markdown]
# ## Accuracy
#
# The result is right, but its error is far above float32's rounding step of about 6e-8. Each thread adds
# 2^20 products one after another. Once the running sum is large, each small product loses its low bits. A
# tree of partial sums, which stage 2 uses, keeps them:

# %%
nb.correctness(ctx, "naive", tol=1e-3)
nb.serial_vs_tree_sum()

# %% [markdown]
# ## Pitfall: CPU pointers
#
# `torch.rand(M, K)` makes tensors on the CPU. Handing their `data_ptr()` to a CUDA kernel is a common first
# mistake. gemvlab checks every input in Python first, and names the fix:

# %%
try:
    lab.gemv(torch.rand(256, 4096), torch.rand(4096, 1), "naive")
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %% [markdown]
# Here the raw launcher runs with those pointers and no checks. It runs in a child process, so this notebook's
# CUDA context survives:

# %%
nb.pitfall(ctx, "cpu_pointers")

# %% [markdown]
# ## Pitfall: errors arrive late, and they stick
#
# A launch returns before its kernel runs. A fault inside the kernel shows at a later call that waits for the
# GPU. From then on the CUDA **context** is broken: every later CUDA call in that process fails. Only a new
# process recovers. Here the kernel is told that M is far larger than A:

# %%
nb.pitfall(ctx, "sticky_error")

# %% [markdown]
# Told only twice the rows, the same kernel reads 1 MiB past A and reports nothing. The rows past A are summed
# from memory that is not A's:

# %%
nb.pitfall(ctx, "small_overrun")

# %% [markdown]
# Two tools find the launch at fault. `CUDA_LAUNCH_BLOCKING=1` makes every launch wait, so the error appears
# at the launch itself. `compute-sanitizer` names the kernel, the thread and the address:

# %%
nb.pitfall(ctx, "launch_blocking")

# %%
nb.pitfall(ctx, "sanitizer")

# %% [markdown]
# ## Looking back
#
# The prediction beside the measurement. At 32 threads the model is bound by bytes in flight. The fitted
# line rate enters only as the L1 time in each round; it sets the bound from 256 threads on:

# %%
nb.look_back(ctx, upto=1)

# %% [markdown]
# ## Exercise: four sums in flight
#
# Open `exercises/01_naive.cu`. It sums each row as four quarters at once, in four running sums. The loads of
# one step fall in four different sectors. So a warp can keep up to about 4 KiB in flight, if the compiler
# issues the four quarters' loads together. The TODO: the other three quarters.
#
# Predict first. Little's law says four times the bytes in flight give up to four times the bandwidth, while
# nothing else limits it. Then run the cell below. `lab.try_kernel` builds your file and prints its registers
# and the global loads the compiler emitted. It checks the result against float64. On a GPU it times your
# kernel beside stage 1 and the read ceiling, at 32 threads, M = 2048 and K = 65536. It passes when the result
# is right and the time is at most 0.85 times stage 1's. Without a GPU it says BUILT, NOT TIMED. Edit and run
# again: an edited file is rebuilt. A solution is in `solutions/01_naive.cu`.

# %%
lab.try_kernel("01_naive")

# %% [markdown]
# ## Glossary
#
# - **block**: a group of threads, up to 1024, that runs on one SM and can share memory.
# - **bytes in flight**: bytes requested from memory and not yet delivered.
# - **cache line**: 128 bytes of memory, the unit the L1 cache looks up.
# - **context**: a process's state on the GPU; after a fault in a kernel, every later call fails.
# - **fit**: a number chosen to match a measurement, unlike a prediction.
# - **floor**: bytes moved over bandwidth, the fastest time memory allows.
# - **GEMV**: a matrix times a vector.
# - **L1**: a cache inside each SM.
# - **L2**: the GPU's last cache, shared by all SMs.
# - **latency**: the time from a load's issue to its data's arrival.
# - **Little's law**: bytes in flight = bandwidth × latency.
# - **quartiles**: the times below which a quarter and three quarters of the launches fall.
# - **read ceiling**: the bandwidth of a kernel that only reads A, measured in the same run.
# - **sector**: 32 bytes, the unit a cache line is filled in.
# - **SM**: streaming multiprocessor, one of the GPU's processors; each runs many warps at once.
# - **tie**: two times whose quartiles overlap, or whose gap does not repeat in a second run minutes apart.
# - **warp**: 32 threads that run each instruction together.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Details

# %% [markdown]
# - **The model's inputs.** The latency comes from one thread chasing pointers through random lines over A's
#   size (`gemvlab/measure/memory_latency.cu`). A random chase may also miss in the address translation caches,
#   which streaming loads mostly do not, so it may overstate the latency of coalesced loads. Stage 1's warps
#   use a second latency: one load instruction whose 32 lanes read 32 unrelated lines. Stage 1's lanes are 4 MiB
#   apart, not random; the model assumes the latency is the same.
# - **The fitted rate.** One line per SM per clock is fitted to the large-block half of this same sweep. It puts
#   the limit in the L1; the fit cannot tell the L1 from any other per-SM limit of one line per clock. Where
#   blocks land is not measured: the model assumes the scheduler spreads them over the SMs.
# - **Error codes.** The out-of-bounds launch reports error 717 (`cudaErrorInvalidAddressSpace`), not the 700
#   (illegal memory access) of the CPU-pointer demo; under compute-sanitizer the program sees 719, because the
#   sanitizer ends the faulting kernel. Which address the kernel reached is not printed.
# - **CPU pointers.** Where the driver maps host memory for the GPU (HMM or ATS, on some Linux systems), a
#   kernel given a CPU tensor's address can read it and succeed. Code that works on one machine can then fail on
#   another.
# - **Timing.** Each launch is timed alone with CUDA events, after a 256 MiB read empties the L2
#   (`gemvlab/measure/timing.py`). Reading, not writing, leaves clean lines, which cost nothing to drop.
#   `docs/design/measurement.md` has the measurements behind that choice.
# - **The exercise** on the H200 (2026-12-01, `docs/design/exercises.md`): `solutions/01_naive.cu` took 4.40 ms,
#   stage 1 5.79 ms (0.76x),
#   not the 0.25x that four times the bytes in flight predict. What else limits these scattered loads is not
#   separated here.
# - **Recorded numbers** come from `gemvlab/results/recorded/h200.json` and do not follow your edits to a kernel.
