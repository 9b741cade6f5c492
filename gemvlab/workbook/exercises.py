"""The exercises: lab.try_kernel builds a .cu file the learner wrote, checks it against float64 and
times it beside a reference kernel and the read ceiling, and says PASS or FAIL against its mark.

    lab.try_kernel("01_naive")                 # exercises/01_naive.cu in the clone
    lab.try_kernel("exercises/my_copy.cu")     # any path
    lab.copy_stage("warp_shuffle")             # exercises/my_warp_shuffle.cu, to edit and try

A file says how it is tried on one line of its header::

    // try_kernel: reference naive, block 32, shape 2053 x 65536, mark 1.15

reference: the kernel to compare with (a stage, a step such as warp_shuffle_l1, or gemv, the
dispatcher), launched at the same block and variant unless reference_block (optional) names its
block; shape: M x K; mark: the most time allowed,
as a multiple of the reference's; launcher (optional, default launch_exercise): the extern "C"
function to call, with the stages' signature (A, B, C, M, K, block, variant, stream); dtype and
vectors (optional, default float32 and 1): A in that dtype, and B that many vectors, stored one
after another (B is x.t() for an activation x of shape (vectors, K)), C (M, vectors) row by row. On a GPU the
check and the timing run in a child process, so a kernel that faults cannot break this notebook's
CUDA context. Without a GPU the file is built and its registers, spills and loads are reported:
BUILT, NOT TIMED. Edit the file and call try_kernel again: an edited source is rebuilt.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..native import toolchain
from ..native.build import BuildError, Built, build

CLONE = Path(__file__).resolve().parents[2]
EXERCISES = CLONE / "exercises"


@dataclass(frozen=True)
class Spec:
    """How a file is tried, from its `// try_kernel:` line."""

    reference: str
    block: int
    M: int
    K: int
    mark: float
    variant: int = 0
    launcher: str = "launch_exercise"
    reference_block: int | None = None  # the reference's block, when it differs from yours
    dtype: str = "float32"
    vectors: int = 1

    @classmethod
    def of(cls, source: str, path) -> Spec:
        m = re.search(r"^//\s*try_kernel:\s*(.+)$", source, re.MULTILINE)
        if not m:
            raise ValueError(f"{path} has no '// try_kernel: reference ..., block ..., shape M x K, mark ...' line")
        fields = dict(part.strip().split(" ", 1) for part in m.group(1).split(","))
        M, K = (int(x) for x in fields["shape"].split("x"))
        ref_block = fields.get("reference_block")
        return cls(fields["reference"], int(fields["block"]), M, K, float(fields["mark"]),
                   int(fields.get("variant", 0)), fields.get("launcher", "launch_exercise"),
                   int(ref_block) if ref_block else None, fields.get("dtype", "float32"), int(fields.get("vectors", 1)))


@dataclass
class Tried:
    """What try_kernel found. Shows as its report in a notebook cell."""

    path: Path
    status: str  # "PASS", "FAIL", "BUILT, NOT TIMED" or "DID NOT BUILD"
    lines: list = field(default_factory=list)
    measured: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return "\n".join([*self.lines, self.status])


def resolve(name_or_path) -> Path:
    """A path as given, or an exercise's name ('01_naive') in the clone's exercises/ folder."""
    p = Path(name_or_path)
    for candidate in (p, EXERCISES / p, EXERCISES / p.with_suffix(".cu")):
        if candidate.is_file():
            return candidate.resolve()
    raise FileNotFoundError(f"no {name_or_path}: give a .cu path, or an exercise in {EXERCISES}")


def module_name(path) -> str:
    """The build's name for an exercise file (the parent and its child process must agree on it)."""
    return "exercise_" + re.sub(r"[^A-Za-z0-9_]", "_", Path(path).stem)


