import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "gemvlab", *args], capture_output=True, text=True, check=False)


def test_doctor_says_what_is_here_and_exits_0_when_kernels_can_be_built():
    p = run("doctor")
    assert p.returncode == 0, p.stdout + p.stderr
    for item in ("GPU", "torch", "CUDA_HOME", "nvcc", "ninja", "architecture", "compute-sanitizer", "disassembler"):
        assert item in p.stdout
    assert "kernels can be built here" in p.stdout


def test_doctor_exits_1_and_names_the_fix_without_a_toolkit(tmp_path):
    import os

    env = dict(os.environ, CUDA_HOME=str(tmp_path), PATH="/usr/bin:/bin")
    code = ("import gemvlab.native.toolchain as t; t.find_cuda_home = lambda: None; "
            "import gemvlab.cli.doctor as d; raise SystemExit(d.main())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 1
    assert "MISSING" in p.stdout and "fix:" in p.stdout and "CUDA_HOME" in p.stdout


def test_build_prints_registers_spills_and_load_widths():
    p = run("build")
    assert p.returncode == 0, p.stderr
    assert "gemv_multirow<64>" in p.stdout and "spilled" in p.stdout and "128-bit" in p.stdout


def test_record_refuses_without_a_gpu(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("there is a GPU here: record would run")
    p = run("record", "--out", str(tmp_path / "never.json"))
    assert p.returncode != 0 and "needs a CUDA GPU" in p.stderr
