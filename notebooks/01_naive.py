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
# **C = A·B**, with A an M×K float32 matrix (row-major) and B a vector of K floats. The headline shape is
# M = 2048, K = 1,048,576: A is 8 GiB, the shape of KernelBench level 1 problem 4 and of the transcript this
# workbook grew from, where an engineer lost hours to the pitfalls shown at the end of this notebook.
#
# **What you will learn here**
# - the two numbers to work out before writing any kernel: the bytes that must move, and the floor time they imply;
# - a model that predicts a kernel's time from what it keeps in flight (Little's law), shown before the
#   measurement (for this first stage, two of its inputs were chosen after it was measured: said where);
# - a first kernel that is correct and slow, and why: too few bytes in flight, and, when every lane of a
#   warp reads a different row, a per-SM limit of about one cache line per clock (fitted to this notebook's
#   block-size sweep; the model puts it in the L1, which the fit cannot tell from other per-SM limits);
# - what a CUDA kernel does with CPU pointers, and why one faulting launch breaks every CUDA call after it.
#
# Every number printed below says where it comes from: **live** on this machine's GPU, or **recorded** on an
# NVIDIA H200 (`gemvlab/recorded/h200.json`) when there is no GPU here. Compiler facts (registers, spills,
# machine code) are computed on this machine either way: building needs `nvcc`, not a GPU.

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
# Live on a GPU (stage 1 is measured now, about 10 s); recorded H200 results otherwise.
import torch
import gemvlab as lab
from gemvlab import notebook as nb, plots
ctx = nb.setup(upto=1)

# %% [markdown]
# ## The two numbers
#
# Every element of A is read once and used once: 2 floating-point operations per 4 bytes. A GPU does far
# more arithmetic per byte of memory bandwidth than that (an H200, by its datasheet, not measured here: about 67
# TFLOP/s of float32 against 4.8 TB/s, 14 FLOP per byte), so this kernel can only be as fast as memory: the **floor** is bytes
# moved divided by bandwidth. We count bytes as `4·(M·K + K + M)` (A and B read once, C written once) and use
# two bandwidths: the vendor's datasheet peak, and a **read ceiling** measured in the same run (a float4
# read-only pass over A that does nothing else: `gemvlab/cuda/read_ceiling.cu`).

# %%
nb.two_numbers(ctx)

# %% [markdown]
# ## A model, before measuring
#
# Memory answers a load after a **latency**. To keep memory busy, enough loads must be travelling at once:
# by Little's law, *bytes in flight = bandwidth × latency*. Read backwards, it predicts a kernel's bandwidth
# from what its warps keep in flight: *bandwidth = resident warps × bytes in flight per warp / latency*,
# never above the read ceiling. The latency is measured once per GPU (`gemvlab/cuda/memory_latency.cu`:
# one thread chasing pointers, so exactly one load is ever in flight):

# %%
nb.model_inputs(ctx)

# %% [markdown]
# One thread per row gives M = 2048 threads, 64 warps. At each step the 32 threads of a warp read 32
# different rows, K floats (4 MiB) apart, so the loads of one warp go to 32 different places in A's 8 GiB:
# each of those load instructions reads 32 unrelated lines. The model takes its latency from a warp chasing
# pointers in a similar pattern (each lane its own random line: the third latency above); the naive warp's
# lanes are exactly 4 MiB apart instead, and the model assumes that makes no difference. Each lane keeps one
# 32-byte sector of its row in flight (assumed: the next seven floats are served by the same sector, if it
# stays in the L1; not measured, and no DRAM count for this stage is printed). And each load
# instruction touches 32 different 128-byte lines, which the model has the SM's L1 cache look up at a rate
# fitted to this notebook's block-size sweep (one line per clock, below; the fit cannot tell the L1 from any
# other per-SM limit of one line per clock), so the warp's other loads in a round add L1 time.
#
# Said plainly, this stage's model was fitted after the fact in both of those inputs: the warp chase was
# added to the recording after an earlier record of this stage had shown the model with one thread's
# latency missing it (in this record it is measured in the same run as the stage); and the L1 rate comes
# from the same sweep it then explains. So what follows
# is an explanation checked for consistency, not a blind prediction; the look-back shows what each input
# contributes. The model, at the block size the stage table uses (32 threads):

# %%
nb.predict(ctx, "naive")

# %% [markdown]
# ## The kernel
#
# `gemvlab/cuda/01_naive.cu`: each stage is one `.cu` file you can open and edit.

# %%
nb.show_source("naive")