def build_report(built: Built) -> list[str]:
    out = []
    for name, r in sorted(built.resources.items()):
        s = built.sass.get(name) if built.sass else None
        loads = (", ".join(f"{n} x {w}-bit" for w, n in sorted(s.global_loads.items(), reverse=True)) or "none") if s else "no SASS"
        spills = f"{r.spill_store_bytes} B spilled" if r.spills else "no spills"
        out.append(f"  {name}: {r.registers} registers, {spills}; global loads {loads}")
    return out


def try_kernel(name_or_path, timeout: float = 120) -> Tried:
    """Build, check and time one kernel file (see the module's doc)."""
    import torch

    path = resolve(name_or_path)
    source = path.read_text()
    Spec.of(source, path)  # a file without its try_kernel line fails here, before the build
    try:
        built = build(module_name(path), source)
    except BuildError as e:
        return Tried(path, "DID NOT BUILD", [str(e)])
    lines = [f"{path.name}: built ({built.arch})", *build_report(built)]
    if not torch.cuda.is_available():
        return Tried(path, "BUILT, NOT TIMED", [*lines, "checking and timing need a GPU: there is none here"])
    env = toolchain.child_env()
    try:
        p = subprocess.run([sys.executable, "-m", "gemvlab.workbook.exercises", str(path)], capture_output=True,
                           text=True, timeout=timeout, env=env, check=False)
        out = p.stdout
    except subprocess.TimeoutExpired:
        return Tried(path, "FAIL", [*lines, f"no answer in {timeout:.0f} s: does a loop never end?"])
    found = [json.loads(ln[7:]) for ln in out.splitlines() if ln.startswith("RESULT ")]
    if not found:
        tail = (p.stderr or out).strip().splitlines()[-3:]
        why = "the child process stopped without a result (this notebook's CUDA context is unaffected):"
        return Tried(path, "FAIL", [*lines, why, *tail])
    r = found[-1]
    lines += r["lines"]
    return Tried(path, r["status"], lines, r)


def copy_stage(stage, to: str | None = None) -> Path:
    """Copy a stage's .cu file into the clone's exercises/ folder (my_<name>.cu), with a try_kernel
    line comparing it with the stage itself, so that it can be edited and tried; the reference
    stages stay as they are. Returns the new file's path (an existing copy is kept)."""
    from ..stages import get_stage

    st = get_stage(stage)
    dest = Path(to) if to else EXERCISES / f"my_{st.name}.cu"
    if not dest.exists():
        line = (f"// try_kernel: reference {st.name}, block {st.default_block}, variant {st.default}, "
                f"shape 2048 x 262144, mark 1.05, launcher {st.launcher}\n")
        dest.write_text(line + st.source())
    return dest


# ---- the child process: check and time on the GPU -------------------------------------------------

def _inputs(spec: Spec):
    """(A, B, the float64 reference, C poisoned with NaN) for a spec: float32 A and one vector B, or
    the decode exercise's A in its dtype and B = x.t(), its vectors one after another, C (M, vectors)."""
    import torch

    from ..measure.accuracy import poisoned, random_inputs, reference

    if spec.dtype == "float32" and spec.vectors == 1:
        A, B = random_inputs(spec.M, spec.K, seed=1, b_2d=False)
        return A, B, reference(A, B), poisoned(spec.M, A.device)
    from ..measure import decode as md

    A, B = md.inputs(spec.M, spec.K, spec.vectors, md.DTYPES[spec.dtype], seed=1)
    C = torch.full((spec.M, spec.vectors), float("nan"), dtype=A.dtype, device=A.device)
    return A, B, md.reference(A, B), C


def _allowed(spec: Spec, dtype, ref_err: float) -> float:
    """The relative error a solution may have: 10 times the reference's (at least 1e-5) for float32,
    gemv's stated bound for half-precision C (mostly C's own rounding)."""
    if spec.dtype == "float32":
        return max(1e-5, 10 * ref_err)
    from ..measure.decode import error_bound

    return error_bound(dtype, spec.K)


