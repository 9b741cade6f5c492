"""Writes the cells of the four notebooks: `python tools/make_notebooks.py notebooks`.

The notebooks are generated so that their prose, code and order live in one reviewable file; edit
here, regenerate, then store outputs with `python tools/execute_notebooks.py` (without a GPU, as CI
sees them). Prose that quotes a number names where it comes from (the recorded H200 run, or a
file under tools/explore/); cells print the rest.
"""
import sys
import nbformat as nbf

def nb(cells):
    book = nbf.v4.new_notebook()
    book.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}}
    for kind, text in cells:
        text = text.strip("\n")
        book.cells.append(nbf.v4.new_markdown_cell(text) if kind == "md" else nbf.v4.new_code_cell(text))
    return book

SETUP = lambda upto: ("code", f"""# NBVAL_IGNORE_OUTPUT
# Live on a GPU (stages 1 to {upto} are measured now, about 10 s); recorded H200 results otherwise.
import torch
import gemvlab as lab
from gemvlab import notebook as nb, plots
ctx = nb.setup(upto={upto})""")

# ------------------------------------------------------------------------------------------
n01 = [
("md", """
# 1. Naive GEMV: one thread per row

**C = A·B**, with A an M×K float32 matrix (row-major) and B a vector of K floats. The headline shape is
M = 2048, K = 1,048,576: A is 8 GiB, the shape of KernelBench level 1 problem 4 and of the transcript this
workbook grew from, where an engineer lost hours to the pitfalls shown at the end of this notebook.

**What you will learn here**
- the two numbers to work out before writing any kernel: the bytes that must move, and the floor time they imply;
- a first kernel that is correct and slow, and three measured reasons why: uncoalesced loads, too few threads, serial float32 sums;
- what a CUDA kernel does with CPU pointers, and why one faulting launch breaks every CUDA call after it.

Every number printed below says where it comes from: **live** on this machine's GPU, or **recorded** on an
NVIDIA H200 (`gemvlab/recorded/h200.json`) when there is no GPU here. Compiler facts (registers, spills,
machine code) are computed on this machine either way: building needs `nvcc`, not a GPU.
"""),
SETUP(1),
("md", """
## The two numbers

Every element of A is read once and used once: 2 floating-point operations per 4 bytes. A GPU does tens
of FLOP per byte of memory bandwidth, so this kernel can only be as fast as memory: the **floor** is bytes
moved divided by bandwidth. We count bytes as `4·(M·K + K + M)` (A and B read once, C written once) and use
two bandwidths: the vendor's datasheet peak, and a **read ceiling** measured in the same run (a float4
read-only pass over A that does nothing else: `gemvlab/cuda/read_ceiling.cu`).
"""),
("code", "nb.two_numbers(ctx)"),
("md", """
## A prediction, before measuring

One thread per row gives M = 2048 threads. At each step the 32 threads of a warp read 32 different rows,
K floats (4 MiB) apart: one load instruction touches 32 separate 32-byte sectors and uses 4 bytes of each.
The caches can absorb the waste (the next 7 floats of each row arrive with the first), but 2048 threads
are 64 warps for a GPU with 132 SMs that each hold up to 64 warps: most of the chip has nothing to do,
and each busy warp waits for memory one load after another.

**Prediction:** at least 20 times slower than the floor, around 50 ms. We look back at this at the end.
"""),
("md", "## The kernel\n\n`gemvlab/cuda/01_naive.cu`: each stage is one `.cu` file you can open and edit."),
("code", 'nb.show_source("naive")'),
("md", """
The launcher at the bottom is what Python calls (through `ctypes`, with device pointers). It launches
`ceil(M / block)` blocks and checks `cudaGetLastError()` at once, which catches a bad launch
configuration. It cannot catch a fault inside the kernel: the kernel has not run yet when it returns.

## Building it

`lab.build_stage` compiles the file with `torch.utils.cpp_extension.load_inline` (cached across processes;
the first build takes a few seconds) and keeps what `ptxas -v` reports and what the disassembler shows.
"""),
("code", 'nb.build_report("naive")'),
("md", "The loads in the machine code (SASS). `LDG.E` is a 32-bit global load: one float per thread per instruction."),
("code", 'nb.sass_lines("naive", pattern="LDG")'),
("md", """
## Is it correct?

Checked against float64 on fresh `torch.rand` inputs (never zeros: a kernel that writes nothing would pass
on zeros), with the output filled with NaN before the launch, so a row the kernel forgets fails.
"""),
("code", 'nb.correctness(ctx, "naive", tol=1e-3)'),
("md", """
Correct, but the error is far above float32's 6e-8 resolution. Each thread adds 2^20 products one after
another: once the running sum is large, each small product loses its low bits. The same effect on the CPU,
and the cure that stage 2 will use, a tree of partial sums:
"""),
("code", "nb.serial_vs_tree_sum()"),
("md", "## How fast?\n\nThe stage table grows one row per notebook. Times are medians of at least 20 launches, each timed alone with CUDA events, the L2 cache flushed before each launch by reading 256 MiB (`gemvlab.bench.flush_l2` says why not `triton.testing.do_bench`'s flush, which writes); torch.matmul (cuBLAS) and the read ceiling are timed in the same run."),
("code", "nb.table(ctx, upto=1)"),
("code", "_ = plots.plot_stages(ctx.doc, upto=1)"),
("md", """
## Why block size moves this kernel 2x

With one thread per row, the block size decides how many blocks the 2048 threads are cut into, and so how
many SMs get any work at all:
"""),
("code", """for block in (32, 64, 128, 256, 512, 1024):
    blocks = -(-2048 // block)
    print(f"block {block:4}: {blocks:3} blocks, so at most {min(blocks, 132):3} of 132 SMs have work")"""),
("code", 'nb.sweep_table(ctx.recorded, "naive")'),
("md", """
Fewer, larger blocks pile the same 64 warps onto fewer SMs, and each SM can only pull so many bytes per
second on its own. Drag the slider: on a GPU it times the kernel at that block size now; without one it
shows the recorded sweep and the occupancy that the resource report implies (how many blocks and warps
fit on one SM).
"""),
("code", '# NBVAL_IGNORE_OUTPUT\nnb.block_slider(ctx, "naive")'),
("md", """
## Pitfall: a kernel handed CPU pointers

In the transcript, the tensors were created on the CPU (`torch.rand(M, K)`), their `.data_ptr()` handed
to a CUDA kernel, and the run died with *an illegal memory access was encountered*, at a line that had
nothing to do with the kernel. gemvlab checks every input in Python before any kernel runs, and says what
to do:
"""),
("code", """A_cpu, B_cpu = torch.rand(256, 4096), torch.rand(4096, 1)
try:
    lab.gemv(A_cpu, B_cpu, "naive")
except lab.GemvInputError as e:
    print("GemvInputError:", e)"""),
("md", "What the raw kernel does with those pointers, skipping the checks (in a child process, so that this notebook's CUDA context survives):"),
("code", 'nb.pitfall(ctx, "cpu_pointers")'),
("md", """
## Pitfall: errors arrive late, and they stick

A launch returns before the kernel runs. A fault inside the kernel is reported by whatever CUDA call
synchronizes next (`torch.cuda.synchronize()`, `.item()`, a copy to the CPU), and from then on the CUDA
context is broken: **every** later CUDA call in that process fails with the same error, however innocent.
The only cure is a new process. Here a kernel is told M is far larger than A:
"""),
("code", 'nb.pitfall(ctx, "sticky_error")'),
("md", """
To find the launch at fault: `CUDA_LAUNCH_BLOCKING=1` makes every launch wait for its kernel, so the error
surfaces at the launch itself (slow: for debugging only).
"""),
("code", 'nb.pitfall(ctx, "launch_blocking")'),
("md", "And `compute-sanitizer` (memcheck) names the kernel, the thread, the block and the address:"),
("code", 'nb.pitfall(ctx, "sanitizer")'),
("md", "## Looking back at the prediction"),
("code", 'nb.look_back(ctx, "naive", predicted_ms=50)'),
("md", """
The prediction had the right order of magnitude: the kernel is tens of times slower than the floor. Its
serial sum is also the least accurate of all the stages.

## Exercise

Copy `01_naive.cu`, and change it so that one **warp** computes one row: lane `l` reads columns
`l, l + 32, l + 64, ...`, then the 32 lanes add their sums. Before you time it, work out how many 32-byte
sectors one load instruction now touches, and how many blocks the grid has. Build it with
`gemvlab.build.build("mine", source)` and time it with `gemvlab.bench.time_launches`. You will have
written most of stage 2, the next notebook.
"""),
]