# %% [markdown]
# The launcher at the bottom is what Python calls (through `ctypes`, with device pointers). It launches
# `ceil(M / block)` blocks and checks `cudaGetLastError()` at once, which catches a bad launch
# configuration. It cannot catch a fault inside the kernel: the launch returns without waiting for the
# kernel, so a fault while it runs is reported by a later call that waits for the GPU (the pitfalls below).
#
# ## Building it
#
# `lab.build_stage` compiles the file with `torch.utils.cpp_extension.load_inline` (cached across processes;
# the first build takes a few seconds) and keeps what `ptxas -v` reports and what the disassembler shows.

# %%
nb.build_report("naive")

# %% [markdown]
# The loads in the machine code (SASS). `LDG` is a global load; `.E` means a 64-bit address, and no size
# suffix means 32 bits: one float per thread per instruction. `.CONSTANT` marks the read-only path, which
# the compiler may use because the pointers are `const __restrict__`. The compiler unrolled the loop four
# times: four loads of A (one pointer) and four of B (the other) per trip; the count below says how many
# are issued before the first sum uses one.

# %%
nb.sass_lines("naive", pattern="LDG")
nb.loads_in_flight("naive")

# %% [markdown]
# ## Is it correct?
#
# Checked against float64 on fresh `torch.rand` inputs (never zeros: a kernel that writes nothing would pass
# on zeros), with the output filled with NaN before the launch, so a row the kernel forgets fails.

# %%
nb.correctness(ctx, "naive", tol=1e-3)

# %% [markdown]
# Correct, but the error is far above float32's unit roundoff, 2^-24 ≈ 6e-8. Each thread adds 2^20 products one after
# another: once the running sum is large, each small product loses its low bits. The same effect on the CPU,
# and the cure that stage 2 will use, a tree of partial sums:

# %%
nb.serial_vs_tree_sum()

# %% [markdown]
# ## How fast?
#
# The stage table grows one row per notebook. Times are medians of at least 20 launches, each timed alone
# with CUDA events, the L2 cache flushed before each launch by reading 256 MiB (`gemvlab.bench.flush_l2`
# says why not `triton.testing.do_bench`'s flush, which writes), with the quartiles beside them;
# torch.matmul (cuBLAS) and the read ceiling are timed in the same run.

# %%
nb.table(ctx, upto=1)

# %%
_ = plots.plot_stages(ctx.doc, upto=1)

# %% [markdown]
# ## Why the block size moves this kernel, and by how much
#
# The recorded sweep over block sizes:

# %%
nb.sweep_table(ctx.recorded, "naive")
nb.sweep_span(ctx.recorded, "naive")

# %% [markdown]
# With one thread per row the grid has only `ceil(2048 / block)` blocks. The occupancy calculator says how
# many blocks *could* share an SM; the grid says how many exist. Here the grid sets how many warps are
# resident: with at most 64 blocks for 132 SMs, the model assumes each block gets an SM of its own and the
# rest get nothing (where the scheduler really places blocks is not measured here).

# %%
nb.occupancy_table("naive", recorded=ctx.recorded)

# %% [markdown]
# The model, block size by block size, beside the measurement. *implied latency* runs Little's law
# backwards: the latency at which the bytes in flight would give the measured bandwidth.

# %%
nb.sweep_model(ctx, "naive")

# %% [markdown]
# Two regimes show up.
# - **32 to 128 threads:** the same 64 warps are in flight whatever the block size (2048 threads), so the
#   bytes in flight do not change, and the time moves from 93.677 to 102.349 ms (the sweep above). Fewer SMs get work as
#   the block grows (64, 32, 16), but in the model the L1's line rate binds only from 256 threads on.
# - **256 threads and more:** the 64 warps crowd onto at most 8, 4, then 2 SMs (one block per SM assumed),
#   and every float of A costs one
#   cache line handled by the SM that reads it (one line per lane per load instruction). If an SM handles a
#   fixed number of lines per clock (the model says its L1 does; nothing here measures which unit), halving
#   the number of busy SMs doubles the time. Fitting that rate to the recorded sweep:

# %%
nb.l1_fit(ctx.recorded)

# %% [markdown]
# Drag the slider: on a GPU it times the kernel at that block size now; without one it shows the recorded
# sweep, with what the occupancy calculator allows and what the grid really leaves on the SMs.

# %%
# NBVAL_IGNORE_OUTPUT
nb.block_slider(ctx, "naive")

# %% [markdown]
# ## Pitfall: a kernel handed CPU pointers
#
# In the transcript, the tensors were created on the CPU (`torch.rand(M, K)`), their `.data_ptr()` handed
# to a CUDA kernel, and the run died with *an illegal memory access was encountered*, at a line that had
# nothing to do with the kernel. gemvlab checks every input in Python before any kernel runs, and says what
# to do:

