"""The record's explorer study again, into an existing record (issue 9, not part of gemvlab).

In the record of 2026-11-30 (session 13), the explorer's gemv and torch.matmul rows at small
shapes (M = 1 to 1024, K up to 2^20) took 30 to 70 us with quartiles tens of microseconds wide,
where every earlier run and the same run's read ceiling took 4 to 20 us. Suspected, not shown:
the host fell behind the 256 MiB flush that keeps the GPU busy until the timed launch is queued
(the read ceiling's launch is a bare ctypes call; gemv's and torch.matmul's go through more
Python, and this machine's host took 22 us per gemv call against 13 to 18 in earlier runs). This re-runs
only the explorer, exactly as `record` does, on a fresh machine start, and replaces those rows,
each with a note saying so.

    python tools/explore/final13/redo_explorer.py RECORD.json OUT.json
"""
import sys
import time

import torch

from gemvlab import bench, record, results

doc = results.load(sys.argv[1])
start = time.time()
rows = []
for M, K in record.explorer_shapes():
    A, B = bench.random_inputs(M, K)
    ref = bench.reference(A, B)
    rows += record.compare_study("explorer", A, B, ref, [], record.SHAPE_ROUNDS, gemv=True, warmup_ms=5, rep_ms=30)
    del A, B, ref
    torch.cuda.empty_cache()
    print(f"explorer M={M} K={K} at {time.time() - start:.0f} s", flush=True)
note = (f"from a second run of the explorer ({time.strftime('%Y-%m-%d')}, a fresh machine start): in the record's "
        f"own run, gemv and torch.matmul at the small shapes were disturbed (suspected: the host fell behind the "
        f"L2 flush)")
for r in rows:
    r["note"] = f"{r['note']}; {note}" if r.get("note") else note
doc["runs"] = [r for r in doc["runs"] if r.get("study") != "explorer"] + rows
results.save(doc, sys.argv[2])
print(f"wrote {sys.argv[2]}: {len(rows)} explorer rows in {time.time() - start:.0f} s")
