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
# # 3. Vectorized loads and warp shuffles
#
# Two stages in this notebook.
# - **Stage 3, vectorized:** each thread loads a `float4` (16 bytes) from A and from B: four times the bytes
#   per load instruction. The catch: a float4 address must be a multiple of 16.
# - **Stage 4, warp shuffle:** three changes at once: the reduction moves into registers
#   (`__shfl_down_sync`), each thread keeps several independent loads in flight, and A's lines are not
#   cached in the L1. This notebook measures one change at a time, each on top of the ones before.
#
# **What you will learn here:** `LDG.E.128` in the machine code; alignment and the K % 4 tail; the shuffle's
# full-mask rule; what each of stage 4's changes is worth, with its spread, and where it is worth nothing;
# how registers decide how many blocks run at once, and how many waves of blocks that leaves.

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
# Live on a GPU (stages 1 to 4 are measured now, about 10 s); recorded H200 results otherwise.
import torch
import gemvlab as lab
from gemvlab import notebook as nb, plots
ctx = nb.setup(upto=4)

# %%
nb.two_numbers(ctx)

# %% [markdown]
# ## Stage 3: the model, before measuring
#
# Stage 2 was short of bytes in flight: one 4-byte load per lane, 128 bytes per warp. With float4, one load
# instruction per warp reads 512 contiguous bytes, so the same warps keep four times the bytes in flight:

# %%
nb.model_inputs(ctx)
nb.predict(ctx, "vectorized")

# %% [markdown]
# The model says stage 3 has more than enough in flight, so the read ceiling itself is the limit.

# %%
nb.show_diff("coalesced", "vectorized")

# %%
nb.build_report("coalesced", "vectorized")

# %% [markdown]
# `LDG.E.128`: one 128-bit load per thread (`.CONSTANT`: through the read-only path, allowed because the
# pointers are `const __restrict__`):

# %%
nb.sass_lines("vectorized", pattern="LDG")

# %%
nb.correctness(ctx, "vectorized")

# %% [markdown]
# ## Alignment: what `A[:, 1:]` and `B[1:]` do
#
# A float4 load from an address that is not a multiple of 16 is an error in hardware. Views make such
# addresses easily: `B[1:]` is contiguous but starts 4 bytes into its storage. A raw float4 kernel given one:

# %%
nb.pitfall(ctx, "misaligned_float4")

# %% [markdown]
# gemvlab checks the pointers before launching, and names the fix (note that `.contiguous()` is not one: the view is already contiguous):

