"""Each notebook is paired with a jupytext percent source (notebooks/NN_name.py): the .py is what a
maintainer edits, the .ipynb keeps the outputs a reader sees. They must say the same thing."""

from pathlib import Path

import jupytext
import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9]*.ipynb"))


def cells(nb) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def test_every_notebook_has_a_source():
    assert len(NOTEBOOKS) >= 5
    for path in NOTEBOOKS:
        assert path.with_suffix(".py").exists(), f"{path.name} has no jupytext source"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_and_source_are_in_sync(path):
    source = jupytext.read(path.with_suffix(".py"))
    stored = nbformat.read(path, as_version=4)
    assert cells(source) == cells(stored), (
        f"{path.name} and {path.with_suffix('.py').name} differ: edit the .py, then "
        f"`jupytext --sync notebooks/{path.with_suffix('.py').name}` and re-run the notebook")
    assert stored.metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_have_no_errors(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert any(c.outputs for c in code), "no stored outputs: run tools/execute_notebooks.py"
    for c in code:
        for o in c.outputs:
            assert o.output_type != "error", c.source[:80]
            assert not (o.output_type == "stream" and o.name == "stderr"), (c.source[:80], o.text[:200])
