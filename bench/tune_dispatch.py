"""Time the dispatcher's plan against its neighbours, round-robin, on a GPU; write a results file.

    python bench/tune_dispatch.py --out bench/results/h200-dispatch.csv   # on a GPU (about a minute)
    python bench/tune_dispatch.py --dry                                   # anywhere: list and build
    python bench/tune_dispatch.py --decode --out bench/results/h200-decode.csv   # the decode rule's
    python bench/tune_dispatch.py --decode --n 16,1 --dtypes bfloat16            # part of it

With --decode: the decode rule (gemvlab.decode.rule) at DECODE_SHAPES, each dtype and n, against
plans that change its warps per block or loads per trip, a build of decode_mma with 8-row tiles
(MMA_ROWS, an nvcc -D constant: twice the blocks), and builds of decode_cores with other CORE_ROWS,
beside torch.matmul and the read ceiling.

For each shape (each near a decision of the rule, named by the tuning constant it probes), the
rule's plan (gemvlab.dispatch.plan_for) and candidate plans that change one choice: the split
count, the lanes per row, the block size, the tile plan, the rows per block, more loads in flight.
Each is checked against float64 on NaN-poisoned output, then all are timed round-robin with
torch.matmul and the read ceiling (gemvlab.measure.timing), L2 flushed by reading. Plans of variants
the library compiles launch through gemvlab.dispatch.make_launch, the documented way to force a
plan; other variants come from this script's own build of the same .cu files with more
instantiations (TUNE_SOURCE). docs/design/dispatch.md cites the file this writes.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import sys
from dataclasses import replace
from pathlib import Path

import gemvlab as lab
from gemvlab import dispatch
from gemvlab.dispatch import tuning as T
from gemvlab.dispatch.rule import rows_lanes
from gemvlab.gpu.device import Device
from gemvlab.native import launch as native
from gemvlab.native.build import build
from gemvlab.native.kernel import encode

#: (the constant a shape probes, M, K): shapes near the rule's decisions.
SHAPES = (("SHORT_ROW_K", 100_000, 3000), ("SHORT_ROW_K", 262_144, 1024), ("ROWS_BLOCK", 123_457, 777),
          ("FLOATS_PER_LANE", 1_000_000, 257), ("FEW_FLOAT4S_K", 1_000_000, 80), ("MIN_LANES", 20_000, 33),
          ("TILE_ROWS", 10_000_000, 8), ("TILE_ROWS", 4_000_000, 17), ("TILE_MAX_LOADS", 3_000_000, 40),
          ("TILE_ROWS", 3_000_000, 64), ("BUSY_WARPS", 700, 400_000), ("FULL_LAST_WAVE", 1_100, 240_000),
          ("BUSY_SPLIT_WAVES", 1_024, 262_147), ("TARGET_WAVES", 16, 16_777_216), ("UNEVEN_WAVES", 128, 2_097_153),
          ("ONE_TRIP", 1, 65536), ("SHARE_B_ROWS", 3, 50_000_000), ("SHARE_B_ROWS_SHUFFLED", 3, 50_000_001),
          ("SPLIT_BLOCK", 2048, 1_048_576), ("LOADS", 64, 1_000_003))

#: The product's .cu files with more instantiations, under launchers of their own (tune_launch_*).
TUNE_SOURCE = r"""
#include "split_k.cu"
#include "rows_per_warp.cu"

extern "C" int tune_launch_split_k(const float* A, const float* B, float* C, float* partials, const LaunchArgs* p,
                                   cudaStream_t stream) {
    // split_k with 4 loads in flight per row: its own grid, then the product's reduce launcher path
    if (p->variant != GEMV_VARIANT(4, 1, 1) && p->variant != GEMV_VARIANT(4, 0, 1)) return (int)cudaErrorInvalidValue;
    const unsigned grid = (unsigned)(p->M * p->splits);
    float* out = p->splits == 1 ? C : partials;
    if (GEMV_ARG(p->variant, 1))
        gemv_split_k<4, true, 1><<<grid, p->block, 0, stream>>>(A, p->lda, B, out, p->M, p->K, p->chunk, p->splits);
    else
        gemv_split_k<4, false, 1><<<grid, p->block, 0, stream>>>(A, p->lda, B, out, p->M, p->K, p->chunk, p->splits);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || p->splits == 1) return (int)err;
    const unsigned reduce_grid = (unsigned)((p->M * 32 + GEMV_REDUCE_BLOCK - 1) / GEMV_REDUCE_BLOCK);
    gemv_split_k_reduce<<<reduce_grid, GEMV_REDUCE_BLOCK, 0, stream>>>(partials, C, p->M, p->splits);
    return (int)cudaGetLastError();
}

