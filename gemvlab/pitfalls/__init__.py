"""The debugging pitfalls, demonstrated: each one runs in a child process.

A kernel that faults leaves its CUDA context unusable: every later CUDA call in that process
fails ("sticky" error). So each demo runs in a fresh Python process that reports what
happened, step by step, and the notebook's own CUDA context survives. The demos call the
raw ctypes launchers, skipping gemvlab's checks on purpose: that is what a hand-written
``load_inline`` extension does.

    import gemvlab.pitfalls as pf
    pf.show(pf.run("sticky_error"))       # live, on a GPU
    pf.show(pf.recorded("sticky_error"))  # what the recorded GPU did, on any machine

Run one by hand: ``python -m gemvlab.pitfalls sticky_error``.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import results, toolchain

PITFALL_DIR = Path(__file__).parent / "cuda" / "pitfalls"

DEMOS = {
    "cpu_pointers": "stage 1's raw launcher handed the data_ptr() of CPU tensors (the transcript's puzzle)",
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
    cmd = [sys.executable, "-m", "gemvlab.pitfalls", demo]
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
    env["PYTHONPATH"] = str(Path(__file__).parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
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
    doc = doc or results.load()
    found = dict((doc.get("pitfalls") or {}).get(demo) or {})
    found["label"] = results.label(doc)
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


# ---- the child side -------------------------------------------------------------------------

def _event(step: str, ok: bool, says: str) -> None:
    print("EVENT " + json.dumps({"step": step, "ok": ok, "says": says}), flush=True)


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _try(step: str, fn, good=None) -> bool:
    """Run fn(); report its result (or its error's first line) as one event."""
    try:
        value = fn()
        _event(step, True, good(value) if good else "no error")
        return True
    except Exception as e:  # noqa: BLE001 - reporting what CUDA said is the point
        _event(step, False, _first_line(e))
        return False


def _launcher(stage_or_file: str, symbol: str):
    from .build import build
    from .kernels import build_stage

    if stage_or_file.endswith(".cu"):
        path = PITFALL_DIR / stage_or_file
        built = build(path.stem, path.read_text())
    else:
        built = build_stage(stage_or_file)
    fn = built.function(symbol)

    def launch(A, B, C, M, K, block, variant=0):  # noqa: PLR0913 - the launchers' signature
        import torch

        code = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, block, variant,
                  torch.cuda.current_stream().cuda_stream)
        if code:
            raise RuntimeError(f"the launch returned CUDA error {code}: {built.error_string(code)}")
        return code

    launch.built = built
    return launch


def _rel_err(C, A, B) -> float:
    import torch

    ref = A.double() @ B.reshape(-1).double()
    return (torch.linalg.vector_norm(C.reshape(-1).double().cpu() - ref.cpu()) /
            torch.linalg.vector_norm(ref.cpu())).item()


def _sync_step(built, step: str = "cudaDeviceSynchronize()") -> bool:
    """Wait for the GPU and report what came back, with the runtime's error number and name
    (cudaDeviceSynchronize from the runtime the kernels' library links: the same context)."""
    lib = built.library
    lib.cudaDeviceSynchronize.restype = ctypes.c_int
    lib.cudaGetErrorName.restype = ctypes.c_char_p
    lib.cudaGetErrorName.argtypes = [ctypes.c_int]
    code = lib.cudaDeviceSynchronize()
    if code == 0:
        _event(step, True, "no error")
        return True
    _event(step, False, f"CUDA error {code} ({lib.cudaGetErrorName(code).decode()}): {built.error_string(code)}")
    return False


def _after_fault() -> None:
    import torch

    _try("next CUDA call, torch.ones(1, device='cuda').sum().item()",
         lambda: torch.ones(1, device="cuda").sum().item(), lambda v: f"returned {v}: the context still works")


