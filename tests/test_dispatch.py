"""The dispatcher's rule, as contracts, on the CPU: every row and float of K covered exactly once,
waves within the rule's bounds, only compiled variants, a reason for every decision, each branch
of the rule taken where its conditions hold. No GPU needed: the rule is a function of numbers, and
the recorded H200's SM count, L2 and limits stand in (and a T4's, for a smaller GPU). Exact split
counts and wording are not pinned: a retune may change them."""

import itertools

import pytest
import torch

import gemvlab as lab
from gemvlab import dispatch
from gemvlab.dispatch import KERNELS
from gemvlab.dispatch import tuning as T
from gemvlab.dispatch.reasons import DECISIONS, text
from gemvlab.gpu.occupancy import KNOWN

H200 = dispatch.Device("NVIDIA H200", 132, 60 * 2**20, KNOWN["H200"])
T4 = dispatch.Device("Tesla T4", 40, 4 * 2**20, KNOWN["T4"])
MS = (1, 2, 3, 7, 16, 50, 100, 127, 128, 131, 500, 700, 1000, 1100, 2048, 3000, 5000, 100_000, 10**6, 6 * 10**6)
KS = (1, 2, 3, 5, 8, 9, 16, 17, 24, 32, 33, 40, 48, 49, 50, 64, 65, 95, 96, 128, 257, 512, 513, 1000, 2048, 2049, 4096,
      4099, 20_000, 65536, 240_000, 262_147, 10**6 + 1, 1 << 22, 5_000_001, 50_000_000)
#: (row stride - K, A's and B's addresses mod 16)
LAYOUTS = ((0, 0, 0), (0, 4, 4), (0, 4, 0), (1, 0, 0), (4, 0, 8), (7, 12, 0))


def choose(M, K, pad=0, a=0, b=0, device=H200):
    return dispatch.choose(M, K, K + pad, a, b, device)


def grid_of_plans(device=H200):
    for M, K, (pad, a, b) in itertools.product(MS, KS, LAYOUTS):
        if M * K <= 2**34 and (pad <= K or pad == 0):
            yield M, K, pad, a, b, choose(M, K, pad, a, b, device)


def slots(plan, device=H200) -> int:
    occ = KERNELS[plan.kernel].occupancy(plan.block, plan.variant, device.limits)
    return device.sms * occ.blocks_per_sm