# ------------------------------------------------------------------------------------------
n02 = [
("md", """
# 2. Coalescing: one block per row

**What you will learn here**
- what "coalesced" means in bytes: the 32-byte sectors one warp's load instruction touches;
- the change that gives the first large step: all threads of a block share one row;
- the shared-memory reduction tree, and its three traps: an array sized for another block size, a block
  size that is not a power of two, and a missing `__syncthreads()`.
"""),
SETUP(2),
("md", "## The two numbers (unchanged: the same bytes must move)"),
("code", "nb.two_numbers(ctx)"),
("md", """
## Coalescing, drawn

Memory is fetched in 32-byte sectors. When the 32 lanes of a warp execute one load, the hardware gathers
the sectors their addresses fall in. Stage 1's lanes each read a different row, 4 MiB apart; stage 2's lanes
read 32 neighbouring floats of one row:
"""),
("code", """from gemvlab.plots import warp_sectors
for pattern in ("naive", "coalesced", "float4"):
    w = warp_sectors(pattern)
    print(f"{pattern:>9}: {len(w['sectors']):2} sectors fetched, {w['bytes_fetched']:4} B for {w['bytes_used']:3} B used "
          f"({w['efficiency']:.1%} of the fetched bytes used)")
_ = plots.plot_warp_sectors()"""),
("md", """
## A prediction, before measuring

Stage 2 launches one block per row: 2048 blocks of, say, 256 threads, enough to fill every SM; each load
instruction uses every byte it fetches. The loads are still 4 bytes per thread, and each thread has one
load in flight at a time. **Prediction:** within 2x of the read ceiling, about 3 ms, and a much smaller
rounding error, because each thread sums only K / blockDim.x products and the tree adds the rest.
"""),
("md", "## The kernel, and what changed since stage 1"),
("code", 'nb.show_source("coalesced")'),
("code", 'nb.show_diff("naive", "coalesced")'),
("md", "## Building it"),
("code", 'nb.build_report("naive", "coalesced")'),
("md", "The two `BAR` instructions are `__syncthreads()` (one before the tree, one inside its loop); the loads are still 32-bit:"),
("code", 'nb.sass_lines("coalesced", pattern="LDG|BAR")'),
("md", "## Is it correct?"),
("code", 'nb.correctness(ctx, "coalesced")'),
("md", "## How fast?"),
("code", "nb.table(ctx, upto=2)"),
("code", "_ = plots.plot_stages(ctx.doc, upto=2)"),
("md", """
## Block size

Now the block size sets how many threads share a row. The occupancy table says how many warps each SM can
hold at each block size; the sweep says what each costs.
"""),
("code", 'nb.occupancy_table("coalesced")'),
("code", 'nb.sweep_table(ctx.recorded, "coalesced")'),
("md", """
Occupancy explains the 32-thread column: an SM holds at most 32 blocks, so 32-thread blocks fill only half
its warp slots, and each warp has a single 4-byte load in flight. It does not explain the 64-thread column:
every SM is full there, yet it is about twice as slow as 128 threads. Something other than occupancy is at
work (a question for the exercise below).
"""),
("code", '# NBVAL_IGNORE_OUTPUT\nnb.block_slider(ctx, "coalesced")'),
("md", """
## The tree's traps

**1. A shared array sized for another block size.** Stage 2 sizes its shared array at launch
(`extern __shared__`, third launch parameter), so it always has `blockDim.x` floats. A common version declares
`__shared__ float partial[256];` and is later launched with more threads
(`gemvlab/cuda/pitfalls/smem_sized_for_256.cu`):
"""),
("code", 'nb.pitfall(ctx, "smem_too_small")'),
("md", """
**2. A block size that is not a power of two.** The tree halves the active threads at each level; with
384 threads the halving reaches an odd count and an element is never added. No error, just a wrong answer.
gemvlab refuses such a block before launching:
"""),
("code", """A, B = torch.rand(8, 64), torch.rand(64)
try:
    lab.kernels.check_inputs(A, B, "coalesced", block=384, variant=0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)"""),
("code", 'nb.pitfall(ctx, "not_power_of_two")'),
("md", """
**3. A missing `__syncthreads()`.** Without a barrier between levels, a thread can read its partner's slot
before the partner has written it, or before it has even stored its partial sum
(`gemvlab/cuda/pitfalls/tree_without_syncthreads.cu`). The answer is wrong by a different amount each run:
"""),
("code", 'nb.pitfall(ctx, "missing_sync")'),
("md", "`compute-sanitizer --tool racecheck` finds the hazard without needing a wrong answer:"),
("code", 'nb.pitfall(ctx, "racecheck")'),
("md", "## Looking back at the prediction"),
("code", 'nb.look_back(ctx, "coalesced", predicted_ms=3)'),
("md", """
## Exercise

1. The loads are coalesced, yet each thread still moves 4 bytes per load instruction and waits for each load
   before issuing the next. Read the SASS above: how many load instructions does one warp issue per 128 bytes
   of A? Predict what changes if each thread loads 16 bytes at once. That is stage 3, in the next notebook.
2. Why is block 64 twice as slow as block 128 when both fill every SM? Count, for each, how many rows are
   being read at once across the GPU and how many bytes each warp has in flight; then time block 64 with the
   loop unrolled by 2 (`#pragma unroll 2`) and see which explanation survives.
"""),
]

