"""The decode bar (gemvlab.results.decode_bar): what counts as faster, a tie or slower, and which
tests of the bar apply where. Synthetic results files, so no retune changes what is tested."""

import json
import subprocess
import sys
from pathlib import Path

from gemvlab import results
from gemvlab.results import decode_bar

ROOT = Path(__file__).resolve().parents[1]
L2 = 60 * 2**20


def row(N, K, n, kernel, ms, spread=0.01, dtype="bfloat16", which="issue", vs_ceiling=0.97, rel_err=1e-3):
    return {"M": N, "K": K, "n": n, "dtype": dtype, "kernel": kernel, "ms": ms, "q1": ms * (1 - spread),
            "q3": ms * (1 + spread), "GBps": 1.0, "vs_torch": None, "vs_ceiling": vs_ceiling,
            "chosen": "plan" if kernel == "gemv" else None, "rel_err": rel_err if kernel == "gemv" else None,
            "bound": 4e-3 if kernel == "gemv" else None, "set": which}


def case(N, K, n, gemv, matmul, compiled=None, **kw):
    out = [row(N, K, n, "gemv", gemv, **kw), row(N, K, n, "torch.matmul", matmul, **kw)]
    return out + ([row(N, K, n, "torch.compile", compiled, **kw)] if compiled else [])


def doc(rows):
    return {"source": "recorded", "date": "2026-12-07", "machine": {"gpu": "test GPU", "l2_bytes": L2},
            "decode": {"rows": rows, "machine": {"gpu": "test GPU", "l2_bytes": L2}, "date": "2026-12-07"}}


def test_a_verdict_needs_the_quartiles_apart():
    g = row(1024, 4096, 1, "gemv", 1.0)
    assert decode_bar.verdict(g, row(1024, 4096, 1, "torch.matmul", 1.05)) == "faster"
    assert decode_bar.verdict(g, row(1024, 4096, 1, "torch.matmul", 1.015)) == "tie"  # quartiles overlap
    assert decode_bar.verdict(g, row(1024, 4096, 1, "torch.matmul", 0.95)) == "slower"


def test_a_case_takes_its_worst_verdict_and_a_slower_one_misses():
    got = decode_bar.check(doc(case(1024, 4096, 1, 1.0, 1.2, 0.9)))
    (c,) = got["cases"]
    assert c["verdicts"] == {"torch.matmul": "faster", "torch.compile": "slower"} and c["verdict"] == "slower"
    assert not got["met"] and any("slower than torch.compile" in m for m in got["misses"])


def test_ties_pass_up_to_one_case_in_ten_per_set():
    fast = [r for n in range(1, 10) for r in case(1024, 4096 + 128 * n, 1, 1.0, 1.2, 1.2)]
    tie = case(1024, 4096, 1, 1.0, 1.01, 1.2)
    assert decode_bar.check(doc(fast + tie))["met"]  # 1 tie in 10 cases
    other = [dict(r, set="untuned") for r in tie]  # the untuned shapes count on their own: 1 tie in 1
    got = decode_bar.check(doc(fast + tie + other))
    assert not got["met"] and got["misses"] == ["untuned: 1 ties in 1 cases, more than 0"]


def test_big_w_must_gain_at_few_vectors_read_near_the_ceiling_and_keep_n16_near_n1():
    N, K = 65_536, 8192  # 1 GiB of bf16: at least 4x the L2
    ok = case(N, K, 1, 1.0, 1.1, 1.1) + case(N, K, 2, 1.0, 1.3, 1.3) + case(N, K, 16, 1.1, 1.2, 1.2)
    assert decode_bar.check(doc(ok))["met"]
    few = case(N, K, 1, 1.0, 1.1, 1.1) + case(N, K, 2, 1.0, 1.2, 1.2)
    assert any("under 1.25x" in m for m in decode_bar.check(doc(few))["misses"])
    slow_read = case(N, K, 8, 1.0, 1.1, 1.1, vs_ceiling=0.9)
    assert any("of the read ceiling" in m for m in decode_bar.check(doc(slow_read))["misses"])
    n16 = case(N, K, 1, 1.0, 1.1, 1.1) + case(N, K, 16, 1.2, 1.3, 1.3)
    assert any("its n = 1 time" in m for m in decode_bar.check(doc(n16))["misses"])
    small = case(1024, 4096, 2, 1.0, 1.1, 1.1, vs_ceiling=0.5)  # W in the L2: only the race applies
    assert decode_bar.check(doc(small))["met"]


def test_a_file_without_the_l2_size_cannot_meet_the_bar():
    d = doc(case(1024, 4096, 1, 1.0, 1.2, 1.2))
    del d["decode"]["machine"]["l2_bytes"], d["machine"]["l2_bytes"]
    got = decode_bar.check(d)
    assert not got["met"] and any("no L2 size" in m for m in got["misses"])


def test_float32_ties_pass_and_errors_over_the_bound_miss():
    f32 = case(4096, 4096, 2, 1.0, 1.01, dtype="float32", which="float32")
    assert decode_bar.check(doc(f32))["met"]
    wrong = case(1024, 4096, 1, 1.0, 1.2, 1.2, rel_err=1.0)
    assert any("over its bound" in m for m in decode_bar.check(doc(wrong))["misses"])


def test_every_recorded_case_is_judged_once():
    """Every (set, dtype, N, K, n) with a gemv row in the recorded file is one case of the bar."""
    d = results.load()
    keys = [(c["set"], c["dtype"], c["M"], c["K"], c["n"]) for c in decode_bar.cases(d)]
    gemv = {(r["set"], r["dtype"], r["M"], r["K"], r["n"]) for r in d["decode"]["rows"] if r["kernel"] == "gemv"}
    assert len(keys) == len(set(keys)) and set(keys) == gemv


def test_table_decode_bar_json():
    out = subprocess.run([sys.executable, "-m", "gemvlab", "table", "--decode", "--bar", "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    assert {"counts", "misses", "met", "cases"} <= set(got) and got["cases"]
