"""gemvlab as a user installs it: a wheel built from this tree, installed (not editable) into a fresh
environment, imports from there and builds a stage, so every subpackage and .cu file ships."""

import ast
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp / "dist"), str(ROOT)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next((tmp / "dist").glob("gemvlab-*.whl"))
    env = tmp / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next(env.glob("lib/python*/site-packages"))
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                              str(wheel)], capture_output=True, text=True, check=False)
    assert install.returncode == 0, install.stderr[-3000:]
    # torch and the rest from this environment, as a plain path (no .pth processing: not this
    # environment's editable gemvlab)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env / "bin" / "python", tmp


def test_the_wheel_ships_every_subpackage_and_kernel_source(installed):
    python, tmp = installed
    code = ("import gemvlab, pathlib; root = pathlib.Path(gemvlab.__file__).parent; "
            "print(root); print(sorted(str(p.relative_to(root)) for p in root.rglob('*.cu*')))")
    p = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=tmp, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    where, files = p.stdout.splitlines()
    assert str(tmp / "env") in where and str(ROOT) not in where
    shipped = set(ast.literal_eval(files))
    source = {str(p.relative_to(ROOT / "gemvlab")) for p in (ROOT / "gemvlab").rglob("*.cu*")}
    assert shipped == source


def test_the_installed_package_builds_a_stage_and_explains_a_plan(installed, tmp_path):
    python, tmp = installed
    code = ("import gemvlab as lab, torch; b = lab.build_stage('warp_shuffle'); "
            "print(b.resources['gemv_warp_shuffle<2, true>'].registers); "
            "print(lab.explain(torch.rand(16, 20000), torch.rand(20000)).splitlines()[0]); "
            "print(lab.results.load()['machine']['gpu'])")
    env = {"GEMVLAB_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    p = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=tmp, env=env, check=False)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    registers, plan, gpu = p.stdout.strip().splitlines()[-3:]
    assert int(registers) > 8 and "split_k" in plan and gpu