def _child(path: str) -> dict:
    import torch

    from ..api import gemv
    from ..measure import ceiling
    from ..measure.accuracy import relative_error
    from ..measure.timing import time_round_robin
    from ..native import launch as native
    from ..stages import launch as stages

    source = Path(path).read_text()
    spec = Spec.of(source, path)
    fn = native.launcher(build(module_name(path), source), spec.launcher)
    A, B, ref, C = _inputs(spec)
    stream = native.stream(A.device.index or 0)
    args = (A.data_ptr(), B.data_ptr(), C.data_ptr(), spec.M, spec.K, spec.block, spec.variant, stream)
    where = f"on {torch.cuda.get_device_name()}, M = {spec.M:,}, K = {spec.K:,}" + (
        f", {spec.dtype}, {spec.vectors} vectors" if spec.vectors > 1 or spec.dtype != "float32" else "")
    code = fn(*args)
    if code:
        return {"status": "FAIL", "lines": [f"the launch failed: {fn.error_string(code)} (CUDA error {code})"]}
    try:
        torch.cuda.synchronize()
    except RuntimeError as e:
        return {"status": "FAIL", "lines": [f"the kernel faulted: {str(e).splitlines()[0]}"]}
    if spec.reference == "gemv":
        ref_fn, name = (lambda: gemv(A, B)), "gemv (the dispatcher)"
    else:
        ref_block = spec.reference_block or spec.block
        ref_fn, _ = stages.prepare(A, B, spec.reference, ref_block, spec.variant or None)
        name = f"{spec.reference} ({ref_block} threads{f', variant {spec.variant}' if spec.variant else ''})"
    Cr = gemv(A, B) if spec.reference == "gemv" else stages.run(A, B, spec.reference, ref_block, spec.variant or None)
    err, ref_err = relative_error(C.float(), ref), relative_error(Cr.float(), ref)
    tol = _allowed(spec, A.dtype, ref_err)
    lines = [f"check {where}: relative error {err:.1e} against float64 ({name}: {ref_err:.1e}; allowed {tol:.0e})"]
    if not err <= tol:
        unwritten = int(torch.isnan(C).sum())
        return {"status": "FAIL", "lines": [*lines, "wrong" + (f": {unwritten:,} of {C.numel():,} outputs never written"
                                                              if unwritten else "")]}
    fns = {"yours": lambda: fn(*args), "reference": ref_fn}
    found = ceiling.fastest(A)  # a read-only pass over A's bytes
    if found:
        fns["read ceiling"] = found[0]
    one = spec.reference == "gemv" and spec.vectors > 1
    if one:  # the same W times the first vector alone: what the other vectors add to a read of W
        B1 = B[:, :1]
        fns["reference, one vector"] = lambda: gemv(A, B1)
    t = time_round_robin(fns, rounds=3, warmup_ms=10, rep_ms=60)
    ratio = t["yours"].ms / t["reference"].ms
    ceil = f", read ceiling {t['read ceiling'].ms:.4f} ms" if "read ceiling" in t else ""
    lines.append(f"time: yours {t['yours'].ms:.4f} ms [{t['yours'].q25_ms:.4f} {t['yours'].q75_ms:.4f}], {name} "
                 f"{t['reference'].ms:.4f} ms{ceil}: {ratio:.2f}x the reference's time (the mark: at most "
                 f"{spec.mark:.2f}x)")
    if one:
        t1 = t["reference, one vector"].ms
        lines.append(f"{name} with one vector: {t1:.4f} ms; yours with {spec.vectors} takes {t['yours'].ms / t1:.2f}x "
                     "that")
    return {"status": "PASS" if ratio <= spec.mark else "FAIL", "lines": lines, "ratio": ratio,
            "ms": t["yours"].ms, "reference_ms": t["reference"].ms, "rel_err": err}


if __name__ == "__main__":
    try:
        result = _child(sys.argv[1])
    except Exception as e:  # noqa: BLE001 - a learner's kernel can fail in any way: report it
        result = {"status": "FAIL", "lines": [f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"]}
    print("RESULT " + json.dumps(result), flush=True)
