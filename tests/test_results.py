"""The recorded file: its schema, and what the readers (table, plots, notebooks) get from it."""

import copy
import itertools
import json
import subprocess
import sys

import matplotlib
import pytest

matplotlib.use("Agg")

from gemvlab import results
from gemvlab.results.table import format_table, json_rows, stage_table
from gemvlab.workbook import plots


@pytest.fixture(scope="module")
def doc():
    return results.load()


def test_recorded_file_matches_schema(doc):
    assert doc["source"] == "recorded" and doc["machine"]["gpu"]
    assert {r["study"] for r in doc["runs"]} >= {"headline", "block_sweep", "shapes"}
    assert set(doc["pitfalls"]) >= {"cpu_pointers", "sticky_error", "misaligned_float4", "int32_offsets"}


def test_validate_rejects_broken_documents(doc):
    for breaks in (lambda d: d.pop("machine"), lambda d: d["runs"][0].pop("ms"),
                   lambda d: d["runs"][0].update(status="fine"), lambda d: d["timer"].update(min_launches=5),
                   lambda d: d["runs"][0].update(ms=None), lambda d: d.update(schema="other/2")):
        broken = copy.deepcopy(doc)
        breaks(broken)
        with pytest.raises(results.SchemaError):
            results.validate(broken)


def test_every_stage_has_a_headline_row_and_a_full_block_sweep(doc):
    head = results.headline(doc)
    assert [r["stage"] for r in head["stages"]] == ["naive", "coalesced", "vectorized", "warp_shuffle", "multirow"]
    assert head["torch"] and head["ceiling"]
    for r in head["stages"]:
        assert r["n"] >= 20 and r["min_ms"] <= r["ms"] <= r["max_ms"]
    for stage in ("naive", "coalesced", "vectorized"):
        assert [r["block"] for r in results.block_sweep(doc, stage)] == [32, 64, 128, 256, 512, 1024]
    assert {r["variant"] for r in results.block_sweep(doc, "multirow")} >= {2, 4, 8}


def test_the_ten_shapes_are_there(doc):
    from gemvlab.results.record import SHAPES

    assert set(results.shapes(doc)) == set(SHAPES)
    s = results.shape_summary(doc, 4096, 4099)
    assert s["stages"]["vectorized"]["status"] == "unsupported" and "multiple of 4" in s["stages"]["vectorized"]["note"]


def test_stage_table_columns(doc):
    t = stage_table(doc)
    assert t[0]["step_speedup"] is None and t[0]["cumulative_speedup"] == 1.0
    for prev, row in itertools.pairwise(t):
        assert row["step_speedup"] == pytest.approx(prev["ms"] / row["ms"])
    text = format_table(doc)
    assert "torch.matmul" in text and "read ceiling" in text and results.label(doc) in text


def test_table_json_from_the_command_line():
    out = subprocess.run([sys.executable, "-m", "gemvlab", "table", "--json", "--recorded"], capture_output=True,
                         text=True, check=True).stdout
    rows = json.loads(out)
    assert len(rows) == 5
    for r in rows:
        assert {"stage", "M", "K", "block", "ms", "GBps", "rel_err", "vs_ceiling", "vs_torch", "source", "gpu"} <= set(r)
        assert r["source"] == "recorded"


def test_json_rows_match_the_table(doc):
    assert [r["stage"] for r in json_rows(doc)] == [t["stage"] for t in stage_table(doc)]


def test_every_plot_renders_from_recorded_data(doc):
    figs = [plots.plot_stages(doc), plots.plot_stages(doc, upto=2), plots.plot_shapes(doc),
            plots.plot_warp_sectors()]
    figs += [plots.plot_block_sweep(doc, s.name, mark_block=256) for s in __import__("gemvlab").STAGES]
    for fig in figs:
        assert fig.axes and fig.axes[0].has_data()
        fig.canvas.draw()
    w = plots.warp_sectors("naive")
    assert len(w["sectors"]) == 32 and w["efficiency"] == 0.125
    assert plots.warp_sectors("coalesced")["efficiency"] == 1.0


def test_pitfall_transcripts_print(doc, capsys):
    from gemvlab import pitfalls

    for demo in pitfalls.DEMOS:
        pitfalls.show(pitfalls.recorded(demo, doc))
    out = capsys.readouterr().out
    assert "illegal memory access" in out and "misaligned address" in out


def test_run_drift_is_the_largest_move_of_a_ratio_between_the_two_timings(doc):
    d = copy.deepcopy(doc)
    M, K = d["headline"]["M"], d["headline"]["K"]
    first = {r["stage"]: r for r in results.rows(d, "headline", ok=True)}
    again = {r["stage"]: r for r in results.rows(d, "shape_best", M=M, K=K, ok=True)}
    for name, row in again.items():  # the second timing the same as the first: no drift
        if name in first:
            row["ms"] = first[name]["ms"]
    assert results.run_drift(d) == pytest.approx(0.0)
    again["coalesced"]["ms"] *= 1.02  # one kernel 2% slower the second time: its ratios moved 2%
    assert results.run_drift(d) == pytest.approx(0.02)
    again["torch.matmul"]["ms"] *= 1.5  # torch.matmul is left out
    assert results.run_drift(d) == pytest.approx(0.02)


def test_step_verdict_marks_steps_within_the_drift():
    from gemvlab.results.table import step_verdict

    before = {"ms": 1.006, "q25_ms": 1.004, "q75_ms": 1.008}
    after = {"ms": 1.000, "q25_ms": 0.998, "q75_ms": 1.002}
    assert step_verdict(before, after) == "1.006x faster"
    assert "within the 0.70%" in step_verdict(before, after, 0.007)
    assert "within" not in step_verdict(before, after, 0.005)
    assert step_verdict(before, {"ms": 1.005, "q25_ms": 1.003, "q75_ms": 1.007}, 0.007).startswith("tie")