# ------------------------------------------------------------------------------------------
n03 = [
("md", """
# 3. Vectorized loads and warp shuffles

Two stages in this notebook.
- **Stage 3, vectorized:** each thread loads a `float4` (16 bytes) from A and from B: a quarter of the
  load instructions for the same bytes. The catch: a float4 address must be a multiple of 16.
- **Stage 4, warp shuffle:** the reduction moves into registers (`__shfl_down_sync`), each thread keeps
  several independent loads in flight, and A's loads skip the L1 cache so that B stays in it.

**What you will learn here:** `LDG.E.128` in the machine code; alignment and the K % 4 tail; the shuffle's
full-mask rule; what "several loads in flight" buys, and where it does not; how registers decide how many
blocks run at once, and why the last wave of blocks matters; what a cache hint is worth, measured.
"""),
SETUP(4),
("code", "nb.two_numbers(ctx)"),
("md", """
## Stage 3: a prediction

Stage 2 issues one 4-byte load of A and one of B per thread per step. With float4, a warp's instruction
reads 512 contiguous bytes, four times fewer instructions for the same bytes, so more bytes are in flight
per warp. **Prediction:** stage 3 reaches the read ceiling within 10%, about 2 ms.
"""),
("code", 'nb.show_diff("coalesced", "vectorized")'),
("code", 'nb.build_report("coalesced", "vectorized")'),
("md", "`LDG.E.128`: one 128-bit load per thread (`.CONSTANT`: through the read-only path, allowed because the pointers are `const __restrict__`):"),
("code", 'nb.sass_lines("vectorized", pattern="LDG")'),
("code", 'nb.correctness(ctx, "vectorized")'),
("md", """
## Alignment: what `A[:, 1:]` and `B[1:]` do

A float4 load from an address that is not a multiple of 16 is an error in hardware. Views make such
addresses easily: `B[1:]` is contiguous but starts 4 bytes into its storage. A raw float4 kernel given one:
"""),
("code", 'nb.pitfall(ctx, "misaligned_float4")'),
("md", "gemvlab checks the pointers before launching, and names the fix (note that `.contiguous()` is not one: the view is already contiguous):"),
("code", """B_storage = torch.rand(4097)
B_view = B_storage[1:]
print("B_view.is_contiguous():", B_view.is_contiguous(), "  data_ptr() % 16 =", B_view.data_ptr() % 16)
try:
    lab.kernels.check_inputs(torch.rand(16, 4096), B_view, "vectorized", 256, 0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)"""),
("md", """
A column slice such as `A[:, 1:]` is not even contiguous (its rows are K + 1 floats apart), and is refused
for every stage. And when K % 4 != 0, row r starts at byte 4·r·K, which is not a multiple of 16 for most
rows: gemvlab refuses it for the float4 stages and offers `lab.pad_k`, which pads K with zeros (zeros add
nothing to a dot product; the price is a copy of A). The scalar stages take any K.
"""),
("code", """A = torch.rand(16, 4099)
B = torch.rand(4099, 1)
try:
    lab.kernels.check_inputs(A, B, "vectorized", 256, 0, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)
A4, B4 = lab.pad_k(A, B)
print("padded:", tuple(A4.shape), tuple(B4.shape), " same product:", torch.allclose(A4 @ B4, A @ B))"""),
("md", """
## Stage 4: warp shuffles, loads in flight, and A past the L1

Three changes, each for a reason:
- **Shuffles.** `__shfl_down_sync(mask, v, offset)` reads `v` from the lane `offset` places up in the same
  warp, register to register. Five steps (16, 8, 4, 2, 1) sum a warp's 32 values with no shared memory and
  no barrier; one value per warp then goes through shared memory.
- **Loads in flight.** The loop issues `LOADS` float4 loads of A and B before using any, so each thread
  keeps several requests travelling at once.
- **A past the L1.** Every block reads all of B (4 MiB), and the blocks sharing an SM walk it at about the
  same pace, so B's lines in the SM's L1 cache serve several blocks, as long as nothing pushes them out.
  A's bytes are each used once, yet a plain load keeps them in the L1 too. `__ldcg` ("cache global")
  loads A through the L2 only; B keeps its plain load.

**Prediction:** stage 3 leaves about 3% between itself and the read ceiling, and B's traffic is most of
what differs (the read ceiling reads A alone). Stage 4 should win back part of it: about 1% at the headline
shape; more where stage 3 has too few threads in flight (small blocks).
"""),
("code", 'nb.show_diff("vectorized", "warp_shuffle")'),
("code", 'nb.build_report("warp_shuffle")'),
("md", "In the SASS, A's loads are `LDG.E.128.STRONG.GPU` (coherent at GPU scope: cached in the L2, not the L1) and B's are `LDG.E.128.CONSTANT` (the read-only path through the L1):"),
("code", 'nb.sass_lines("warp_shuffle", 2, pattern="LDG|SHFL|BAR", limit=20)'),
("md", """
**The full-mask rule.** `0xffffffff` promises that all 32 lanes of the warp execute the shuffle. If the block
size is not a multiple of 32, the last warp is partial, and a shuffle naming absent lanes is undefined
behaviour. gemvlab refuses such blocks:
"""),
("code", """try:
    lab.kernels.check_inputs(torch.rand(16, 4096), torch.rand(4096), "warp_shuffle", 100, 4, require_cuda=False)
except lab.GemvInputError as e:
    print("GemvInputError:", e)"""),
("code", 'nb.correctness(ctx, "warp_shuffle")'),
("md", """
## What the L1 hint buys, counted

Nsight Compute on the H200 (`tools/explore/h200-l1-counters.txt`: M = 2048, K = 65,536, 256 threads,
2 loads in flight, one launch each, the same kernel with A loaded plainly and with `__ldcg`). The L1 sees
33.6 M sectors either way, half of them B's; A's never hit (each is read once), so every L1 hit is a hit on B:

| A loaded with | L1 hits (of B's 16.8 M sectors) | sectors read from the L2 | time |
|---|---|---|---|
| plain load | 13.59 M (81%) | 18.78 M | 125.1 us |
| `__ldcg` | 14.62 M (87%) | 18.15 M | 121.7 us |

B's reads that reach the L2 fall from 2.0 M sectors to 1.4 M; the DRAM bytes (537 MB, A once) do not move.
In round-robin timings at the headline shape (`tools/explore/h200-round3.txt`), 256 threads and 2 loads
took 1.886 ms with plain loads of A and 1.873 ms with `__ldcg`; against stage 3 the `__ldcg` version was
0.4 to 1.5% faster in every round, with either flush and on a second allocation of A. Two other hints that keep A out of the L1 (`__ldcs`,
`ld.global.nc.L1::no_allocate`) gained as much when the L2 was clean and lost it when the L2 held dirty
lines from a previous kernel; `__ldcg` gained in both.

## What several loads in flight buy

The recorded sweep: stage 3, then stage 4 with 1, 2, 4 and 8 loads in flight per thread, at each block size.
"""),
("code", 'nb.sweep_table(ctx.recorded, "vectorized")\nprint()\nnb.sweep_table(ctx.recorded, "warp_shuffle")'),
("code", '_ = plots.plot_block_sweep(ctx.recorded, "warp_shuffle")'),
("md", """
Read the small blocks: with 32 or 64 threads per block, more loads in flight per thread make up for the
missing warps. At 256 and 512 threads every version is near the ceiling: memory is saturated, and more
requests only wait in longer queues.

Then read 128 threads: 2 loads in flight beat 4. Registers explain it. With 2 loads the kernel needs 32
registers, so 16 blocks of 128 fit on an SM and all 2048 rows run in one wave (132 × 16 = 2112 slots). With
4 it needs 40: 12 blocks fit, 1584 rows run in the first wave and the other 464 in a second wave with less
than a third of the slots busy, and fewer bytes in flight than memory needs. The occupancy tables:
"""),
("code", 'nb.occupancy_table("warp_shuffle", 2)\nprint()\nnb.occupancy_table("warp_shuffle", 4)'),
("code", '# NBVAL_IGNORE_OUTPUT\nnb.block_slider(ctx, "warp_shuffle")'),
("md", "## The stage table so far"),
("code", "nb.table(ctx, upto=4)"),
("code", "_ = plots.plot_stages(ctx.doc, upto=4)"),
("md", "How far apart two rows must be to differ: the quartiles of the launches behind each median."),
("code", "nb.spread(ctx, upto=4)"),
("md", "## Looking back at the predictions"),
("code", 'nb.look_back(ctx, "vectorized", predicted_ms=2)\nnb.look_back(ctx, "warp_shuffle", predicted_ms=2)'),
("md", """
Stage 3 came within 3% of the read ceiling, inside the predicted 10%. In the recorded H200 run stage 4 was
0.8% faster than stage 3 (1.876 against 1.891 ms, step 1.01x), and their quartiles do not overlap
(1.867 to 1.886 against 1.887 to 1.896 ms): the predicted "about 1%", won back from B's traffic, and
nothing more. A live run on another GPU can differ: the gain depends on how much of B the L1 was losing.

What stage 4 also buys is visible in the sweep: the same bandwidth with far fewer threads (the 32- and
64-thread columns), and a reduction without a tree of barriers. Both matter when rows are short
(notebook 4).

## Exercise

In `04_warp_shuffle.cu`, load A with a plain `a4[i + u * stride]` again, rebuild (`lab.build_stage`), check
the SASS has no `STRONG.GPU` loads left, and time both versions at 256 threads with the slider. Then time
`LOADS = 1` against `LOADS = 8` at block 32 and explain the ratio with the occupancy table
(`nb.occupancy_table("warp_shuffle", 8)`).
"""),
]

