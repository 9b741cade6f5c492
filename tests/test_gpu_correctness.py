"""Every stage against float64 on random shapes (run on the GPU machine; skipped without CUDA)."""

import pytest
import torch

import gemvlab as lab
from gemvlab.measure.accuracy import random_inputs, reference, relative_error
from gemvlab.measure.bench import check

pytestmark = pytest.mark.gpu
TOL = 1e-5  # float32 tree sums land near 1e-7


def tolerance(stage, K):
    """The naive stage adds K terms one after another: its error grows with K (1.5e-4 at 2^20)."""
    return max(TOL, 4e-10 * K) if stage == "naive" else TOL

# (M, K): odd M, K not a multiple of 4 or of the block, M = 1, one long row, many short rows
SHAPES = [(1, 1), (1, 4096), (7, 33), (33, 1000), (129, 4099), (1000, 1), (257, 12345),
          (2048, 4096), (4097, 128), (3, 1 << 20)]


def _configs(st):
    blocks = (32, 64, 256, 1024) if st.block_rule != "any" else (1, 32, 96, 256)
    variants = st.variants if st.template else (0,)
    return [(b, v) for b in blocks for v in variants]


@pytest.mark.parametrize("M,K", SHAPES)
@pytest.mark.parametrize("stage", [s.name for s in lab.STAGES])
def test_stage_matches_float64(gpu, stage, M, K):
    st = lab.get_stage(stage)
    A, B = random_inputs(M, K, seed=M * 7919 + K)
    ref = reference(A, B)
    if st.float4 and K % 4:
        with pytest.raises(lab.GemvInputError, match="multiple of 4"):
            lab.gemv(A, B, st)
        A, B = lab.pad_k(A, B)  # the documented fix
    for block, variant in _configs(st):
        try:
            err = check(st, A, B, block, variant, ref)
        except lab.GemvInputError as e:  # a block that cannot fit (multirow<64> x 1024)
            assert "registers" in str(e)
            continue
        assert err < tolerance(stage, K), f"{stage} block={block} variant={variant}: rel err {err:.2e}"


def test_b_shapes_and_output_shape(gpu):
    A, B = random_inputs(100, 256, seed=1, b_2d=False)
    C1 = lab.gemv(A, B, "warp_shuffle")
    C2 = lab.gemv(A, B.view(-1, 1), "warp_shuffle")
    assert C1.shape == (100,) and C2.shape == (100, 1)
    assert relative_error(C1, reference(A, B)) < TOL


def test_views_with_offsets(gpu):
    big = torch.rand(300, 1028, device="cuda")
    A = big[4:260]  # a row slice: contiguous, starts 4 * 1028 floats in (16-byte aligned)
    Bs = torch.rand(1028 + 8, device="cuda")
    B = Bs[4:4 + 1028]  # starts 16 bytes in: aligned
    for st in lab.STAGES:
        err = relative_error(lab.gemv(A, B, st), reference(A, B))
        assert err < TOL, st.name
    B_bad = Bs[1:1 + 1028]  # 4 bytes in: fine for scalar stages, refused by float4 stages
    assert relative_error(lab.gemv(A, B_bad, "coalesced"), reference(A, B_bad)) < TOL
    with pytest.raises(lab.GemvInputError, match="16"):
        lab.gemv(A, B_bad, "vectorized")
    with pytest.raises(lab.GemvInputError, match="not contiguous"):
        lab.gemv(big[:, 1:], torch.rand(1027, device="cuda"), "naive")


def test_empty_sizes_give_right_answer_without_launch(gpu):
    for st in lab.STAGES:
        assert lab.gemv(torch.rand(0, 64, device="cuda"), torch.rand(64, device="cuda"), st).shape == (0,)
        C = lab.gemv(torch.rand(5, 0, device="cuda"), torch.rand(0, 1, device="cuda"), st)
        assert C.shape == (5, 1) and (C == 0).all()


def test_bad_inputs_raise_before_launch_and_context_survives(gpu):
    A, B = random_inputs(64, 256, seed=3)
    bad = [
        (A.cpu(), B.cpu(), "naive", None, "on the CPU"),
        (A, B.cpu(), "naive", None, "put both on the same GPU|same GPU"),
        (A.double(), B, "naive", None, "float32"),
        (A, B[:100], "naive", None, "shape"),
        (A.t(), torch.rand(64, 1, device="cuda"), "naive", None, "not contiguous"),
        (A, B, "coalesced", 384, "power of two"),
        (A, B, "warp_shuffle", 100, "multiple of 32"),
        (A, B, "multirow", 1024, "registers"),  # with 64 rows: spills, 254 registers
    ]
    for a, b, stage, block, msg in bad:
        variant = 64 if stage == "multirow" else None
        with pytest.raises(lab.GemvInputError, match=msg):
            lab.gemv(a, b, stage, block, variant)
    torch.cuda.synchronize()  # no kernel ran, no sticky error
    assert relative_error(lab.gemv(A, B, "warp_shuffle"), reference(A, B)) < TOL


def test_64bit_offsets_past_2_31_elements(gpu):
    """M * K > 2^31: the last rows sit past any 32-bit offset; every stage must still be right."""
    M, K = 2049, 1 << 20
    if torch.cuda.mem_get_info()[0] < 4 * M * K * 1.6:
        pytest.skip("needs about 14 GB of free GPU memory")
    A, B = random_inputs(M, K, seed=11)
    ref = reference(A, B)
    for st in lab.STAGES:
        block = 1024 if st.name == "naive" else 256  # naive: 3 blocks, about half a second
        out = torch.full((M,), float("nan"), device="cuda")
        C = lab.gemv(A, B, st, block, out=out)
        torch.cuda.synchronize()
        assert relative_error(C, ref) < tolerance(st.name, K), st.name
        last = abs(C[-1].item() - ref[-1].item()) / ref[-1].item()
        assert last < tolerance(st.name, K), f"{st.name}: the last row (offset past 2^31) is wrong"


@pytest.mark.timing
def test_read_ceiling_and_peers_measure(gpu):
    from gemvlab.measure import bench

    A, B = random_inputs(512, 65536, seed=5)
    rows = {r["stage"]: r for r in bench.compare(A, B, [("warp_shuffle", 256, 2)], rounds=2, gemv=True,
                                                 warmup_ms=5, rep_ms=20)}
    assert set(rows) == {"warp_shuffle", "gemv", "torch.matmul", "read ceiling"}
    for r in rows.values():
        assert r["n"] >= 20 and r["min_ms"] <= r["ms"] <= r["max_ms"]
    assert all(rows[k]["rel_err"] < TOL for k in ("warp_shuffle", "gemv", "torch.matmul"))
    assert 0.5 < rows["read ceiling"]["ms"] / rows["warp_shuffle"]["ms"] < 1.2  # near the ceiling, never far above


def test_read_ceiling_passes_run_and_check_their_inputs(gpu):
    from gemvlab.measure.ceiling import ceiling_configs
    from gemvlab.measure.ceiling import launcher as read_ceiling_launcher

    A = torch.rand(64, 4100, device="cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for block, per_sm in ceiling_configs(*A.shape):
        read_ceiling_launcher(A, block, sms * per_sm)()
    torch.cuda.synchronize()
    odd = torch.rand(64, 4099, device="cuda")  # M * K % 4 == 0, K % 4 != 0
    read_ceiling_launcher(odd, 256, sms)()  # the grid pass reads it as one flat array
    with pytest.raises(lab.GemvInputError, match="K % 4"):
        read_ceiling_launcher(odd, 256, 0)
    torch.cuda.synchronize()