# %%
A_cpu, B_cpu = torch.rand(256, 4096), torch.rand(4096, 1)
try:
    lab.gemv(A_cpu, B_cpu, "naive")
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %% [markdown]
# What the raw kernel does with those pointers, skipping the checks (in a child process, so that this
# notebook's CUDA context survives). On the machine that ran this demo (its label says which) the driver
# did not map the CPU tensor's memory for the GPU; on systems where it does (heterogeneous memory
# management, HMM, or address translation services, ATS) the same launch can read host memory and succeed,
# so code that "works" on one machine can fail on another:

# %%
nb.pitfall(ctx, "cpu_pointers")

# %% [markdown]
# ## Pitfall: errors arrive late, and they stick
#
# A launch returns before the kernel runs. A fault inside the kernel is reported by the first CUDA call that
# checks for errors after the fault, at the latest the next one that synchronizes (`torch.cuda.synchronize()`,
# `.item()`, a copy to the CPU), and from then on the CUDA
# context is broken: **every** later CUDA call in that process fails with the same error, however innocent.
# The only cure is a new process. Here the naive kernel is told M is far larger than A:

# %%
nb.pitfall(ctx, "sticky_error")

# %% [markdown]
# The error is 717, `cudaErrorInvalidAddressSpace`, not the *illegal memory access* (700) of the transcript
# and of the CPU-pointer demo above. The runtime documents 717 as an instruction that may only use some
# address spaces (global, shared or local) being given an address outside the one(s) it may use; which address this
# kernel reached is not printed here. What the demos do show is that the same bug gives error 717, error
# 719 under compute-sanitizer (below), or none: told only twice the rows, so that it reads 1 MiB past A, the same kernel reports nothing at all.
# No fault means every address it read was mapped for this process, so the rows past A were summed from
# memory that is not A's, silently (the *result* line: rows 64 to 127, all past A, came back finite).

# %%
nb.pitfall(ctx, "small_overrun")

# %% [markdown]
# To find the launch at fault: `CUDA_LAUNCH_BLOCKING=1` makes every launch wait for its kernel, so the error
# surfaces at the launch itself (slow: for debugging only).

# %%
nb.pitfall(ctx, "launch_blocking")

# %% [markdown]
# And `compute-sanitizer` (memcheck) names the kernel, the thread, the block and the address. Under it the
# program sees a third error code, 719 (*unspecified launch failure*): the sanitizer checks each access
# itself, reports the bad accesses it catches (the first few are shown), and, as its documentation
# describes, ends the kernel, so the program is told only that the launch failed (the code it sees, above).

# %%
nb.pitfall(ctx, "sanitizer")

# %% [markdown]
# ## Looking back at the prediction
#
# The model's prediction, shown before the table above (with the two inputs chosen after the fact, as said
# there), beside the measurement:

# %%
nb.look_back(ctx, upto=1)

# %% [markdown]
# The block-size table above shows where the model holds and how far. From 32 to 128 threads it is 1.07 to
# 1.17 times optimistic (the ratio column; 1.07 in the look-back, from the stage table's timing), more so as the same 64 warps share fewer SMs (at 128 threads, 4
# per SM): the *implied latency* grows while the model's round stays fixed. One candidate for that growth,
# not measured here: the model adds each warp's L1 lookups to its own latency as if the warps sharing an
# SM's L1 never waited for one another. It cannot explain the ratio of 1.07 at 32 threads (the sweep and the look-back), where each busy SM holds
# one warp; that part is unexplained. One named assumption is a candidate there: that a load whose lanes
# are exactly 4 MiB apart has the latency of the random-line warp chase (not measured). The key input is the latency
# of one load instruction whose 32 lanes read 32 unrelated lines, about 1.7 times one thread's (the model
# inputs above). What each input contributes, against the measurement:

# %%
nb.naive_with_thread_latency(ctx)

# %% [markdown]
# From 256 threads on, the model's ratios are 1.06, 1.00 and 1.00, and that agreement is partly by
# construction: the per-SM rate of one line per clock was fitted to this same sweep. What the fit does show
# is that one constant accounts for 512 and 1024 threads; at 256 it is 1.06 times optimistic, about as
# much as at 32 threads (1.07), so one line per clock is not the whole story there either. The serial sum is also the least
# accurate of the stages (notebook 04's stage table prints each stage's error).
#
# ## Exercise
#
# Copy `01_naive.cu`, and change it so that one **warp** computes one row: lane `l` reads columns
# `l, l + 32, l + 64, ...`, then the 32 lanes add their sums. Before you time it, work out with the model how
# many warps the grid now has, how many bytes each keeps in flight, and how many lines each load instruction
# touches; predict the time with `gemvlab.model`'s numbers (`nb.model_inputs(ctx)`). Build it with
# `gemvlab.build.build("mine", source)` and time it with `gemvlab.bench.time_launches`. You will have
# written most of stage 2, the next notebook.