# ------------------------------------------------------------------------------------------
n04 = [
("md", """
# 4. Several rows per block, and the whole story

**Stage 5, multirow:** a block computes `rows` neighbouring rows; each float4 of B it loads serves all of
them, and the `rows` loads of A are independent, so they are the loads in flight.

**What you will learn here:** when reusing B pays (short rows) and when it does not (the headline shape,
where B already sits in the L2); registers and spills as rows per block grow; 32-bit offsets, which break
one row past the headline shape; and the whole story in one table and one plot.
"""),
SETUP(5),
("code", "nb.two_numbers(ctx)"),
("md", """
## A prediction, before measuring

At the headline shape, B is 4 MiB and the L2 holds 60 MiB: every block's reads of B hit the L2 after the
first, so reusing B saves L2 reads, not memory bytes. Fewer, fatter blocks and more registers per thread can
only lose there. **Prediction: no gain at the headline shape** (within a percent or two of stage 4).

With K = 128 a row is 512 bytes: one block per row gives 2 million tiny blocks, each spending more time
starting and reducing than loading. **Prediction: several times faster than stage 4 at K = 128.**
"""),
("code", 'nb.show_diff("warp_shuffle", "multirow")'),
("md", "## Registers and spills as rows per block grow"),
("code", 'nb.build_report("multirow")'),
("md", """
Each extra row costs a float4 and an accumulator per thread: about 5 registers. At 64 rows the kernel hits the
limit of 255 registers per thread and the compiler spills to local memory (`STL`/`LDL` in the SASS,
slow). Long before that, registers limit how many threads fit on an SM:
"""),
("code", 'nb.sass_lines("multirow", 64, pattern="LDL|STL", limit=6)'),
("code", 'nb.occupancy_table("multirow", 8)\nprint()\nnb.occupancy_table("multirow", 32)'),
("md", "A block of 1024 threads at 168 registers each does not fit at all. The raw launch fails (at once, and not sticky: the context survives); gemvlab says so before launching:"),
("code", 'nb.pitfall(ctx, "too_many_registers")'),
("code", """try:
    lab.kernels.check_fits(lab.get_stage("multirow"), 1024, 32, lab.occupancy.HOPPER)
except lab.GemvInputError as e:
    print("GemvInputError:", e)"""),
("code", 'nb.correctness(ctx, "multirow")'),
("md", "## At the headline shape: rows per block against block size"),
("code", 'nb.sweep_table(ctx.recorded, "multirow")'),
("code", '_ = plots.plot_block_sweep(ctx.recorded, "multirow")'),
("code", '# NBVAL_IGNORE_OUTPUT\nnb.block_slider(ctx, "multirow", 4)'),
("md", """
## Where reusing B pays: the shape sweep

The ten shapes of the reference sweep, each stage at its best block size (and rows), re-timed round-robin
beside torch.matmul and the read ceiling of that shape. Few long rows (top) to many short rows (bottom):
"""),
("code", "nb.shapes_table(ctx.recorded)"),
("code", "_ = plots.plot_shapes(ctx.recorded)"),
("md", """
Read it from the bottom. At K = 128 stage 5 is about five times faster than stage 4: one block per row
means two million blocks of 512 bytes each, and each spends more time starting and reducing than loading;
several rows per block (8 is best there) amortise the start, the reduction and each load of B. At
K = 1024 (rows of 4 KiB) the float4 stages and torch.matmul all land within 4% of the read ceiling; in
the recorded run stage 4 (64 threads) read at 0.989 of it and stage 5 (128 threads, 4 rows) at 0.984, 0.5%
behind. Rows of 4 KiB are already long enough for one block each, B (4 KiB) lives in the L1, and the 1%
between stage 4 and the ceiling is all any kernel could still win: reuse has nothing left to save. At the top (M = 1
or 16 rows) every one-block-per-row design is hopeless: one or sixteen blocks cannot fill 132 SMs, and
only splitting K across blocks would help (cuBLAS does). No single kernel here is best everywhere.

## Pitfall: 32-bit offsets

At the headline shape A has M·K = 2^31 elements. A row offset computed in `int` (`row * K` with both
`int`) fits for the last row, 2047·2^20 = 2,146,435,072, just under 2^31 − 1 = 2,147,483,647. One row more
and it does not:
"""),
("code", """import numpy as np
K = 2**20
for row in (2047, 2048):
    with np.errstate(over="ignore"):
        as_int = np.int32(row) * np.int32(K)
    print(f"row {row}: row * K = {row * K:,}; as a 32-bit int: {int(as_int):,}")"""),
("md", "A kernel written that way (`gemvlab/cuda/pitfalls/int32_offsets.cu`) at M = 2048 and at M = 2049: the wrapped offset points 8 GiB *before* A:"),
("code", 'nb.pitfall(ctx, "int32_offsets")'),
("md", "Every gemvlab kernel computes offsets in 64-bit (`(long long)blockIdx.x * K`), and the test suite checks the last row at M = 2049."),
("md", "## Looking back at the prediction"),
("code", 'nb.look_back(ctx, "multirow", predicted_ms=2)\nprint()\nnb.spread(ctx)'),
("md", """
The prediction for the headline shape was "no gain", and that is what the recorded run shows: stage 5 with 2
rows per block at 1024 threads took 1.877 ms against stage 4's 1.876, within stage 4's quartiles. Reusing
B halves B's loads, but stage 4 had already made most of them L1 hits. The prediction for short rows held:
five times faster at K = 128.
"""),
("md", """
## The whole story

Every stage at its best block size at the headline shape, torch.matmul (cuBLAS) and the read ceiling, timed
round-robin in one run:
"""),
("code", "nb.table(ctx, upto=5)"),
("code", "_ = plots.plot_stages(ctx.doc)"),
("md", """
From stage 1 to stage 3 the kernel became tens of times faster by changing how threads touch memory, not how
much arithmetic they do: first coalescing, then 16-byte loads. From there on the stages sit within 3% of
the read ceiling at this shape and beat torch.matmul by about 1.24x. Stage 4 won its last percent by
keeping B in the L1; stage 5 adds nothing here. What the later stages add is speed where the shape is
hard: small blocks (stage 4) and short rows (stage 5, five times faster at K = 128).

## Exercise

Stage 5 is slow when M is small (M = 1: one block). Write a **split-K** variant: launch `S` blocks per row,
each summing one slice of K, and add their partial sums with `atomicAdd` into C (zeroed first), or write
partials and reduce them in a second kernel. Predict its time at M = 16, K = 16,777,216 from the read
ceiling before you measure, and check it against float64 with `gemvlab.bench.relative_error`.
"""),
]

if __name__ == "__main__":
    out = sys.argv[1]
    for name, cells in (("01_naive", n01), ("02_coalescing", n02), ("03_vectorized", n03), ("04_multirow", n04)):
        nbf.write(nb(cells), f"{out}/{name}.ipynb")
        print("wrote", name)
