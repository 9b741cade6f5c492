"""The exercises are real: every starter and every solution builds; on a GPU every solution passes
lab.try_kernel and every starter fails its correctness check (so no exercise is done before the
learner does it). Starter and solution are tried the same way."""

from pathlib import Path

import pytest
import torch

import gemvlab as lab
from gemvlab.workbook.exercises import Spec

ROOT = Path(__file__).resolve().parent.parent
NAMES = sorted(p.name for p in (ROOT / "exercises").glob("[0-9]*.cu"))


def test_every_notebook_has_an_exercise_and_its_solution():
    assert [n[:2] for n in NAMES] == ["01", "02", "03", "04", "05", "06"]
    assert NAMES == sorted(p.name for p in (ROOT / "solutions").glob("[0-9]*.cu"))
    for name in NAMES:
        starter, solution = ((ROOT / d / name).read_text() for d in ("exercises", "solutions"))
        assert Spec.of(starter, name) == Spec.of(solution, name)
        assert "TODO" in starter and "TODO" not in solution


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
@pytest.mark.parametrize("name", NAMES)
def test_it_builds_and_is_tried(folder, name):
    tried = lab.try_kernel(ROOT / folder / name)
    assert "registers" in repr(tried), repr(tried)
    if not torch.cuda.is_available():
        assert tried.status == "BUILT, NOT TIMED"
    elif folder == "solutions":
        assert tried.status == "PASS", repr(tried)
    else:
        assert tried.status == "FAIL" and ("wrong" in repr(tried) or "faulted" in repr(tried)), repr(tried)


def test_a_copied_stage_is_tried_against_itself(tmp_path):
    path = lab.copy_stage("warp_shuffle", tmp_path / "mine.cu")
    assert path.read_text().startswith("// try_kernel: reference warp_shuffle")
    tried = lab.try_kernel(path)
    assert tried.status in ("BUILT, NOT TIMED", "PASS") or tried.measured.get("ratio", 0) < 1.2, repr(tried)


def test_the_reference_can_run_at_its_own_block():
    line = "// try_kernel: reference coalesced, block 384, reference_block 256, shape 64 x 128, mark 1.1\n"
    spec = Spec.of(line, "x.cu")
    assert (spec.block, spec.reference_block, spec.M, spec.K) == (384, 256, 64, 128)
    assert Spec.of(line.replace(", reference_block 256", ""), "x.cu").reference_block is None
