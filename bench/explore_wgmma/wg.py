"""Exploration driver (not part of gemvlab): wg.cu's wgmma kernel against gemv's rule,
torch.matmul and the read ceiling, bf16, x (n, K) contiguous and B = x.t(). Each variant is checked
against float64 first (a variant outside the error bound is dropped); then one line per (shape, n,
kernel), timed round-robin.

Build here (no GPU needed), then carry the .so to the GPU machine:
    nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
        -o bench/explore_wgmma/wg.so bench/explore_wgmma/wg.cu
Run there: python3 bench/explore_wgmma/wg.py 16,8 [seconds]"""

import ctypes
import sys
import time

import torch

import gemvlab as lab
from gemvlab.measure import ceiling, decode as dm
from gemvlab.measure.accuracy import relative_error
from gemvlab.measure.timing import time_round_robin

lib = ctypes.CDLL("bench/explore_wgmma/wg.so")
lib.wg_launch.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong,
                          ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p]

V16 = [b + 10000 * m for b in (1433, 1434, 1436, 1634, 2434, 2336) for m in range(4)]
V8 = [b + 10000 * m for b in (1418, 1420, 2418) for m in range(4)]
SHAPES = [(28672, 8192), (14336, 4096), (128256, 4096), (16896, 8192), (33792, 8192), (57344, 8192)]
BUDGET = float(sys.argv[2]) if len(sys.argv) > 2 else 480
NS = [int(a) for a in sys.argv[1].split(",")] if len(sys.argv) > 1 else [16, 8, 1]


def wg(v, W, x, C):
    N, K = W.shape
    stream = torch.cuda.current_stream().cuda_stream
    rc = lib.wg_launch(v, W.data_ptr(), x.data_ptr(), C.data_ptr(), N, K, K, x.shape[0], stream)
    if rc:
        raise RuntimeError(f"variant {v}: cuda error {rc}")


t0 = time.time()
bad = set()
for N, K in SHAPES:
    for n in NS:
        if time.time() - t0 > BUDGET:
            print("time budget spent")
            sys.exit(0)
        torch.manual_seed(0)
        W = torch.randn(N, K, device="cuda").to(torch.bfloat16)
        x = torch.randn(n, K, device="cuda").to(torch.bfloat16)
        B = x.t()
        ref = dm.reference(W, B)
        bound = dm.error_bound(torch.bfloat16, K)
        fns = {"gemv": lambda: lab.gemv(W, B), "torch.matmul": lambda: torch.matmul(W, B)}
        found = ceiling.fastest(W)
        fns["ceiling"] = found[0]
        for v in (V16 if n > 8 else V8):
            if v in bad:
                continue
            C = torch.full((N, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            wg(v, W, x, C)
            torch.cuda.synchronize()
            err = relative_error(C.float(), ref)
            if not err <= bound:
                print(f"{N}x{K} n={n} v={v} WRONG rel_err={err:.3g} (bound {bound:.3g})")
                bad.add(v)
                continue
            fns[f"wg{v}"] = (lambda v=v, C=C: wg(v, W, x, C))
        timed = time_round_robin(fns, rounds=3, warmup_ms=10, rep_ms=40)
        ce = timed["ceiling"].ms
        tm = timed["torch.matmul"].ms
        print(f"== {N}x{K} n={n} ceiling {ce:.4f} ms; plan {lab.explain(W, B).splitlines()[0]}")
        for name, t in sorted(timed.items(), key=lambda kv: kv[1].ms):
            print(f"  {name:14s} {t.ms:.4f} [{t.q25_ms:.4f}, {t.q75_ms:.4f}]  of ceiling {ce / t.ms:.3f}  "
                  f"vs torch {tm / t.ms:.3f}")
        sys.stdout.flush()
        del W, x, B, fns
print(f"done in {time.time() - t0:.0f} s")