# %%
B_storage = torch.rand(4097)
B_view = B_storage[1:]
print("B_view.is_contiguous():", B_view.is_contiguous(), "  data_ptr() % 16 =", B_view.data_ptr() % 16)
try:
    lab.kernels.check_inputs(torch.rand(16, 4096), B_view, "vectorized", 256, 0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %% [markdown]
# A column slice such as `A[:, 1:]` is not even contiguous (its rows are K + 1 floats apart), and is refused
# for every stage (the scalar stages need contiguous rows too; every stage runs the same check, here for
# stage 1; the dispatcher of notebook 05 takes it). And
# when K % 4 != 0, row r starts at byte 4·r·K, which is a multiple of 16 only for every fourth row (every
# second when K % 4 == 2): gemvlab refuses it for the float4 stages and offers `lab.pad_k`, which pads K with zeros (zeros add
# nothing to a dot product; the price is a copy of A). The scalar stages take any K, and so does the
# dispatcher (`lab.gemv(A, B)` without a stage, notebook 05), which reads the unaligned part of each row
# one float at a time.

# %%
try:
    lab.kernels.check_inputs(torch.rand(16, 4097)[:, 1:], torch.rand(4096), "naive", 256, 0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %%
A = torch.rand(16, 4099)
B = torch.rand(4099, 1)
try:
    lab.kernels.check_inputs(A, B, "vectorized", 256, 0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)
A4, B4 = lab.pad_k(A, B)
print("padded:", tuple(A4.shape), tuple(B4.shape), " same product:", torch.allclose(A4 @ B4, A @ B))

# %% [markdown]
# ## Stage 4: three changes, each for a reason
#
# - **Shuffles.** `__shfl_down_sync(mask, v, offset)` reads `v` from the lane `offset` places up in the same
#   warp, register to register. Five steps (16, 8, 4, 2, 1) sum a warp's 32 values with no shared memory and
#   no barrier; one value per warp then goes through shared memory.
# - **Loads in flight.** The source writes `LOADS` independent float4 loads of A and B per trip, before any
#   use, so that each thread can keep several requests travelling at once. How many it really issues before
#   it first waits is the compiler's choice; the SASS below says.
# - **A past the L1.** Every block reads all of B (4 MiB), so B's lines in an SM's L1 cache can serve the
#   other blocks on that SM, as long as nothing pushes them out. A's bytes are each used once, yet a load
#   with the default caching caches them in the L1 too (here the compiler reads A, like B, through the
#   read-only path, `LDG.E.128.CONSTANT`: both are `const __restrict__`). `__ldcg` ("cache global") loads
#   A without caching it in the L1 (`LDG.E.128.STRONG.GPU`; the loads still pass through it); B keeps the
#   default caching, as the SASS below shows.
#
# The stage's `.cu` file keeps the last change behind a switch (`A_PAST_L1`), so that each change can be
# measured on its own. The model for stage 4 at the stage table's configuration:

# %%
nb.predict(ctx, "warp_shuffle")

# %% [markdown]
# And for stage 3 at 32 and 64 threads, where its grid leaves fewer warps per SM, and stage 4 at 32 (before
# the measurements below):

# %%
nb.predict(ctx, "vectorized", 32)
nb.predict(ctx, "vectorized", 64)
nb.predict(ctx, "warp_shuffle", 32)

# %% [markdown]
# At 256 threads stage 3 already had more than enough in flight (64 warps per SM, 4.12 MiB, as in its
# prediction earlier in this notebook and in the model's sweep below), so
# the model expects no gain from loads in flight there. At 64 threads it predicts the read ceiling for stage 3
# too; it expects a gain only at 32 threads, where stage 3 is short of bytes in flight: 2.741 ms predicted for
# stage 3 and 1.841 for stage 4 there (the lines above).

# %%
nb.show_diff("vectorized", "warp_shuffle")

# %%
nb.build_report("warp_shuffle")

# %% [markdown]
# In the SASS, A's loads are `LDG.E.128.STRONG.GPU` (coherent at GPU scope: cached in the L2, not the L1) and
# B's are `LDG.E.128.CONSTANT` (the read-only path through the L1):

# %%
nb.sass_lines("warp_shuffle", 2, pattern="LDG|SHFL|BAR", limit=20)

# %% [markdown]
# How many loads of A each variant really issues before its first multiply, counted in its SASS (the model
# uses these counts, not the source's `LOADS`; ptxas issues 2 of A before the first multiply at
# `LOADS` = 2, 4 and 8):

# %%
nb.loads_in_flight("warp_shuffle")

# %% [markdown]
# **The full-mask rule.** `0xffffffff` promises that all 32 lanes of the warp execute the shuffle. If the
# block size is not a multiple of 32, the last warp is partial, and a shuffle naming absent lanes is
# undefined behaviour. gemvlab refuses such blocks:

# %%
try:
    lab.kernels.check_inputs(torch.rand(16, 4096), torch.rand(4096), "warp_shuffle", 100, 4, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)

# %%
nb.correctness(ctx, "warp_shuffle")

# %% [markdown]
# ## The stage table so far, with its spread

# %%
nb.table(ctx, upto=4)

# %%
_ = plots.plot_stages(ctx.doc, upto=4)

# %% [markdown]
# The *step* column calls a difference a tie where the two rows' quartiles overlap, and marks with `~` a step
# smaller than the drift between two timings in the same record (printed further down). Stage 4 against stage 3,
# at each one's best block size:

# %%
nb.compare_rows(ctx.doc, "vectorized", "warp_shuffle")

# %% [markdown]
# ## Stage 4 taken apart
#
# The same launches, one change at a time: stage 3; stage 4 with one load in flight and A through the L1
# (stage 3 with only the shuffle reduction); then 2 loads in flight; then `__ldcg`. All at once, round-robin,
# at small blocks of the headline shape (32 and 64 threads, where stage 3 has fewer warps per SM), at 128,
# and at 256 threads:

# %%
nb.steps_table(ctx.recorded, M=2048)

# %% [markdown]
# Read it line by line, against the quartiles:
# - **The shuffle reduction** ties with stage 3's tree at every block size measured here (32 to 256): a
#   block reduces once, at the end of a 4 MiB row: at this shape the two reductions cost the same, within
#   the quartiles (what either costs alone is not measured).
# - **Two loads in flight** is the large step at 32 and 64 threads. At 32 threads the model said stage 3 was
#   short of bytes in flight (15.5 warps per SM); at 64 it predicted the read ceiling for stage 3 and missed
#   (the sweep tables below print the ratio), and more bytes in flight still paid: whatever the model's
#   fixed round leaves out (notebook 02), more loads in flight covered part of it. At 128 threads the step
#   is 1.007x, the quartiles overlapping: a tie, as the model expected (stage 3 at the read ceiling there:
#   its sweep below); at 256 it is 1.005x, the quartiles overlapping: a tie, as the model expected.
# - **`__ldcg`** takes less time at 32, 64 and 128 threads (1.03x, 1.02x and 1.02x), each beyond the
#   quartiles and beyond how far ratios moved between two timings in the same record (the drift, 0.79%,
#   printed below; two passes at the headline shape, not independent runs), and ties at 256 (quartiles
#   overlap). Earlier records, not printed here, are listed in the comment in `04_warp_shuffle.cu`.
#
# The same steps where rows are few: 16 rows of 16 Mi floats and 128 rows of 2 Mi floats (notebook 04's
# shape sweep), at 256 and 1024 threads:

# %%
nb.steps_table(ctx.recorded, M=16)
print()
nb.steps_table(ctx.recorded, M=128)

# %% [markdown]
# With 16 rows there are 16 blocks for 132 SMs: loads in flight are the step that pays (1.76x at both
# 256 and 1024 threads). A candidate, not computed here: with 16 busy SMs, each must keep more bytes in
# flight for the same bandwidth (Little's law per SM), and more loads per thread are what adds them.
# `__ldcg` took more time at M = 16 (1.008x and 1.01x at 256 and 1024 threads), beyond the quartiles and,
# by a little, the 0.79% drift between two timings (below; measured at the headline shape, applied here):
# slower in this run, by a margin close to that drift; why is not separated. At M = 128 it was 1.006x
# with 256 threads, within that drift, and at 1024 threads the quartiles overlap: ties. At M = 16 one
# block per row is the wrong design (notebook 05); at M = 128 stage 4 comes within about 4% of the read
# ceiling (0.250 against 0.240 ms at its best block size, notebook 04's shape table; 0.249 at 1024
# threads in the steps table above).
#
# How far apart must two kernels be before a difference is real? Within a run, beyond their quartiles. But
# medians also move between timings: the record timed the same kernels twice at the headline shape, minutes
# apart (two timings in one record, not independent runs):

# %%
nb.twice(ctx.recorded)

# %% [markdown]
# gemvlab's kernels and the read ceiling moved by under 1% (warp_shuffle and multirow the most, 0.4%),
# torch.matmul by 0.5%, and the ratios between gemvlab's kernels and the read ceiling by up to 0.79%: the figure the verdicts in
# this notebook use. Two timings in one record are not independent runs, so a step
# that holds within a run is a measured difference for that run; to trust it across runs, repeat the
# comparison.
#
# ## What the L1 hint does, counted
#
# Nsight Compute's counters at the headline shape for stage 4 with A through the L1 (`<2, false>`) and with
# `__ldcg` (`<2, true>`), 256 threads, 2 loads, as recorded (notebook 04 runs `ncu` live on a GPU): L1
# sectors loaded, the share of them that hit, and the sectors read from the L2:

# %%
nb.counters(ctx, only=("warp_shuffle",), live=False)

# %% [markdown]
# The same L1 sectors either way (the loads of A still pass through the L1); with `__ldcg` slightly more of
# them hit (they are B's: A's are never reused) and slightly fewer are read from the L2. In time, the
# counters' own single launches (one each, the *time us* column) put `__ldcg` ahead (1884.6 against 1905.2),
# one launch each and so no verdict, and the steps table measured a tie at 256 threads (quartiles overlap)
# and less time at 128 (1.02x): the counters show the cache effect beside the time, not that the one
# causes the other.

# %% [markdown]
# ## Registers, waves, and the model
#
# The recorded sweep: stage 3, then stage 4 with LOADS = 1, 2, 4 and 8 float4 loads of A per trip in the source
# (ptxas issues at most 2 of them before the first use: the SASS count above), at each block size.

# %%
nb.sweep_table(ctx.recorded, "vectorized")
print()
nb.sweep_table(ctx.recorded, "warp_shuffle")

# %%
_ = plots.plot_block_sweep(ctx.recorded, "warp_shuffle")

# %% [markdown]
# Registers decide how many blocks fit: 2 loads need 32 registers, 4 need 40. The calculator hands registers
# out per warp within each quarter of the SM, so 40 registers allow 48 warps per SM, not 64; with the
# grid's 2048 blocks that means more waves, the last one partly empty. And the SASS count above says 4
# loads issue no more loads of A before their first use than 2. In the sweep, 4 loads take more time
# than 2 at 128 threads (2.081 against 1.911 ms), at 256 (2.053 against 1.896) and at 512 (1.944 against
# 1.899), each beyond the ± ranges (half the spread between the quartiles, either side of the median)
# and the 0.79% drift. At 32 they take less (2.223 against 2.254), beyond the ranges and the drift: a
# difference in this run, which the SASS count does not explain; at 1024 (1.989 against 1.999), beyond
# the ranges but within the drift: a tie; and at 64 (1.919 against 1.925) the ranges overlap: a tie. The
# ± ranges are symmetric and the quartiles need not be (the steps table above prints them), so an
# overlap of ranges is a different test from an overlap of quartiles (either can be the stricter). The model (below;
# one fitted input, notebook 01's L1 line rate, which adds 8 ns of L1 time to the 330-ns memory latency
# in each round here; shown after the sweep) gives more time for 4 loads at 512 threads (1.867 against
# 1.841 ms), from a sixth wave that is 17% full and keeps too few bytes in flight to read at the ceiling
# (the wave-by-wave view at the end of the model cell below); the sweep measured a larger step (1.944
# against 1.899). At 128 and 256 threads the model has both kernels at the read ceiling (4 loads keep 48
# warps per SM, 6.19 MiB in flight): the sweep measured 4 loads slower at both, which the model does not
# explain.

# %%
nb.occupancy_table("warp_shuffle", 2, recorded=ctx.recorded)
print()
nb.occupancy_table("warp_shuffle", 4, recorded=ctx.recorded)

# %% [markdown]
# The model, wave by wave, beside the measurement, for stage 3 and for stage 4 with 2 and with 4 loads:

# %%
nb.sweep_model(ctx, "vectorized")
print()
nb.sweep_model(ctx, "warp_shuffle", 2)
print()
nb.sweep_model(ctx, "warp_shuffle", 4)
print()
nb.predict(ctx, "warp_shuffle", 512, 4)  # 4 loads at 512 threads, wave by wave

# %% [markdown]
# Where the model is bound by the read ceiling, its full waves keep more bytes in flight than Little's law asks
# for *at the idle latency* (compare the *in flight* column with the figure from `nb.model_inputs` above),
# and the model predicts the ceiling. Where the measurement is 1.06 or more times the model's time (stage 3
# at 32 threads, bound by bytes in flight in the model, and at 64, 128 and 1024; stage 4 at 32 threads with
# 2 and 4 loads; 4 loads at 128, 256 and 1024; 2 loads at 1024), the model does not explain the difference. Candidates, none separated
# here: notebook 02's fixed round per load (no growth under load, no other work between loads); waves that
# do not run in lockstep (a block frees its slot only when its last warp ends); and B's traffic through the
# L1 and L2, which the model treats as free. (Once a kernel is
# ceiling-bound, the *implied latency* is the wait that the model's bytes in flight would imply at the
# measured bandwidth, queueing included: it no longer says anything about the idle latency, or whether
# more bytes in flight would help.)

# %%
# NBVAL_IGNORE_OUTPUT
nb.block_slider(ctx, "warp_shuffle")

# %% [markdown]
# ## Looking back at the predictions

# %%
nb.look_back(ctx, upto=4)

# %% [markdown]
# Stages 3 and 4 were predicted at the read ceiling and measured 1.04 and 1.03 times its time. The model
# assumes that a kernel reading A at the ceiling pays nothing for B's re-reads from the L1 and L2 (as many
# L1 sectors as A's, computed from the sizes: the counters above print only the total), for its reduction, or for its launch. The few percent are not
# separated among these.
#
# ## Exercise
#
# Take `STAGE4_STEP` apart yourself: `lab.gemv(A, B, lab.kernels.STAGE4_STEP, 256, 2)` runs stage 4 with A
# through the L1. Check with `nb.sass_lines(lab.kernels.STAGE4_STEP, 2)` that its loads of A are `LDG.E.128.CONSTANT` (the default caching), time
# both at block 64 with `gemvlab.bench.time_round_robin`, and decide with the quartiles and the drift
# whether the difference is a tie. Then predict, with `nb.occupancy_table("warp_shuffle", 8)` and the model, what
# LOADS = 8 does at 1024 threads, and check the sweep above.
