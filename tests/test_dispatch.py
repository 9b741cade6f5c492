"""The dispatcher's rule, branch by branch, and its input handling, on the CPU (no GPU needed:
the rule is a function of numbers, and the recorded H200's SM count, L2 and limits stand in)."""

import pytest
import torch

import gemvlab as lab
from gemvlab import dispatch
from gemvlab.occupancy import KNOWN

H200 = dispatch.Device("NVIDIA H200", 132, 60 * 2**20, KNOWN["H200"])
T4 = dispatch.Device("Tesla T4", 40, 4 * 2**20, KNOWN["T4"])


def choose(M, K, lda=None, a=0, b=0, device=H200):
    return dispatch.choose(M, K, K if lda is None else lda, a, b, device)


def test_empty_shapes_launch_nothing():
    assert choose(0, 100).kernel == "none"
    assert choose(100, 0).kernel == "zeros"


@pytest.mark.parametrize("K,G", [(65, 4), (95, 4), (96, 8), (128, 8), (257, 8), (362, 8), (363, 16),
                                 (513, 16), (1000, 32), (1024, 32), (2048, 32)])
def test_many_short_rows_get_a_line_per_group_and_about_32_floats_per_lane(K, G):
    """More data than one trip of the resident threads: at least 8 lanes (128 bytes per load
    instruction), else the power of two nearest K / 32; 4 lanes for rows under 96 floats."""
    p = choose(1_000_000, K)
    assert (p.kernel, p.lanes_per_row, p.block) == ("rows_per_warp", G, dispatch.ROWS_BLOCK)
    assert p.grid == -(-1_000_000 // (dispatch.ROWS_BLOCK // G))
    assert "128 contiguous bytes" in p.describe() or K < dispatch.FEW_FLOAT4S_K


@pytest.mark.parametrize("K,rows,G,loads", [(1, 512, 1, 4), (4, 512, 1, 4), (5, 512, 1, 5), (8, 512, 1, 8),
                                            (9, 256, 1, 4), (16, 256, 1, 4), (17, 128, 1, 5), (24, 128, 1, 6),
                                            (32, 128, 1, 8), (33, 64, 1, 9), (40, 64, 1, 10), (48, 64, 1, 12),
                                            (49, 64, 2, 7), (50, 64, 2, 7), (64, 64, 2, 8)])
def test_many_rows_of_at_most_64_floats_are_loaded_as_tiles(K, rows, G, loads):
    """More than one trip of data in rows of at most TILE_MAX_K floats: row_tiles, as many rows
    per tile (4,096 floats) as fit of 512, 256, 128 and 64, with 1 lane and 4 rows per thread
    (128 threads), 1 lane per row (256, 128 and 64 threads), and 2 lanes per row (128 threads)
    where one lane would take more than 12 loads; loaded in one trip: 4 float4 loads per thread,
    or as many as the tile takes (K = 17: 2,176 floats, 544 float4s over 128 threads, 5 each), the
    tile then sized to its rows."""
    p = choose(4_000_000, K)
    assert (p.kernel, p.lanes_per_row, p.block // p.lanes_per_row * p.rows_per_group) == ("row_tiles", G, rows)
    assert p.loads == loads and p.name == f"row_tiles<{G}, {p.rows_per_group}, {loads}>"
    assert ("sized to the tile" in p.describe()) == (loads > 4)
    assert p.rows_per_group == (4 if rows == 512 else 1) and p.variant in dispatch.variants_in_use()["row_tiles"]
    assert p.grid == -(-4_000_000 // rows)
    assert dispatch.tile_fits(rows, K, K) and "one stretch" in p.describe()


def test_tiles_need_more_than_one_trip_and_nearly_contiguous_rows():
    assert choose(20_000, 33).kernel == "rows_per_warp"  # little data: one trip per lane instead
    assert choose(4_000_000, 50, lda=51).kernel == "row_tiles"  # 1 float in 51 read and unused
    assert choose(4_000_000, 50, lda=60).kernel == "rows_per_warp"  # 10 in 60: too many
    assert choose(4_000_000, 65).kernel == "rows_per_warp"  # B would not fit the tile kernel's copy
    assert choose(1, 50).kernel == "rows_per_warp"


@pytest.mark.parametrize("M,K,G", [(1, 1, 4), (5, 3, 4), (16, 128, 8), (100, 100, 8), (8192, 128, 8),
                                   (1000, 500, 32), (16, 1024, 32), (1024, 1024, 32)])
def test_little_data_gets_one_trip_per_lane(M, K, G):
    """A that fits in one trip of every resident thread (16 floats each): lanes enough for at
    most 16 floats per lane, between 4 and 32."""
    p = choose(M, K)
    assert (p.kernel, p.lanes_per_row) == ("rows_per_warp", G)
    assert "one trip" in p.describe()
    assert -(-K // G) <= dispatch.FLOATS_PER_TRIP or G == 32


def test_the_regime_boundary_follows_the_gpu():
    """The same shape can be little data for the H200 (132 SMs) and more than one trip for a T4."""
    assert "one trip" in choose(8192, 128).describe()
    assert "one trip" not in choose(8192, 128, device=T4).describe()


def test_long_rows_with_enough_rows_get_one_block_per_row():
    p = choose(2048, 1 << 20)  # the headline shape
    assert (p.kernel, p.splits, p.grid, p.loads) == ("split_k", 1, 2048, dispatch.LOADS)
    assert choose(16384, 16384).splits == 1 and choose(2100, 4099).kernel == "split_k"
    # 700 rows: 5.3 blocks of 8 warps per SM, 42 of 64 warp slots: enough in flight, no split
    assert choose(700, 400_000).splits == 1


def test_rows_whose_last_wave_is_part_full_are_split():
    """Enough rows to keep the SMs busy, but in more than one wave of 1,056 blocks with the last
    under FULL_LAST_WAVE full: split for at least BUSY_SPLIT_WAVES waves. One wave, a last wave that
    full, or SPLIT_BELOW_WAVES waves or more: no."""
    for M, K, S in ((1100, 240_000, 8), (1200, 200_000, 8), (1500, 160_000, 6), (2200, 100_000, 4)):
        p = choose(M, K)
        assert (p.kernel, p.splits, p.rows_per_block) == ("split_k", S, 1), (M, K, p.describe())
        assert "full (under 75%)" in p.describe()
    for M, K in ((700, 400_000), (1024, 262_144), (2048, 131_072), (3000, 80_000), (5000, 80_000)):
        p = choose(M, K)
        assert p.splits == 1 and "one block per row" in p.describe(), (M, K)
    assert choose(1100, 12_000).splits == 1  # stretches of at least MIN_CHUNK floats: no room to split


def test_rows_at_different_offsets_from_b_are_split_even_in_one_wave():
    """Odd K: split below SPLIT_BELOW_WAVES waves of rows, even inside one wave."""
    for M, K, S in ((600, 400_003, 15), (1024, 262_147, 9), (2048, 131_075, 5), (1300, 180_001, 7)):
        p = choose(M, K)
        assert (p.splits, p.b_vec) == (S, False) and "different offsets from B" in p.describe(), (M, K)
    assert choose(3000, 80_001).splits == 1
    # a view one float into its storage: every row at the same offset from B, split as if aligned
    assert choose(1024, 262_144, a=4).splits == 1 and choose(1100, 240_000, a=4).splits == 8


def test_few_rows_are_split_into_about_four_waves():
    for M, K in ((16, 1 << 24), (128, 1 << 21), (1, 1 << 26), (3, 10_000_001), (50, 5_000_000)):
        p = choose(M, K)
        assert p.kernel == "split_k" and p.splits > 1, (M, K)
        occ = lab.kernels.stage_occupancy(lab.kernels.SPLIT_K, p.block, p.variant, H200.limits)
        slots = 132 * occ.blocks_per_sm
        waves = p.grid / slots
        # about four waves, fewer only where stretches of MIN_CHUNK floats run out (3 rows share one
        # block of 4 at 3 x 10,000,001: 1220 stretches, 2.3 waves)
        assert waves <= dispatch.TARGET_WAVES, p.describe()
        assert dispatch.TARGET_WAVES - 1 < waves or p.splits == K // dispatch.MIN_CHUNK, p.describe()
        assert p.chunk % 4 == 0 and p.chunk * p.splits >= K > p.chunk * (p.splits - 1)
        assert "stretches" in p.describe()


def test_few_rows_at_different_offsets_from_b_are_split_into_about_twelve_waves():
    """Odd K, one row per block: UNEVEN_WAVES (12) instead of TARGET_WAVES, or as many stretches as
    MIN_CHUNK allows. Aligned rows, and blocks of several rows, keep about four waves."""
    for M, K, S in ((500, 1_000_001, 25), (200, 2_000_001, 63), (128, 2_097_153, 99), (100, 1_000_001, 122),
                    (64, 1_000_003, 122)):
        p = choose(M, K)
        assert (p.kernel, p.splits, p.rows_per_block, p.b_vec) == ("split_k", S, 1, False), (M, K, p.describe())
        assert f"aimed at {dispatch.UNEVEN_WAVES}" in p.describe()
        waves = p.grid / (132 * 8)
        assert waves <= dispatch.UNEVEN_WAVES and (waves > dispatch.UNEVEN_WAVES - 1 or S == K // dispatch.MIN_CHUNK)
    assert choose(500, 1_000_000).splits == 8 and choose(128, 1 << 21).splits == 33  # aligned: about 4 waves
    assert choose(3, 50_000_001).splits == 2112  # four rows per block: about 4 waves
    assert "aimed at" not in choose(500, 1_000_000).describe()


def test_few_rows_aligned_like_b_share_a_large_b_two_rows_per_block():
    for M, K in ((2, 40_000_000), (3, 50_000_000), (16, 1 << 24), (50, 5_000_000), (127, 1 << 22)):
        p = choose(M, K)
        assert (p.rows_per_block, p.loads, p.b_vec) == (dispatch.SHARE_B_ROWS, dispatch.SHARE_B_LOADS, True), (M, K)
        assert p.grid == -(-M // 2) * p.splits and "share" in p.describe()
    assert choose(128, 1 << 22).rows_per_block == 1  # 128 rows or more: one row per block
    assert choose(64, 1_000_000).rows_per_block == 1  # B (4 MB) well inside the L2
    assert choose(1, 1 << 26).rows_per_block == 1  # one row


def test_few_rows_not_aligned_like_b_share_a_large_b_four_rows_per_block():
    for M, K in ((3, 50_000_001), (40, 6_000_001), (16, (1 << 24) + 1), (2, 40_000_002)):
        p = choose(M, K)
        assert (p.rows_per_block, p.loads, p.b_vec) == (
            dispatch.SHARE_B_ROWS_SHUFFLED, dispatch.SHARE_B_LOADS_SHUFFLED, False), (M, K)
        assert p.grid == -(-M // 4) * p.splits and "shuffles" in p.describe()
        assert p.variant in dispatch.variants_in_use()["split_k"]
    # a view one float into its storage: rows aligned alike, B not
    p = choose(8, 30_000_000, a=4)
    assert (p.rows_per_block, p.b_vec) == (dispatch.SHARE_B_ROWS_SHUFFLED, False)
    assert choose(64, 1_000_003).rows_per_block == 1  # B (4 MB) well inside the L2
    assert choose(128, (1 << 22) + 1).rows_per_block == 1
    # every stretch the rule gives several rows is far under dot_rows_shuffled's 2^31 floats
    assert choose(100, 1 << 34).chunk < 1 << 31
    assert choose(2048, 1 << 20).rows_per_block == 1  # not split


@pytest.mark.parametrize("M,K,S", [(1, 65536, 32), (16, 65536, 32), (1, 1 << 20, 512)])
def test_little_data_that_is_split_gets_one_trip_per_thread(M, K, S):
    """A that fits in one trip of every resident thread: where the rule splits at all, stretches
    of ONE_TRIP floats (2,048: 256 threads x 2 float4s)."""
    p = choose(M, K)
    assert (p.splits, p.chunk) == (S, dispatch.ONE_TRIP) and "one trip per thread" in p.describe()


def test_little_data_that_fits_one_block_per_row_is_not_split():
    """1 x 8192 is one block: splitting it would add the reduce's launch."""
    assert choose(1, 8192).splits == 1 and choose(128, 65536).chunk > dispatch.ONE_TRIP


def test_split_count_follows_the_sm_count():
    """The same shape on a GPU with fewer SMs gets fewer stretches."""
    assert choose(1, 1 << 26, device=T4).splits < choose(1, 1 << 26).splits


def test_stretches_are_never_shorter_than_min_chunk():
    """(Beyond one trip of the resident threads: 200 x 24,576 is 4.9 M floats.)"""
    p = choose(200, 3 * dispatch.MIN_CHUNK)
    assert p.splits == 3 and p.chunk >= dispatch.MIN_CHUNK


def test_b_larger_than_the_l2_forces_stretches():
    """2000 rows would fill the GPU alone, but B (256 MiB) would not stay in the L2 between the
    rows that share it: the rule cuts it into stretches of at most a quarter of the L2."""
    p = choose(2000, 1 << 26)
    assert p.splits >= -(-(4 << 26) // int(dispatch.B_SHARE_OF_L2 * H200.l2_bytes))
    assert "L2" in p.describe()


@pytest.mark.parametrize("K,lda,a,b,b_vec", [
    (4096 + 4, None, 0, 0, True),     # aligned rows, aligned B
    (4096 + 4, None, 4, 4, True),     # A and B both 4 bytes past a boundary: aligned alike
    (4096 + 4, None, 4, 0, False),    # B aligned, rows not
    (4099, None, 0, 0, False),        # K % 4 != 0: rows start at different offsets
    (8192, 8193, 0, 0, False),        # a column slice: row stride not a multiple of 4
    (8192, 8196, 0, 0, True),
])
def test_b_is_read_as_float4_only_where_aligned_like_the_rows(K, lda, a, b, b_vec):
    assert choose(5000, K, lda, a, b).b_vec is b_vec


def test_one_row_needs_no_row_alignment():
    assert choose(1, 4099 * 100, 4099 * 100, 8, 8).b_vec


def test_layout_accepts_views_and_refuses_what_it_cannot_read():
    big = torch.rand(10, 20)
    assert dispatch.layout(big[:, 3:], torch.rand(17), require_cuda=False) == (10, 17, 20)
    assert dispatch.layout(big.view(-1)[5:105].view(10, 10), torch.rand(10, 1), require_cuda=False) == (10, 10, 10)
    for A, B, msg in [(big.t(), torch.rand(10), "contiguous"), (big, torch.rand(19), "shape"),
                      (big.double(), torch.rand(20), "float32"), (big[0], torch.rand(20), "2-D"),
                      ([[1.0]], torch.rand(1), "not a torch.Tensor")]:
        with pytest.raises(lab.GemvInputError, match=msg):
            dispatch.layout(A, B, require_cuda=False)
    with pytest.raises(lab.GemvInputError, match="CPU"):
        dispatch.layout(big, torch.rand(20))


def test_gemv_refuses_cpu_tensors_before_anything_runs():
    with pytest.raises(lab.GemvInputError, match="CPU"):
        lab.gemv(torch.rand(4, 8), torch.rand(8))
    with pytest.raises(lab.GemvInputError, match="stage="):
        lab.gemv(torch.rand(4, 8), torch.rand(8), block=256)


def test_explain_on_cpu_tensors_uses_the_recorded_gpu():
    text = lab.explain(torch.rand(16, 20_000), torch.rand(20_000, 1))
    assert "split_k" in text and "recorded NVIDIA H200" in text and "132 SMs" in text
    assert repr(text) == str(text)  # shows as text in a notebook
    assert "B is strided" in lab.explain(torch.rand(3, 50), torch.rand(100)[::2])


def test_every_plan_the_rule_makes_is_consistent():
    """Over a grid of shapes: grids within CUDA's limit, every row covered by exactly one block
    (or by splits stretches), and no plan names a kernel variant that is not compiled."""
    for M in (1, 2, 7, 16, 100, 131, 1000, 5000, 100_000, 10**6):
        for K in (1, 2, 5, 33, 128, 1000, 4096, 4097, 65536, 10**6 + 1, 10**7):
            if M * K > 2**34:
                continue
            p = choose(M, K)
            assert p.grid <= 2**31 - 1
            if p.kernel == "split_k":
                assert p.variant in lab.kernels.SPLIT_K.variants and p.grid == -(-M // p.rows_per_block) * p.splits
                assert p.chunk * (p.splits - 1) < K <= p.chunk * p.splits
            elif p.kernel == "row_tiles":
                rows = p.block // p.lanes_per_row * p.rows_per_group
                assert p.variant in lab.kernels.ROW_TILES.variants and dispatch.tile_fits(rows, K, K)
                assert p.grid * rows >= M
            else:
                assert p.variant in lab.kernels.ROWS_PER_WARP.variants
                assert p.grid * (p.block // p.lanes_per_row) >= M


def test_custom_op_has_a_fake_implementation():
    from gemvlab import ops  # noqa: F401 - registers torch.ops.gemvlab.gemv

    A, B = torch.empty(7, 33, device="meta"), torch.empty(33, 1, device="meta")
    assert torch.ops.gemvlab.gemv(A, B).shape == (7, 1)
    assert torch.ops.gemvlab.gemv(A, torch.empty(33, device="meta")).shape == (7,)
    torch.library.opcheck(torch.ops.gemvlab.gemv.default, (A, B), test_utils=("test_schema",))
