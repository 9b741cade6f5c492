"""One JSON schema for every measurement gemvlab makes, live or recorded, and views onto it.

A results document (``schema: "gemvlab-results/2"``)::

    {
      "schema": "gemvlab-results/2",
      "source": "recorded" | "live",
      "date": "2026-11-29T21:04:05Z",            # UTC, when the run started
      "seconds": 312.4,                           # how long the run took
      "machine": {"gpu": "NVIDIA H200", "sm_count": 132, "l2_bytes": 62914560,
                  "memory_bytes": ..., "compute_capability": "9.0", "driver": "580.159.04",
                  "torch": "2.11.0+cu130", "cuda": "13.0", "nvcc": "13.0", "triton": "3.6.0",
                  "python": "3.12.3", "datasheet_GBps": 4800, "sm_limits": {...},
                  "memory": {"dram_latency_ns", "far_latency_ns", "l2_latency_ns", "sm_clock_mhz",
                             "empty_launch_us", ...}},           # gemvlab.measure.latency.measure()
      "timer": {"name": "CUDA events around each launch, L2 flushed before it by reading 256 MiB",
                "statistic": "median", "min_launches": 20, "l2_flushed": true},
      "headline": {"M": 2048, "K": 1048576},
      "runs": [ row, ... ],
      "resources": {stage: {kernel: {registers, shared_bytes, stack_bytes,
                                     spill_store_bytes, spill_load_bytes}}},
      "sass": {stage: {kernel: {global_loads: {"128": 10}, local_loads, ...}}} | null,
      "pitfalls": {demo: {"events": [...], ...}},       # optional
      "profiles": {"torch.matmul": {"M", "K", "kernels": [...]}},   # optional (gemvlab.measure.profile)
      "counters": {"M", "K", "rows": [...]} | {"error": str},      # optional (gemvlab.measure.counters, ncu)
      "overhead": [{"M", "K", "kernel_us", "gemv_us", ...}]         # optional (gemvlab.measure.overhead)
    }

A row is one configuration measured once::

    {"study": "headline" | "block_sweep" | "warps" | "steps" | "steps_repeat" | "shapes" | "shape_best" | "explorer",
     "kind": "stage" | "torch_matmul" | "read_ceiling" | "dispatch",
     "stage": "warp_shuffle" | "torch.matmul" | "read ceiling" | "gemv", "number": 4 | null,
     "M": 2048, "K": 1048576, "block": 256 | null, "variant": 2 | null,
     "status": "ok" | "unsupported" | "does not fit" | "skipped",
     "ms", "min_ms", "max_ms", "q25_ms", "q75_ms": float | null,  # median and spread
     "n": int | null, "timer": str | null,                        # launches timed
     "GBps": float | null,      # bytes_moved(M, K) / ms; the read ceiling counts A's bytes
     "rel_err": float | null,   # ||C - C64|| / ||C64|| against float64
     "chosen": str | null,      # dispatch rows: the plan gemv chose (gemvlab.dispatch.plan.Plan.name)
     "note": str}               # why a row is not "ok", or how it was measured

"headline" rows are the final same-run comparison at the headline shape: every stage at its
best configuration from the "block_sweep" study, torch.matmul and the read ceiling, timed
round-robin (each visited in turn, several rounds). "shape_best" rows are the same for each
shape of the "shapes" sweep, with the dispatcher (gemv) too. "warps" rows separate stage 2's two
changes at the headline shape (stage 1; stage 2's loads with stage 1's warps; stage 2), round-robin.
"steps" rows take stage 4 apart (stage 3, then one change at a time) at a few block sizes and
shapes, round-robin; "steps_repeat" rows are the same timed again, minutes later. "explorer"
rows time gemv, torch.matmul and the read ceiling round-robin on a grid of shapes and on shapes
outside the sweep.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SCHEMA = "gemvlab-results/2"
RECORDED_DIR = Path(__file__).parent / "recorded"
#: The file shown on machines without a GPU; GEMVLAB_RECORDED points to another.
DEFAULT_RECORDED = RECORDED_DIR / "h200.json"

ROW_KEYS = {"study": str, "kind": str, "stage": str, "number": (int, type(None)), "M": int, "K": int,
            "block": (int, type(None)), "variant": (int, type(None)), "status": str,
            "ms": (float, type(None)), "min_ms": (float, type(None)), "max_ms": (float, type(None)),
            "q25_ms": (float, type(None)), "q75_ms": (float, type(None)), "n": (int, type(None)),
            "timer": (str, type(None)), "GBps": (float, type(None)), "rel_err": (float, type(None)),
            "chosen": (str, type(None)), "note": str}
MACHINE_KEYS = ("gpu", "sm_count", "l2_bytes", "memory_bytes", "compute_capability", "driver",
                "torch", "cuda", "nvcc", "triton", "python", "datasheet_GBps", "sm_limits", "memory")
STUDIES = ("headline", "block_sweep", "warps", "steps", "steps_repeat", "shapes", "shape_best", "explorer")
KINDS = ("stage", "torch_matmul", "read_ceiling", "dispatch")
STATUSES = ("ok", "unsupported", "does not fit", "skipped")

#: Vendor datasheet memory bandwidth, GB/s, by the name torch reports (leads, not measurements).
DATASHEET_GBPS = {
    "NVIDIA H200": 4800, "NVIDIA H100 80GB HBM3": 3350, "NVIDIA H100 PCIe": 2000,
    "NVIDIA A100-SXM4-80GB": 2039, "NVIDIA A100-SXM4-40GB": 1555, "NVIDIA A100 80GB PCIe": 1935,
    "NVIDIA A100-PCIE-40GB": 1555, "NVIDIA L4": 300, "Tesla T4": 320, "NVIDIA A10G": 600,
    "NVIDIA A10": 600, "NVIDIA L40S": 864, "Tesla V100-SXM2-16GB": 900,
    "NVIDIA GeForce RTX 4090": 1008, "NVIDIA GeForce RTX 3090": 936,
}


class SchemaError(ValueError):
    pass


def validate(doc: dict) -> dict:
    """Raise SchemaError where doc departs from the schema above; return doc."""
    def need(cond, msg):
        if not cond:
            raise SchemaError(msg)

    need(doc.get("schema") == SCHEMA, f"schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    need(doc.get("source") in ("recorded", "live"), "source must be 'recorded' or 'live'")
    need(isinstance(doc.get("date"), str) and doc["date"].endswith("Z"), "date must be an ISO UTC string")
    machine = doc.get("machine", {})
    for key in MACHINE_KEYS:
        need(key in machine, f"machine.{key} is missing")
    need(isinstance(machine["gpu"], str) and machine["gpu"], "machine.gpu must name the GPU")
    need(isinstance(doc.get("timer"), dict) and doc["timer"].get("min_launches", 0) >= 20,
         "timer.min_launches must be at least 20")
    head = doc.get("headline", {})
    need(isinstance(head.get("M"), int) and isinstance(head.get("K"), int), "headline needs M and K")
    runs = doc.get("runs")
    need(isinstance(runs, list) and runs, "runs must be a non-empty list")
    for i, row in enumerate(runs):
        need(set(row) == set(ROW_KEYS), f"runs[{i}] keys {sorted(set(row) ^ set(ROW_KEYS))} differ")
        for key, typ in ROW_KEYS.items():
            value = row[key]
            if typ is float or (isinstance(typ, tuple) and float in typ):
                ok = value is None or isinstance(value, (int, float))
            else:
                ok = isinstance(value, typ)
            need(ok, f"runs[{i}].{key} = {value!r} has the wrong type")
        need(row["study"] in STUDIES and row["kind"] in KINDS and row["status"] in STATUSES,
             f"runs[{i}] has an unknown study, kind or status")
        if row["status"] == "ok":
            need(row["ms"] is not None and row["ms"] > 0, f"runs[{i}] is ok but has no time")
            need(row["n"] is not None and row["n"] >= 3, f"runs[{i}] timed fewer than 3 launches")
        else:
            need(row["note"], f"runs[{i}] is {row['status']} but says not why")
    need(isinstance(doc.get("resources"), dict), "resources must map stage -> kernel -> report")
    if doc.get("decode") is not None:
        validate_decode(doc["decode"])
    return doc


#: The decode study's rows (gemvlab.results.decode): one per (N = M, K, n, dtype, kernel).
DECODE_ROW_KEYS = ("M", "K", "n", "dtype", "kernel", "ms", "q1", "q3", "GBps", "vs_torch", "vs_ceiling", "chosen",
                   "rel_err", "bound", "set")
DECODE_KERNELS = ("gemv", "torch.matmul", "torch.compile", "read ceiling")


def validate_decode(d: dict) -> None:
    """Raise SchemaError where a results file's "decode" section departs from its schema."""
    if not isinstance(d.get("rows"), list):
        raise SchemaError("decode.rows must be a list")
    for i, r in enumerate(d["rows"]):
        missing = set(DECODE_ROW_KEYS) - set(r)
        if missing:
            raise SchemaError(f"decode.rows[{i}] lacks {sorted(missing)}")
        if r["kernel"] not in DECODE_KERNELS or not (isinstance(r["ms"], (int, float)) and r["ms"] > 0):
            raise SchemaError(f"decode.rows[{i}] has an unknown kernel or no time")


def load(path=None) -> dict:
    """A results file, validated. Without a path: $GEMVLAB_RECORDED, else the recorded H200 run."""
    path = Path(path or os.environ.get("GEMVLAB_RECORDED") or DEFAULT_RECORDED)
    with open(path) as f:
        return validate(json.load(f))


def save(doc: dict, path) -> None:
    validate(doc)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def label(doc: dict) -> str:
    """'recorded on NVIDIA H200, 2026-11-29' or 'live on ...': said beside every number shown."""
    return f"{doc['source']} on {doc['machine']['gpu']}, {doc['date'][:10]}"
