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
    from gemvlab.results.studies import SHAPES

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


def test_every_plot_and_picture_renders_from_recorded_data(doc):
    from gemvlab import workbook as nb
    from gemvlab.workbook import pictures as pic

    ctx = nb.Context(False, doc, doc)
    figs = [plots.plot_stages(doc), plots.plot_stages(doc, upto=2), plots.plot_shapes(doc, gemv=True),
            plots.plot_dispatch(doc), pic.sectors(), pic.tree_vs_shuffle(), pic.tree_vs_shuffle(shuffle=False),
            pic.littles_law_of(ctx, 5), pic.waves(2048, 8, 132), pic.split_k(), pic.sm_map(64, 1, 132),
            pic.waves_of("warp_shuffle", 256, 4, 2048, nb.sm_limits(doc), 132)]
    figs += [pic.access(p) for p in ("naive", "coalesced", "float4", "multirow", "rows_per_warp", "row_tiles")]
    figs += [plots.plot_block_sweep(doc, s.name, mark_block=256, log=s.name == "naive")
             for s in __import__("gemvlab").STAGES]
    for fig in figs:
        assert fig.axes and fig.axes[0].has_data() or fig.axes[0].patches
        fig.canvas.draw()
    w = pic.warp_sectors("naive")
    assert len(w["sectors"]) == 32 and w["efficiency"] == 0.125
    assert pic.warp_sectors("coalesced")["efficiency"] == 1.0


def test_pitfall_transcripts_print(doc, capsys):
    from gemvlab import pitfalls

    for demo in pitfalls.DEMOS:
        pitfalls.show(pitfalls.recorded(demo, doc))
    out = capsys.readouterr().out
    assert "illegal memory access" in out and "misaligned address" in out


def test_a_step_is_real_when_it_repeats_beyond_the_quartiles_in_every_run():
    from gemvlab.results.table import step_verdict

    def row(ms, spread=0.002):
        return {"ms": ms, "q25_ms": ms - spread, "q75_ms": ms + spread}

    before, after = [row(1.0), row(1.01)], [row(0.9), row(0.92)]
    assert step_verdict(before, after).startswith("1.11x faster")
    assert step_verdict(after, before).startswith("1.11x slower")
    assert step_verdict(before, [row(0.9), row(1.011)]).startswith("tie")  # the second run does not repeat it
    assert step_verdict([row(1.0)], [row(0.9)]).endswith("(one run: not yet shown to repeat)")
    assert step_verdict([row(1.0)], [row(0.999)]).startswith("tie")  # quartiles overlap


def test_the_stage_table_judges_steps_by_both_runs(doc):
    from gemvlab.results.table import stage_runs

    runs = stage_runs(doc)
    assert set(runs) == {"naive", "coalesced", "vectorized", "warp_shuffle", "multirow"}
    assert all(len(r) == 2 and r[0]["study"] == "headline" and r[1]["study"] == "block_sweep" for r in runs.values())


def test_the_shape_plot_draws_every_series_it_names(doc):
    """One bar series per stage, plus gemv and torch.matmul, each with a bar per shape."""
    from matplotlib.container import BarContainer

    fig = plots.plot_shapes(doc, gemv=True)
    series = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)]
    labels = [c.get_label() for c in series]
    assert labels == ["coalesced", "vectorized", "warp_shuffle", "multirow", "gemv", "torch.matmul"]
    assert all(len(c) == len(results.shapes(doc)) for c in series)
