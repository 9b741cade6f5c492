"""The KernelBench export, on the CPU: a self-contained solution that runs a stage's .cu file
verbatim and keeps to KernelBench's rules for a CUDA solution."""

import ast

import pytest

import gemvlab as lab
from gemvlab.cli import kernelbench

FORBIDDEN = {"matmul", "mm", "mv", "bmm", "einsum", "addmv", "linear", "dot", "tensordot", "inner"}


def forward_calls(source: str) -> list[str]:
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew")
    fwd = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    calls = []
    for node in ast.walk(fwd):
        if isinstance(node, ast.Call):
            f = node.func
            calls.append(ast.unparse(f))
        assert not isinstance(node, (ast.Try, ast.With)), "no try/except fallback or stream/timing context in forward"
    return calls


@pytest.mark.parametrize("stage", [s.name for s in lab.STAGES])
def test_solution_runs_the_stage_verbatim_and_nothing_else(stage):
    st = lab.get_stage(stage)
    source = kernelbench.solution_source(stage)
    assert st.source() in source, "the stage's .cu file must be embedded verbatim"
    assert "load_inline(" in source and "class ModelNew" in source
    calls = forward_calls(source)
    assert calls == ["_ext.gemv"], calls
    assert not any(f"torch.{op}" in source.split("class ModelNew")[1].split("def get_inputs")[0] for op in FORBIDDEN)
    python = source[source.index("_ext = load_inline"):]  # the Python after the CUDA strings
    assert not any(w in python for w in ("torch.cuda.Stream", "Event", "synchronize", "torch.matmul", "except"))
    assert "M = 256 * 8" in source and "K = 131072 * 8" in source and "torch.rand(K, 1)" in source
    assert (kernelbench.FLOAT4_CHECKS in source) is st.float4


def test_bad_choices_are_refused():
    with pytest.raises(lab.GemvInputError, match="power of two"):
        kernelbench.solution_source("coalesced", block=96)
    with pytest.raises(lab.GemvInputError, match="not a stage"):
        kernelbench.solution_source("split_k")


def test_command_line_writes_it(capsys):
    from gemvlab.__main__ import main

    assert main(["kernelbench", "--stage", "4", "--block", "128", "--variant", "4"]) == 0
    out = capsys.readouterr().out
    assert "launch_warp_shuffle(" in out and ", 128, 4," in out
