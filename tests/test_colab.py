"""Colab's layout, simulated: the kernel runs in /content, the clone is /content/gemvlab, and gemvlab
is not installed, so `find_spec("gemvlab")` finds the clone's folder as a namespace package. Each
notebook's first cell must install the clone (editable) and import it from there."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    content = tmp_path_factory.mktemp("content")
    clone = content / "gemvlab"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(".venv", ".git", ".gpucache", ".before", ".whl",
                                                               "*.egg-info", "__pycache__", "screenshots"))
    env_dir = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    site = next(env_dir.glob("lib/python*/site-packages"))
    # what Colab has besides: pip, setuptools, torch and the rest, as a plain path (not this environment's gemvlab)
    (site / "colab.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return content, env_dir / "bin" / "python"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_first_cell_installs_the_clone(colab, path):
    content, python = colab
    first = next(c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code")
    code = "".join(first["source"]) + "\nprint(gemvlab.__file__)"
    env = dict(os.environ, PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([str(python), "-c", code], cwd=content, capture_output=True, text=True, env=env,
                       timeout=600, check=False)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    version, where = p.stdout.strip().splitlines()[-2:]
    assert version == f"gemvlab {__import__('gemvlab').__version__}"
    assert where == str(content / "gemvlab" / "gemvlab" / "__init__.py")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_starts_with_the_same_install_cell(path):
    first = next(c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code")
    assert "".join(first["source"]).strip() == (ROOT / "tools" / "install_cell.py").read_text().strip()
