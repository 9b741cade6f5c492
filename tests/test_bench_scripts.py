"""The maintained GPU scripts in bench/, run where they can run without a GPU (their dry modes), so
that a change to the library they use cannot leave them broken unnoticed."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, check=False)


def test_tune_dispatch_lists_candidates_for_every_shape_and_builds_its_own():
    p = run("bench/tune_dispatch.py", "--dry")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    lines = [ln for ln in p.stdout.splitlines() if " rule: " in ln]
    sys.path.insert(0, str(ROOT / "bench"))
    import tune_dispatch

    assert len(lines) == len(tune_dispatch.SHAPES)
    assert all(ln.count(": ") >= 3 for ln in lines)  # the rule's plan and at least one neighbour
    assert "gemv_split_k<4, true, 1>" in p.stdout and "gemv_rows_per_warp<2, false>" in p.stdout


def test_same_bits_lists_its_cases_and_plans():
    p = run("bench/same_bits.py", "list")
    assert p.returncode == 0, p.stderr[-3000:]
    cases = p.stdout.strip().splitlines()
    assert len(cases) >= 50
    kernels = {ln.split(": ")[-1].split("<")[0] for ln in cases if ": gemv" in ln and "<" in ln}
    assert {"split_k", "rows_per_warp", "row_tiles"} <= kernels