@pytest.mark.parametrize("device", [H200, T4], ids=["H200", "T4"])
def test_every_row_and_every_float_of_k_is_covered_exactly_once(device):
    for M, K, pad, a, b, p in grid_of_plans(device):
        assert (p.M, p.K) == (M, K) and p.grid <= 2**31 - 1
        if p.kernel == "split_k":
            groups = -(-M // p.rows_per_block)
            assert p.grid == groups * p.splits and p.chunk % 4 == 0
            assert p.chunk * (p.splits - 1) < K <= p.chunk * p.splits, p.describe()
        elif p.kernel == "rows_per_warp":
            rows = p.block // p.lanes_per_row
            assert p.block % p.lanes_per_row == 0 and (p.grid - 1) * rows < M <= p.grid * rows
        else:
            assert p.kernel == "row_tiles"
            rows = p.block // p.lanes_per_row * p.rows_per_group
            assert (p.grid - 1) * rows < M <= p.grid * rows
            assert dispatch.tile_fits(rows, K, K + pad) and K <= lab.dispatch.kernels.TILE_MAX_K
            loaded = 4 * p.block * p.loads  # floats one trip loads
            assert p.loads == T.TILE_LOADS or loaded >= dispatch.tile_floats(rows, K, K + pad)  # one trip


def test_the_kernel_follows_the_row_length():
    for M, K, pad, a, b, p in grid_of_plans():
        if K > T.SHORT_ROW_K:
            assert p.kernel == "split_k"
        else:
            assert p.kernel in ("rows_per_warp", "row_tiles") and (p.kernel == "rows_per_warp" or K <= 64)


def test_only_compiled_variants_are_chosen_and_every_compiled_one_is():
    """The library compiles exactly the variants the rule can pick."""
    chosen = {k: set() for k in KERNELS}
    for M, K, pad, a, b, p in grid_of_plans():
        assert p.variant in KERNELS[p.kernel].variants
        chosen[p.kernel].add(p.variant)
    for K in range(1, 65):  # every tile plan, with the row strides the rule accepts
        for pad in range(K // 8 + 1):
            p = choose(6_000_000 // K + 7, K, pad)
            chosen[p.kernel].add(p.variant)
    for name, kernel in KERNELS.items():
        missing = set(kernel.variants) - chosen[name]
        assert not missing, (name, sorted(map(kernel.kernel_name, missing)))


def test_every_decision_has_a_reason_that_reads():
    for M, K, pad, a, b, p in grid_of_plans():
        decided = {r.decides for r in p.reasons}
        assert set(DECISIONS[p.kernel]) <= decided, (p.name, decided)
        for r in p.reasons:
            assert text(r)
        assert p.describe().startswith(f"M = {M:,}, K = {K:,}: {p.name}")
    assert choose(0, 100).kernel == "none" and choose(100, 0).kernel == "zeros"


def test_b_is_read_as_float4_only_where_aligned_like_every_row():
    for M, K, pad, a, b, p in grid_of_plans():
        alike = M == 1 or (K + pad) % 4 == 0
        assert p.b_vec == (p.kernel != "row_tiles" and alike and (a - b) % 16 == 0)


def test_split_waves_stay_within_the_rules_bounds():
    for M, K, pad, a, b, p in grid_of_plans():
        if p.kernel != "split_k" or p.splits == 1:
            continue
        waves = p.grid / slots(p)
        keys = {r.key for r in p.reasons}
        most = max(1, K // T.MIN_CHUNK)
        if "busy split" in keys:
            assert waves >= T.BUSY_SPLIT_WAVES or p.splits == most, p.describe()
        elif "one trip" not in keys:
            target = T.UNEVEN_WAVES if (p.rows_per_block == 1 and (K + pad) % 4 and M > 1) else T.TARGET_WAVES
            least = next((r.facts["least"] for r in p.reasons if r.key == "b over l2"), 1)
            assert waves <= target + 1 or p.splits == least, p.describe()
            assert p.chunk >= T.MIN_CHUNK
        if p.rows_per_block > 1:  # a stretch of the shared B fits its part of the L2
            assert 4 * p.chunk <= T.B_SHARE_OF_L2 * H200.l2_bytes


def reason_keys(p):
    return {(r.decides, r.key) for r in p.reasons}


@pytest.mark.parametrize("M,K,pad,key", [
    (4_000_000, 8, 0, ("tile", "one trip")), (2_000_000, 16, 0, ("tile", "static")),
    (3_000_000, 40, 0, ("tile", "one trip")), (4_000_000, 50, 6, ("kernel", "row_tiles")),
])
def test_many_short_rows_are_loaded_as_tiles(M, K, pad, key):
    p = choose(M, K, pad)
    assert p.kernel == "row_tiles" and key in reason_keys(p)


def test_tiles_need_more_than_one_trip_of_data_and_few_floats_between_rows():
    assert choose(20_000, 33).kernel == "rows_per_warp"  # little data
    assert choose(4_000_000, 50, pad=7).kernel == "rows_per_warp"  # 7 of 57 floats unused: too many
    assert choose(4_000_000, 65).kernel == "rows_per_warp"  # B would not fit the tile kernel's copy
    assert choose(1, 50).kernel == "rows_per_warp"


@pytest.mark.parametrize("M,K,case", [(1000, 500, "one trip"), (1_000_000, 65, "few float4s"),
                                      (1_000_000, 300, "line")])
def test_rows_per_warp_lanes_per_row(M, K, case):
    p = choose(M, K)
    lanes = next(r for r in p.reasons if r.decides == "lanes")
    assert p.kernel == "rows_per_warp" and lanes.facts["case"] == case
    assert T.MIN_LANES <= p.lanes_per_row <= 32 and p.block == T.ROWS_BLOCK
    if case == "line":
        assert p.lanes_per_row >= T.LINE_LANES


def test_the_data_regime_follows_the_gpu():
    """The same shape can be little data for the H200 (132 SMs) and more than one trip for a T4."""
    def case(device):
        return next(r for r in choose(8192, 128, device=device).reasons if r.decides == "lanes").facts["case"]
    assert case(H200) == "one trip" and case(T4) == "line"


@pytest.mark.parametrize("M,K,pad,key", [
    (2048, 1 << 20, 0, "busy unsplit"), (1100, 240_000, 0, "busy split"), (1024, 262_147, 0, "busy split"),
    (16, 1 << 24, 0, "few rows"), (500, 1_000_001, 0, "few rows"), (1, 65536, 0, "one trip"),
    (2000, 1 << 26, 0, "b over l2"),
])
def test_each_split_branch(M, K, pad, key):
    p = choose(M, K, pad)
    assert p.kernel == "split_k" and ("splits", key) in reason_keys(p), p.describe()
    assert (p.splits == 1) == (key == "busy unsplit")


def test_odd_k_aims_at_more_waves_than_aligned_rows():
    aligned, odd = choose(500, 1_000_000), choose(500, 1_000_001)
    assert odd.splits > aligned.splits
    assert next(r for r in odd.reasons if r.key == "few rows").facts["is_uneven"]


@pytest.mark.parametrize("M,K,a,rows", [(3, 50_000_000, 0, T.SHARE_B_ROWS), (50, 5_000_000, 0, T.SHARE_B_ROWS),
                                        (3, 50_000_001, 0, T.SHARE_B_ROWS_SHUFFLED),
                                        (8, 30_000_000, 4, T.SHARE_B_ROWS_SHUFFLED)])
def test_few_rows_share_a_b_larger_than_a_quarter_of_the_l2(M, K, a, rows):
    p = choose(M, K, a=a)
    assert p.rows_per_block == rows and ("rows_per_block", "share b") in reason_keys(p)
    assert choose(64, 1_000_003).rows_per_block == 1  # B (4 MB) well inside the L2
    assert choose(T.SHARE_B_BELOW_M, 1 << 22).rows_per_block == 1
    assert choose(1, 1 << 26).rows_per_block == 1


def test_split_count_follows_the_sm_count():
    assert choose(1, 1 << 26, device=T4).splits < choose(1, 1 << 26).splits


def test_uncompiled_variants_are_refused_with_the_list():
    with pytest.raises(lab.GemvInputError, match="not compiled"):
        dispatch.make_plan(10, 100, "rows_per_warp", H200, False, 64, lanes_per_row=2)


def test_layout_accepts_views_and_refuses_what_it_cannot_read():
    big = torch.rand(10, 20)
    assert dispatch.plan_for(big[:, 3:], torch.rand(17))[1] == 20
    assert dispatch.plan_for(big.view(-1)[5:105].view(10, 10), torch.rand(10, 1))[1] == 10
    for A, B, msg in [(big.t(), torch.rand(10), "contiguous"), (big, torch.rand(19), "shape"),
                      (big.double(), torch.rand(20), "float32"), (big[0], torch.rand(20), "2-D"),
                      ([[1.0]], torch.rand(1), "not a torch.Tensor")]:
        with pytest.raises(lab.GemvInputError, match=msg):
            dispatch.plan_for(A, B)


def test_gemv_refuses_cpu_tensors_before_anything_runs():
    with pytest.raises(lab.GemvInputError, match="CPU"):
        lab.gemv(torch.rand(4, 8), torch.rand(8))
    with pytest.raises(lab.GemvInputError, match="stage="):
        lab.gemv(torch.rand(4, 8), torch.rand(8), block=256)


def test_explain_on_cpu_tensors_uses_the_recorded_gpu():
    text_ = lab.explain(torch.rand(16, 20_000), torch.rand(20_000, 1))
    assert "split_k" in text_ and "recorded NVIDIA H200" in text_ and "132 SMs" in text_
    assert repr(text_) == str(text_)  # shows as text in a notebook
    assert "B is strided" in lab.explain(torch.rand(3, 50), torch.rand(100)[::2])


def test_custom_op_has_a_fake_implementation():
    A, B = torch.empty(7, 33, device="meta"), torch.empty(33, 1, device="meta")
    assert torch.ops.gemvlab.gemv(A, B).shape == (7, 1)
    assert torch.ops.gemvlab.gemv(A, torch.empty(33, device="meta")).shape == (7,)
    torch.library.opcheck(torch.ops.gemvlab.gemv.default, (A, B), test_utils=("test_schema",))
