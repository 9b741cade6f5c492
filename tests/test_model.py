"""The model's arithmetic, on inputs given here (not measured), asserting its numbers: Little's law
per wave, the caps, the scattered naive warp, and the traffic counted from a kernel's loads."""

import pytest

from gemvlab.gpu.occupancy import HOPPER
from gemvlab.measure import model

INPUTS = {"limits": HOPPER, "sms": 132, "latency_ns": 600.0, "far_latency_ns": 700.0, "warp_latency_ns": 2000.0,
              "clock_mhz": 2000.0, "ceiling_GBps": 4500.0}
M, K = 2048, 1 << 20


def test_traffic_of_the_scalar_stages():
    naive = model.traffic("naive")
    assert (naive.bytes_in_flight, naive.l1_lines, naive.scattered) == (32 * 32, 2 * (4 * 32 + 4), True)
    coalesced = model.traffic("coalesced")
    assert (coalesced.bytes_in_flight, coalesced.l1_lines, coalesced.scattered) == (128, 2, False)


def test_traffic_counts_the_loads_of_a_issued_before_the_first_use(monkeypatch):
    monkeypatch.setattr(model, "loads_issued", lambda stage, variant=None: [
        "LDG.E.128.STRONG.GPU", "LDG.E.128.CONSTANT", "LDG.E.128.STRONG.GPU", "LDG.E.128.CONSTANT"])
    t = model.traffic("warp_shuffle", 4)  # 4 written, 2 of A issued before the first use
    assert (t.bytes_in_flight, t.l1_lines) == (2 * 512, 2 * 8)
    assert model.traffic("read_ceiling").bytes_in_flight == 4 * 512  # A alone: every load is A's
    monkeypatch.setattr(model, "loads_issued", lambda stage, variant=None: None)  # no disassembler
    assert model.traffic("warp_shuffle", 8).bytes_in_flight == 8 * 512  # the source's count
    assert model.loads_written("multirow", 16) == 16 and model.loads_written("vectorized") == 1


def test_naive_at_32_threads_is_bound_by_bytes_in_flight():
    p = model.predict("naive", M, K, 32, **INPUTS)
    # 64 blocks of one warp on 64 SMs, one wave; each warp 1,024 bytes in flight; a round is the
    # warp chase's 2,000 ns plus the L1's time for the 264 - 32 lines not inside it (1 per clock)
    round_ns = 2000 + (264 - 32) / 2000 * 1e3
    gbps = 64 * 1024 / round_ns
    assert (p.grid, len(p.waves), p.res.busy_sms) == (64, 1, 64)
    assert p.round_ns == pytest.approx(round_ns) and p.waves[0].GBps == pytest.approx(gbps)
    assert p.bound == "bytes in flight"
    assert p.ms == pytest.approx(4 * M * K / gbps / 1e6 + 4 * (K + M) / 4500e9 * 1e3)


def test_naive_at_1024_threads_is_bound_by_the_l1():
    p = model.predict("naive", M, K, 1024, **INPUTS)
    # 2 blocks on 2 SMs: each element of A one line lookup (132 lines per 512 bytes of A), one per clock per SM
    l1_gbps = 2 * 2000e6 / (132 / 512) / 1e9
    assert p.res.busy_sms == 2 and p.bound == "L1 lines" and p.waves[0].GBps == pytest.approx(l1_gbps)


def test_coalesced_runs_in_waves_each_priced_alone():
    occ = model.get_stage("coalesced").occupancy(1024, None, HOPPER)
    if occ.blocks_per_sm != 2:
        pytest.skip("the coalesced kernel is register-bound at 1024 threads with this compiler")
    p = model.predict("coalesced", M, K, 1024, **INPUTS)
    slots = 132 * 2
    round_ns = 700 + 2 / 2000 * 1e3  # the far latency plus 2 lines of L1 time
    full, last = slots * 32 * 128 / round_ns, (M - 7 * slots) * 32 * 128 / round_ns
    assert [w.blocks for w in p.waves] == [slots] * 7 + [M - 7 * slots]
    assert p.waves[0].GBps == pytest.approx(full) and p.waves[-1].GBps == pytest.approx(last)
    row_bytes = 4 * K
    expected = (7 * slots * row_bytes / full + (M - 7 * slots) * row_bytes / last) / 1e6 + 4 * (K + M) / 4500e9 * 1e3
    assert p.ms == pytest.approx(expected)


def test_the_read_ceiling_caps_every_wave():
    p = model.predict("coalesced", M, K, 256, **dict(INPUTS, far_latency_ns=1.0, latency_ns=1.0))
    assert p.bound == "read ceiling" and all(w.GBps == 4500.0 for w in p.waves)


def test_a_plan_adds_its_launches():
    from gemvlab import dispatch

    device = dispatch.Device("NVIDIA H200", 132, 60 * 2**20, HOPPER)
    one = dispatch.choose(2048, 131072, 131072, 0, 0, device)
    split = dispatch.choose(16, 1 << 20, 1 << 20, 0, 0, device)
    for plan, launches in ((one, 1), (split, 2)):
        bare = model.predict_plan(plan, **INPUTS)
        timed = model.predict_plan(plan, launch_us=3.0, **INPUTS)
        assert timed.ms == pytest.approx(bare.ms + launches * 3e-3)
    assert model.predict_plan(dispatch.choose(0, 5, 5, 0, 0, device), **INPUTS) is None