def child(demo: str) -> None:
    import torch

    torch.manual_seed(0)
    if demo == "cpu_pointers":
        launch = _launcher("naive", "launch_naive")
        A, B = torch.rand(256, 4096), torch.rand(4096, 1)
        C = torch.zeros(256)
        _event("inputs", True, f"A {tuple(A.shape)}, B {tuple(B.shape)} and C on the {A.device.type.upper()}; "
                               f"A.data_ptr() = {A.data_ptr():#x}, a host address")
        _try("launch (cudaGetLastError right after it)", lambda: launch(A, B, C, 256, 4096, 32))
        if _sync_step(launch.built):
            err = _rel_err(C, A, B)
            _event("result", err < 1e-3, f"relative error {err:.1e}: " + (
                "correct: this driver let the GPU read and write pageable host memory (HMM)"
                if err < 1e-3 else "the kernel did not compute C"))
        _after_fault()
    elif demo in ("sticky_error", "small_overrun"):
        launch = _launcher("naive", "launch_naive")
        M_claimed = (1 << 16) if demo == "sticky_error" else 128
        A, B = torch.rand(64, 4096, device="cuda"), torch.rand(4096, device="cuda")
        C = torch.zeros(64 if demo == "sticky_error" else M_claimed, device="cuda")  # small: room for every row
        past = (M_claimed - 64) * 4096 * 4
        _event("inputs", True, f"A has 64 rows of 4096 floats at {A.data_ptr():#x}; the kernel is told M = "
                               f"{M_claimed}, so it reads up to {past / 2**20:,.0f} MiB past A's end")
        blocking = os.environ.get("CUDA_LAUNCH_BLOCKING") == "1"
        _try("launch (cudaGetLastError right after it)", lambda: launch(A, B, C, M_claimed, 4096, 256),
             lambda v: "no error: the kernel ran to its end before the launch returned" if blocking
             else "no error: the launch was queued; the kernel has not run yet")
        _event("host code after the launch", True,
               "ran after the kernel had finished (CUDA_LAUNCH_BLOCKING=1 makes every launch wait)" if blocking
               else "ran on while the kernel was still queued or running: launches are asynchronous")
        if _sync_step(launch.built) and demo == "small_overrun":
            past = C[64:128]
            _event("result", True, f"rows 64..127 (past A): {int(torch.isfinite(past).sum())} of 64 finite, first "
                                   f"{past[0].item():.3g}; rows 0..63 (A): first {C[0].item():.1f}. No fault: every "
                                   f"address read was mapped for this process")
        _after_fault()
        _try("torch.cuda.synchronize() again", torch.cuda.synchronize)
    elif demo == "misaligned_float4":
        launch = _launcher("vectorized", "launch_vectorized")
        M, K = 64, 4096
        A = torch.rand(M, K, device="cuda")
        storage = torch.rand(K + 1, device="cuda")
        B = storage[1:]
        C = torch.zeros(M, device="cuda")
        _event("inputs", True, f"B = storage[1:]: contiguous, B.data_ptr() % 16 = {B.data_ptr() % 16}")
        _try("launch (cudaGetLastError right after it)", lambda: launch(A, B, C, M, K, 256))
        _sync_step(launch.built)
        _after_fault()
    elif demo in ("smem_too_small", "smem_too_small_1024"):
        launch = _launcher("smem_sized_for_256.cu", "launch_smem_256")
        M, K = 512, 8192
        A, B = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
        for block in ((256, 1024) if demo == "smem_too_small" else (1024,)):
            C = torch.full((M,), float("nan"), device="cuda")
            ok = _try(f"launch with {block} threads", lambda: launch(A, B, C, M, K, block)) and \
                _sync_step(launch.built)
            if ok:
                err = _rel_err(C, A, B)
                _event(f"result with {block} threads", err < 1e-5, f"relative error {err:.1e}")
        _after_fault()
    elif demo == "not_power_of_two":
        launch = _launcher("coalesced", "launch_coalesced")
        M, K = 512, 8192
        A, B = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
        for block in (256, 384, 96):
            C = torch.full((M,), float("nan"), device="cuda")
            launch(A, B, C, M, K, block)
            torch.cuda.synchronize()
            err = _rel_err(C, A, B)
            _event(f"block {block}", err < 1e-5, f"relative error {err:.1e}")
    elif demo in ("missing_sync", "missing_sync_small"):
        launch = _launcher("tree_without_syncthreads.cu", "launch_tree_no_sync")
        fill = _launcher("tree_without_syncthreads.cu", "launch_fill_shared")
        M, K, runs = (2048, 16384, 5) if demo == "missing_sync" else (8, 4096, 1)  # small: under racecheck
        A, B = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
        ref = (A.double() @ B.double()).cpu()  # once, before: no other kernel runs between the tree's runs

        def err_of(C):
            c = C.double().cpu()
            if torch.isnan(c).any():
                return f"{int(torch.isnan(c).sum())} of {M} rows NaN"
            return f"relative error {(torch.linalg.vector_norm(c - ref) / torch.linalg.vector_norm(ref)).item():.1e}"

        errs = []
        for _ in range(runs):
            C = torch.full((M,), float("nan"), device="cuda")
            launch(A, B, C, M, K, 512)
            torch.cuda.synchronize()
            errs.append(err_of(C))
        _event(f"{runs} run(s), same inputs, {M} rows, 512 threads", False, "; ".join(errs))
        if demo == "missing_sync":
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            for value, variant in (("0.0", 0), ("NaN", 1)):
                fill(A, B, A, sms * 4, 0, 512, variant)  # 4 blocks per SM leave `value` in the slots
                C = torch.full((M,), float("nan"), device="cuda")
                launch(A, B, C, M, K, 512)
                torch.cuda.synchronize()
                _event(f"after a kernel that left {value} in the shared arrays of 4 blocks per SM", False, err_of(C))
    elif demo == "int32_offsets":
        launch = _launcher("int32_offsets.cu", "launch_int32_offsets")
        K = 1 << 20
        free = torch.cuda.mem_get_info()[0]
        if free < 2049 * K * 4 * 1.2:
            _event("skipped", True, f"needs {2049 * K * 4 / 2**30:.1f} GiB of GPU memory; {free / 2**30:.1f} free")
            return
        A, B = torch.rand(2049, K, device="cuda"), torch.rand(K, device="cuda")
        for M in (2048, 2049):
            C = torch.full((M,), float("nan"), device="cuda")
            _event(f"M = {M}", True, f"largest row offset (M - 1) * K = {(M - 1) * K:,}; int holds up to 2,147,483,647")
            ok = _try(f"launch, M = {M}", lambda: launch(A[:M], B, C, M, K, 256)) and \
                _sync_step(launch.built)
            if not ok:
                _after_fault()
                return
            ref = A[:M].double() @ B.double()
            last = abs(C[-1].item() - ref[-1].item()) / ref[-1].item()
            err = (torch.linalg.vector_norm(C.double() - ref) / torch.linalg.vector_norm(ref)).item()
            _event(f"result, M = {M}", err < 1e-5, f"relative error {err:.1e}; last row's relative error {last:.1e}")
    elif demo == "too_many_registers":
        launch = _launcher("multirow", "launch_multirow")
        M, K = 1024, 4096
        A, B, C = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda"), torch.zeros(M, device="cuda")
        _try("launch multirow<32> with 1024 threads", lambda: launch(A, B, C, M, K, 1024, 32))
        _sync_step(launch.built)
        _after_fault()
    else:
        raise SystemExit(f"no demo {demo!r}")


if __name__ == "__main__":
    child(sys.argv[1])