extern "C" int tune_launch_rows_per_warp(const float* A, const float* B, float* C, float* partials,
                                         const LaunchArgs* p, cudaStream_t stream) {
    (void)partials;  // 2 lanes per row, which the rule never picks
    const unsigned grid = (unsigned)((p->M + p->block / 2 - 1) / (p->block / 2));
    if (GEMV_ARG(p->variant, 1))
        gemv_rows_per_warp<2, true><<<grid, p->block, 0, stream>>>(A, p->lda, B, C, p->M, p->K);
    else
        gemv_rows_per_warp<2, false><<<grid, p->block, 0, stream>>>(A, p->lda, B, C, p->M, p->K);
    return (int)cudaGetLastError();
}
"""
EXTRA = {("split_k", encode(4, 1, 1)), ("split_k", encode(4, 0, 1)), ("rows_per_warp", encode(2, 0)),
         ("rows_per_warp", encode(2, 1))}


def tune_library():
    """This script's own build: the product's .cu files plus the instantiations in TUNE_SOURCE."""
    kernel = dispatch.KERNELS["split_k"]
    headers = {**kernel.headers(), "split_k.cu": kernel.source(),
               "rows_per_warp.cu": dispatch.KERNELS["rows_per_warp"].source()}
    return build("tune_dispatch", TUNE_SOURCE, kernel.flags(), headers)


def candidates(plan, lda: int, device) -> list:
    """(name, plan) for the rule's plan and the plans that change one of its choices."""
    out = [("rule", plan)]
    k, M, K = plan.kernel, plan.M, plan.K

    def add(name, **kw):
        try:
            p = dispatch.make_plan(M, K, k, device, plan.b_vec, kw.pop("block", plan.block), lda=lda, **kw)
        except lab.GemvInputError:
            return
        if p != plan and all(p != q for _, q in out):
            out.append((name, p))

    if k == "split_k":
        base = {"loads": plan.loads, "rows_per_block": plan.rows_per_block}
        for s in {max(1, plan.splits // 2), 2 * plan.splits, 1}:
            add(f"{s} stretches", splits=s, **base)
        for b in (128, 512):
            add(f"{b} threads", block=b, splits=plan.splits, **base)
        if plan.rows_per_block > 1:
            add("1 row per block", splits=plan.splits, loads=T.LOADS)
        elif 2 <= M < 8:
            add("4 rows per block", splits=plan.splits, loads=1, rows_per_block=4)
        out.append(("4 loads, plain reduce launch", replace(plan, variant=encode(4, plan.b_vec, 1), loads=4,
                                                            rows_per_block=1)))
    elif k == "rows_per_warp":
        for g in (plan.lanes_per_row // 2, plan.lanes_per_row * 2):
            if 4 <= g <= 32:
                add(f"G = {g}", lanes_per_row=g)
            elif g == 2:
                out.append(("G = 2", replace(plan, lanes_per_row=2, variant=encode(2, plan.b_vec))))
        add("128 threads", block=128, lanes_per_row=plan.lanes_per_row)
    elif k == "row_tiles":
        for rows, block, g, r in T.TILE_ROWS:
            if dispatch.tile_fits(rows, K, lda):
                loads = max(T.TILE_LOADS, dispatch.tile_loads(rows, K, block, lda))
                add(f"tile {rows} rows, G = {g}, R = {r}, U = {loads}", block=block, loads=loads, lanes_per_row=g,
                    rows_per_group=r)
                if loads > T.TILE_LOADS:
                    add(f"tile {rows} rows, G = {g}, R = {r}, U = 4", block=block, loads=4, lanes_per_row=g,
                        rows_per_group=r)
        G = rows_lanes(M, K, False, device)[0]
        out.append(("rows_per_warp", dispatch.make_plan(M, K, "rows_per_warp", device, False, T.ROWS_BLOCK,
                                                        lanes_per_row=G)))
    return out


def _launch(name, plan, lda, A, B, extra):
    """A zero-argument launch of any candidate plan (the product's, or this script's build)."""
    if (plan.kernel, plan.variant) not in EXTRA:
        launch = dispatch.make_launch(plan, lda, False, A.device)
        return lambda: launch(A, B)
    import torch

    fn = native.launcher(extra, f"tune_launch_{plan.kernel}", "plan", name)
    args = native.LaunchArgs(lda, plan.M, plan.K, plan.chunk, plan.splits, plan.block, plan.variant)
    C = torch.empty(plan.M, device=A.device)
    P = torch.empty(plan.M * plan.splits, device=A.device)
    stream = native.stream(A.device.index or 0)

    def launch():
        fn.check(fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), P.data_ptr(), ctypes.addressof(args), stream))
        return C

    return launch


def measure(probe, M, K, extra, rounds=3) -> list[dict]:
    import torch

    from gemvlab.measure import ceiling
    from gemvlab.measure.accuracy import random_inputs, reference, relative_error
    from gemvlab.measure.timing import bytes_moved, gbps, time_round_robin

    A, B = random_inputs(M, K, b_2d=False)
    ref = reference(A, B)
    plan, lda = dispatch.plan_for(A, B)
    fns, errs = {}, {}
    for name, p in candidates(plan, lda, dispatch.Device.of()):
        fn = _launch(name, p, lda, A, B, extra)
        errs[name] = relative_error(fn(), ref)
        fns[name] = fn
    fns["torch.matmul"] = lambda: torch.matmul(A, B)
    fns["read ceiling"] = ceiling.fastest(A)[0]
    timed = time_round_robin(fns, rounds=rounds, warmup_ms=5, rep_ms=40)
    plans = dict(candidates(plan, lda, dispatch.Device.of()))
    rows = []
    for name, t in timed.items():
        plan_name = f"{plans[name].name}, {plans[name].block} threads" if name in plans else ""
        rows.append({"probe": probe, "M": M, "K": K, "candidate": name, "plan": plan_name,
                         "ms": round(t.ms, 5), "q25_ms": round(t.q25_ms, 5), "q75_ms": round(t.q75_ms, 5), "n": t.n,
                         "vs_rule": round(timed["rule"].ms / t.ms, 4),
                         "GBps": round(gbps(bytes_moved(M, K), t.ms), 1), "rel_err": errs.get(name)})
    return rows


#: (N, K) of the decode tuning: the decode-GEMV issue's shapes (LLM layers and vocabularies).
DECODE_SHAPES = ((1024, 4096), (4096, 4096), (14_336, 4096), (4096, 14_336), (28_672, 8192), (8192, 28_672),
                 (128_256, 4096), (151_936, 1024))


def decode_candidates(plan, device):
    """(name, plan, kernel build or None) for the decode rule's plan and its neighbours (those the
    GPU can hold: a block's registers within the SM's)."""
    from dataclasses import replace as swap

    from gemvlab import decode
    from gemvlab.decode import kernels as DK
    from gemvlab.decode.rule import shared_bytes

    out = [("rule", plan, None)]
    args = list(decode.KERNELS[plan.kernel].arguments(plan.variant))
    if plan.kernel == "decode_mma":
        mine = plan.block // 32  # the rule's warps, its neighbours, and counts that fill an SM of 12 or 16 warps
        for warps in sorted({1, 2, 3, 4, 6, 8, 12, 16, mine - 1, mine + 1} - {0, 17}):
            fits = decode.MMA.occupancy(32 * warps, plan.variant, device.limits, shared_bytes(warps, args[1])).blocks_per_sm
            if fits and 32 * warps != plan.block:
                out.append((f"warps={warps}", replace(plan, block=32 * warps), None))
        code, nt, u, stages = args
        for uu, ss in sorted({a[2:] for a in DK.MMA_COMPILED if a[:2] == (code, nt)} - {(u, stages)}):  # the others compiled
            other = encode(code, nt, uu, ss)
            for warps in sorted({1, 2, 3, 4, 6, 8, mine}):  # the rule's own warps too: the same split, other stages
                if decode.MMA.occupancy(32 * warps, other, device.limits, shared_bytes(warps, nt)).blocks_per_sm:
                    out.append((f"U={uu} STAGES={ss} warps={warps}", replace(plan, variant=other, block=32 * warps), None))
        eight = swap(decode.MMA, defines=tuple((k, 8 if k == "GEMV_MMA_ROWS" else v) for k, v in DK.DEFINES))
        for warps in (1, 2, 4, 8, 16):  # twice the tiles: for shapes whose 16-row tiles leave SMs idle
            if eight.occupancy(32 * warps, plan.variant, device.limits, shared_bytes(warps, nt)).blocks_per_sm:
                out.append((f"MMA_ROWS=8 warps={warps}", replace(plan, block=32 * warps), eight))
    else:
        for block in (64, 256):
            out.append((f"{block} threads", replace(plan, block=block), None))
        for rows in (2, 8):
            defines = tuple((k, rows if k == "GEMV_CORE_ROWS" else v) for k, v in DK.DEFINES)
            out.append((f"CORE_ROWS={rows}", plan, swap(decode.CORES, defines=defines)))
    return out


def decode_candidates_all():
    """Every candidate's kernel build at one bf16 and one float32 plan (what --decode --dry builds)."""
    import torch

    from gemvlab import decode

    out = []
    for dtype, n in ((torch.bfloat16, 4), (torch.float32, 4)):
        W, B = torch.empty(4096, 4096, dtype=dtype, device="meta"), torch.empty(n, 4096, dtype=dtype, device="meta").t()
        plan, _ = decode.plan_for(W, B)
        out += [(name, p, k or decode.KERNELS[p.kernel]) for name, p, k in decode_candidates(plan, Device.recorded())]
    return out


def measure_decode(N, K, n, dtype, rounds=3) -> list[dict]:
    import torch

    from gemvlab import decode
    from gemvlab.measure import ceiling
    from gemvlab.measure import decode as md
    from gemvlab.measure.accuracy import relative_error
    from gemvlab.measure.timing import gbps, time_round_robin

    W, B = md.inputs(N, K, n, dtype)
    ref = md.reference(W, B)
    bound = md.error_bound(dtype, K)  # a candidate past it is wrong, whatever its time
    plan, strides = decode.plan_for(W, B)
    fns, errs, names = {}, {}, {}
    for name, p, kernel in decode_candidates(plan, Device.of()):
        launch = decode.make_launch(p, strides, (N, n), dtype, W.device, kernel=kernel)
        errs[name] = relative_error(launch(W, B).float(), ref)
        fns[name] = (lambda launch=launch: launch(W, B))
        names[name] = f"{p.name}, {p.block} threads"
    fns["torch.matmul"] = lambda: torch.matmul(W, B)
    fns["read ceiling"] = ceiling.fastest(W)[0]
    timed = time_round_robin(fns, rounds=rounds, warmup_ms=5, rep_ms=30)
    moved = md.bytes_moved(N, K, n, dtype)
    return [{"N": N, "K": K, "n": n, "dtype": str(dtype).removeprefix("torch."), "candidate": name,
             "plan": names.get(name, ""), "ms": round(t.ms, 5), "q25_ms": round(t.q25_ms, 5),
             "q75_ms": round(t.q75_ms, 5), "launches": t.n, "vs_rule": round(timed["rule"].ms / t.ms, 4),
             "GBps": round(gbps(W.numel() * W.element_size() if name == "read ceiling" else moved, t.ms), 1),
             "rel_err": errs.get(name), "within_bound": name not in errs or errs[name] <= bound}
            for name, t in timed.items()]


#: The decode tuning's vector counts and dtypes (the defaults of --n and --dtypes).
DECODE_NS = (1, 2, 4, 8, 16)
DECODE_DTYPES = ("bfloat16", "float32")


def tune_decode(out: str, ns=DECODE_NS, dtypes=DECODE_DTYPES) -> int:
    """The decode rule at DECODE_SHAPES for each n in `ns` (n by n, so that a run cut short still has
    every shape at the first ones), in bf16 and at four of the shapes in float32 (n >= 2)."""
    import torch

    rows = []
    cases = [(N, K, n, torch.bfloat16) for n in ns for N, K in DECODE_SHAPES if "bfloat16" in dtypes]
    cases += [(N, K, n, torch.float32) for n in ns for N, K in DECODE_SHAPES[1:5] if n > 1 and "float32" in dtypes]
    for N, K, n, dtype in cases:
        got = measure_decode(N, K, n, dtype)
        torch.cuda.empty_cache()
        rows += got
        rule = next(r for r in got if r["candidate"] == "rule")
        best = min((r for r in got if r["plan"] and r["within_bound"]), key=lambda r: r["ms"])
        for r in got:
            if not r["within_bound"]:
                print(f"  {r['candidate']}: error {r['rel_err']:.3g} is past the bound; not counted", flush=True)
        peer = {r["candidate"]: r["ms"] for r in got}
        print(f"{N:>7} x {K:<6} n={n:<2} {rule['dtype']:<8} rule {rule['plan']:<34} {rule['ms']:.4f} ms "
              f"({peer['torch.matmul'] / rule['ms']:.2f}x torch, {peer['read ceiling'] / rule['ms']:.2f} of ceiling); "
              f"fastest {best['candidate']} {best['ms']:.4f} ({best['vs_rule']:.3f}x)", flush=True)
        write_rows(out, rows, "gemvlab's decode rule against one change at a time", quiet=True)  # kept if cut short
    write_rows(out, rows, "gemvlab's decode rule against one change at a time")
    return 0


def write_rows(out: str, rows: list, what: str, quiet: bool = False) -> None:
    import torch

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        f.write(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, {what}; median and quartiles of "
                "event-timed launches, L2 flushed by reading, round-robin\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if not quiet:
        print(f"wrote {out}: {len(rows)} rows")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/results/h200-dispatch.csv")
    p.add_argument("--dry", action="store_true", help="no GPU: list each shape's candidates and build them")
    p.add_argument("--decode", action="store_true", help="the decode rule (bf16, fp16, several vectors)")
    p.add_argument("--n", default=",".join(map(str, DECODE_NS)), help="with --decode: the vector counts, in this order")
    p.add_argument("--dtypes", default=",".join(DECODE_DTYPES), help="with --decode: bfloat16, float32 or both")
    a = p.parse_args(argv)
    if unknown := set(a.dtypes.split(",")) - set(DECODE_DTYPES):
        p.error(f"--dtypes: {', '.join(sorted(unknown))} is not one of {', '.join(DECODE_DTYPES)}")
    if a.decode:
        if a.dry:
            for _, _, kernel in decode_candidates_all():
                kernel.build()
            return 0
        return tune_decode(a.out if a.out != "bench/results/h200-dispatch.csv" else "bench/results/h200-decode.csv",
                           tuple(int(v) for v in a.n.split(",")), tuple(a.dtypes.split(",")))
    extra = tune_library()
    if a.dry:
        device = dispatch.Device.recorded()
        for probe, M, K in SHAPES:
            plan = dispatch.choose(M, K, K, 0, 0, device)
            names = [f"{n}: {q.name}" for n, q in candidates(plan, K, device)]
            print(f"{probe:<22} {M:>10,} x {K:<11,} " + "; ".join(names))
        print(f"built {extra.path.name}: {sorted(extra.resources)}")
        return 0
    import torch

    rows = []
    for probe, M, K in SHAPES:
        rows += measure(probe, M, K, extra)
        torch.cuda.empty_cache()  # the shape's tensors are gone with measure's frame
        rule = next(r for r in rows if r["M"] == M and r["K"] == K and r["candidate"] == "rule")
        best = min((r for r in rows if r["M"] == M and r["K"] == K and r["plan"]), key=lambda r: r["ms"])
        print(f"{probe:<22} {M:>10,} x {K:<11,} rule {rule['plan']:<34} {rule['ms']:.4f} ms; fastest "
              f"{best['candidate']} {best['ms']:.4f} ms ({best['vs_rule']:.3f}x)", flush=True)
    write_rows(a.out, rows, "gemvlab's rule against one change at a time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
