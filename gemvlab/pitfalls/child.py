"""The child side of the pitfall demos: ``python -m gemvlab.pitfalls.child DEMO`` runs one
and prints each step as a line ``EVENT {json}`` for the parent (gemvlab.pitfalls) to read.

The demos call the raw launchers, skipping gemvlab's checks on purpose: that is what a
hand-written ``load_inline`` extension does.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent


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
    """A launcher of a stage or of one of the broken .cu files here, called with tensors and no
    checks; it raises only when the launch itself returns an error code."""
    from ..native import launch as native
    from ..native.kernel import Kernel
    from ..stages import get_stage

    if stage_or_file.endswith(".cu"):
        kernel = Kernel(name=stage_or_file[:-3], source_path=HERE / stage_or_file, launcher=symbol, symbol=symbol)
    else:
        kernel = get_stage(stage_or_file)
    fn = native.launcher(kernel.build(), symbol)

    def launch(A, B, C, M, K, block, variant=0):
        import torch

        code = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, K, block, variant,
                  torch.cuda.current_stream().cuda_stream)
        if code:
            raise RuntimeError(f"the launch returned CUDA error {code}: {fn.error_string(code)}")
        return code

    launch.built = kernel.build()
    launch.fn = fn
    return launch


def _rel_err(C, A, B) -> float:
    from ..measure.accuracy import reference, relative_error

    return relative_error(C.cpu(), reference(A, B).cpu())


def _sync_step(launch, step: str = "cudaDeviceSynchronize()") -> bool:
    """Wait for the GPU and report what came back, with the runtime's error number and name
    (cudaDeviceSynchronize from the runtime the kernels' library links: the same context)."""
    from ..native import launch as native

    code = native.synchronize(launch.built)
    if code == 0:
        _event(step, True, "no error")
        return True
    _event(step, False, f"CUDA error {code} ({native.error_name(launch.built, code)}): {launch.fn.error_string(code)}")
    return False


def _after_fault() -> None:
    import torch

    _try("next CUDA call, torch.ones(1, device='cuda').sum().item()",
         lambda: torch.ones(1, device="cuda").sum().item(), lambda v: f"returned {v}: the context still works")


def child(demo: str) -> None:
    import torch

    from ..measure.accuracy import relative_error

    torch.manual_seed(0)
    if demo == "cpu_pointers":
        launch = _launcher("naive", "launch_naive")
        A, B = torch.rand(256, 4096), torch.rand(4096, 1)
        C = torch.zeros(256)
        _event("inputs", True, f"A {tuple(A.shape)}, B {tuple(B.shape)} and C on the {A.device.type.upper()}; "
                               f"A.data_ptr() = {A.data_ptr():#x}, a host address")
        _try("launch (cudaGetLastError right after it)", lambda: launch(A, B, C, 256, 4096, 32))
        if _sync_step(launch):
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
        if _sync_step(launch) and demo == "small_overrun":
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
        _sync_step(launch)
        _after_fault()
    elif demo in ("smem_too_small", "smem_too_small_1024"):
        launch = _launcher("smem_sized_for_256.cu", "launch_smem_256")
        M, K = 512, 8192
        A, B = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
        for block in ((256, 1024) if demo == "smem_too_small" else (1024,)):
            C = torch.full((M,), float("nan"), device="cuda")
            ok = _try(f"launch with {block} threads", lambda C=C, block=block: launch(A, B, C, M, K, block)) and \
                _sync_step(launch)
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
            return f"relative error {relative_error(c, ref):.1e}"

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
            ok = _try(f"launch, M = {M}", lambda C=C, M=M: launch(A[:M], B, C, M, K, 256)) and \
                _sync_step(launch)
            if not ok:
                _after_fault()
                return
            ref = A[:M].double() @ B.double()
            last = abs(C[-1].item() - ref[-1].item()) / ref[-1].item()
            err = relative_error(C, ref)
            _event(f"result, M = {M}", err < 1e-5, f"relative error {err:.1e}; last row's relative error {last:.1e}")
    elif demo == "too_many_registers":
        launch = _launcher("multirow", "launch_multirow")
        M, K = 1024, 4096
        A, B, C = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda"), torch.zeros(M, device="cuda")
        _try("launch multirow<32> with 1024 threads", lambda: launch(A, B, C, M, K, 1024, 32))
        _sync_step(launch)
        _after_fault()
    else:
        raise SystemExit(f"no demo {demo!r}")


if __name__ == "__main__":
    child(sys.argv[1])
