"""The debugging pitfalls, demonstrated: each one runs in a child process.

A kernel that faults leaves its CUDA context unusable: every later CUDA call in that process
fails ("sticky" error). So each demo runs in a fresh Python process that reports what
happened, step by step, and the notebook's own CUDA context survives. The demos call the
raw ctypes launchers, skipping gemvlab's checks on purpose: that is what a hand-written
``load_inline`` extension does.

    from gemvlab import pitfalls as pf
    pf.show(pf.run("sticky_error"))       # live, on a GPU
    pf.show(pf.recorded("sticky_error"))  # what the recorded GPU did, on any machine

Run one by hand: ``python -m gemvlab.pitfalls.child sticky_error``. The broken kernels
are the .cu files beside this module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from ..native import toolchain
from ..results import schema

DEMOS = {
    "cpu_pointers": "stage 1's raw launcher handed the data_ptr() of CPU tensors",
    "sticky_error": "an out-of-bounds launch (M claimed far larger than A), then the calls after it",
    "small_overrun": "the same kernel told M = 2 x the rows A has: it reads 1 MiB past A",
    "launch_blocking": "the same launch with CUDA_LAUNCH_BLOCKING=1: the error at the launch itself",
    "sanitizer": "the same launch under compute-sanitizer (memcheck): the faulting kernel, thread and address",
    "misaligned_float4": "stage 3's raw launcher given B[1:], a view 4 bytes past a 16-byte boundary",
    "smem_too_small": "a shared array sized for 256 threads, launched with 256 and then 1024",
    "smem_sanitizer": "that launch with 1024 threads under compute-sanitizer (memcheck)",
    "not_power_of_two": "stage 2's tree launched with 384 and 96 threads (not powers of two)",
    "missing_sync": "stage 2's tree without __syncthreads(): run several times, then after a kernel that "
                    "leaves 0 or NaN in shared memory",
    "racecheck": "that tree under compute-sanitizer --tool racecheck, which names the hazard",
    "int32_offsets": "row * K in 32-bit int, at M = 2048 and at M = 2049 rows of K = 2^20",
    "too_many_registers": "multirow<32> (168 registers per thread) launched with 1024 threads",
}


#: Demos run under compute-sanitizer: (tool, the child demo it runs).
SANITIZED = {"sanitizer": ("memcheck", "sticky_error"), "smem_sanitizer": ("memcheck", "smem_too_small_1024"),
             "racecheck": ("racecheck", "missing_sync_small")}


# ---- the parent side ------------------------------------------------------------------------

def run(demo: str, timeout: float = 90) -> dict:
    """Run one demo in a child process; returns {'demo', 'events', 'returncode', 'seconds', ...}."""
    if demo not in DEMOS:
        raise ValueError(f"no demo {demo!r}; choose one of {sorted(DEMOS)}")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "gemvlab.pitfalls.child", demo]
    if demo == "launch_blocking":
        env["CUDA_LAUNCH_BLOCKING"] = "1"
        cmd[-1] = "sticky_error"
    if demo in SANITIZED:
        tool = toolchain.find_tool("compute-sanitizer")
        if not tool:
            return {"demo": demo, "events": [], "returncode": None, "seconds": 0.0,
                    "note": "compute-sanitizer not found (it ships with the CUDA toolkit)"}
        which, child_demo = SANITIZED[demo]
        cmd = [tool, "--tool", which, "--show-backtrace", "no", *cmd[:-1], child_demo]
    env = toolchain.child_env(env)
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
        out, code = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, code = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    events = [json.loads(line[6:]) for line in out.splitlines() if line.startswith("EVENT ")]
    result = {"demo": demo, "events": events, "returncode": code, "seconds": round(time.time() - start, 1)}
    if demo in SANITIZED:
        result["sanitizer"] = [ln for ln in out.splitlines() if ln.startswith("=========")][:14]
    if not events:
        result["output_tail"] = out[-2000:]
    return result


def run_all() -> dict:
    out = {}
    for demo in DEMOS:
        out[demo] = run(demo)
        print(f"  {demo}: {len(out[demo]['events'])} events, exit {out[demo]['returncode']}", flush=True)
    return out


def recorded(demo: str, doc: dict | None = None) -> dict:
    doc = doc or schema.load()
    found = dict((doc.get("pitfalls") or {}).get(demo) or {})
    found["label"] = schema.label(doc)
    return found


def show(result: dict) -> None:
    """Print a demo's steps as a short transcript."""
    if result.get("label"):
        print(f"({result['label']})")
    if result.get("note"):
        print(result["note"])
    for e in result.get("events", []):
        mark = "ok   " if e["ok"] else "ERROR"
        print(f"[{mark}] {e['step']}: {e['says']}")
    for line in result.get("sanitizer", []):
        print(line)
    if not result.get("events") and result.get("output_tail"):
        print(result["output_tail"])
