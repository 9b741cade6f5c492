"""Every launch check, on the CPU: each raises GemvInputError naming the fix, before any launch."""

import pytest
import torch

import gemvlab as lab
from gemvlab import checks
from gemvlab.stages.launch import check_inputs


def operands(A, B, require_cuda=False):
    """The stage path's view of the one validator: (M, K)."""
    return checks.operands(A, B, any_row_stride=False, require_cuda=require_cuda)[:2]


def tensors(M=8, K=16):
    return torch.rand(M, K), torch.rand(K, 1)


def test_cpu_tensors_are_refused_with_the_fix():
    A, B = tensors()
    with pytest.raises(lab.GemvInputError, match=r"on the CPU.*illegal memory access.*A = A\.cuda\(\)"):
        lab.gemv(A, B, "naive")


def test_not_tensors():
    with pytest.raises(lab.GemvInputError, match="not a torch.Tensor"):
        operands([[1.0]], torch.rand(1), require_cuda=False)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int32])
def test_other_dtypes(dtype):
    A, B = tensors()
    with pytest.raises(lab.GemvInputError, match=r"float32.*A = A\.float\(\)"):
        operands(A.to(dtype), B, require_cuda=False)


def test_shapes():
    A, B = tensors(8, 16)
    with pytest.raises(lab.GemvInputError, match="2-D"):
        operands(A.view(-1), B, require_cuda=False)
    for bad in (torch.rand(15), torch.rand(16, 2), torch.rand(1, 16), torch.rand(16, 1, 1)):
        with pytest.raises(lab.GemvInputError, match=r"B must have shape \(16,\) or \(16, 1\)"):
            operands(A, bad, require_cuda=False)
    assert operands(A, torch.rand(16), require_cuda=False) == (8, 16)
    assert operands(A, B, require_cuda=False) == (8, 16)


def test_different_devices():
    A = torch.rand(8, 16)
    B = torch.empty(16, device="meta")
    with pytest.raises(lab.GemvInputError, match="same GPU"):
        operands(A, B, require_cuda=False)


def test_non_contiguous():
    A = torch.rand(16, 8).t()
    with pytest.raises(lab.GemvInputError, match=r"not contiguous.*A\.contiguous\(\)"):
        operands(A, torch.rand(16), require_cuda=False)
    with pytest.raises(lab.GemvInputError, match="not contiguous"):
        operands(torch.rand(8, 17)[:, 1:], torch.rand(16), require_cuda=False)
    B = torch.rand(32)[::2]
    with pytest.raises(lab.GemvInputError, match=r"B\.contiguous\(\)"):
        operands(torch.rand(8, 16), B, require_cuda=False)


def test_misaligned_pointers():
    A, _ = tensors(8, 16)
    storage = torch.rand(17)
    B = storage[1:]  # contiguous, but 4 bytes past an aligned address
    assert B.is_contiguous() and B.data_ptr() % 16 == 4
    with pytest.raises(lab.GemvInputError, match=r"not a multiple of 16.*B\.clone\(\)"):
        checks.check_alignment(A, B, 16)
    A_view = torch.rand(8 * 16 + 1)[1:].view(8, 16)
    with pytest.raises(lab.GemvInputError, match=r"A\.clone\(\)"):
        check_inputs(A_view, torch.rand(16), "vectorized", 256, 0, require_cuda=False)
    # the scalar stages take it
    assert check_inputs(A_view, B, "coalesced", 256, 0, require_cuda=False) == (8, 16)


def test_k_not_multiple_of_4():
    A, B = tensors(8, 18)
    for stage in ("vectorized", "warp_shuffle", "multirow"):
        with pytest.raises(lab.GemvInputError, match=r"K = 18 is not a multiple of 4.*pad_k"):
            check_inputs(A, B, stage, 256, lab.get_stage(stage).default, require_cuda=False)
    for stage in ("naive", "coalesced"):
        assert check_inputs(A, B, stage, 256, 0, require_cuda=False) == (8, 18)


def test_pad_k_keeps_the_product():
    A, B = tensors(8, 18)
    A2, B2 = lab.pad_k(A, B)
    assert A2.shape == (8, 20) and B2.shape == (20, 1)
    assert torch.allclose(A2 @ B2, A @ B)


@pytest.mark.parametrize("block,stage,msg", [
    (0, "naive", "1 to 1024"), (1025, "coalesced", "1 to 1024"), (384, "coalesced", "power of two"),
    (96, "vectorized", "power of two"), (100, "warp_shuffle", "multiple of 32"),
    (48, "multirow", "multiple of 32"), (256.0, "naive", "must be an int"), (True, "naive", "must be an int"),
])
def test_block_rules(block, stage, msg):
    A, B = tensors()
    with pytest.raises(lab.GemvInputError, match=msg):
        check_inputs(A, B, stage, block, lab.get_stage(stage).default, require_cuda=False)


def test_block_rules_accept():
    A, B = tensors()
    check_inputs(A, B, "naive", 96, 0, require_cuda=False)
    check_inputs(A, B, "warp_shuffle", 96, 4, require_cuda=False)
    check_inputs(A, B, "coalesced", 1024, 0, require_cuda=False)


def test_variants():
    A, B = tensors()
    with pytest.raises(lab.GemvInputError, match="loads per trip"):
        check_inputs(A, B, "warp_shuffle", 256, 3, require_cuda=False)
    with pytest.raises(lab.GemvInputError, match="rows per block"):
        check_inputs(A, B, "multirow", 256, 5, require_cuda=False)


def test_register_limit_is_checked_before_launch():
    from gemvlab.gpu.occupancy import HOPPER
    from gemvlab.stages.launch import check_fits

    st = lab.get_stage("multirow")
    with pytest.raises(lab.GemvInputError, match=r"registers.*too many resources.*block <= \d+"):
        check_fits(st, 1024, 32, HOPPER)  # 168 registers x 1024 threads > 65536
    check_fits(st, 256, 32, HOPPER)


def test_grid_past_2_31_blocks_is_refused():
    A = torch.empty(2**31, 4, device="meta")  # a shape only: no memory
    B = torch.empty(4, device="meta")
    with pytest.raises(lab.GemvInputError, match="grid.x"):
        check_inputs(A, B, "coalesced", 256, 0, require_cuda=False)
    # the naive stage launches M / block blocks, and multirow M / rows: both fit
    assert check_inputs(A, B, "naive", 256, 0, require_cuda=False) == (2**31, 4)
    assert check_inputs(A, B, "multirow", 256, 4, require_cuda=False) == (2**31, 4)


def test_empty_sizes_skip_the_launch_checks():
    A = torch.rand(0, 6)
    assert check_inputs(A, torch.rand(6), "vectorized", 256, 0, require_cuda=False) == (0, 6)
    A = torch.rand(5, 0)
    assert check_inputs(A, torch.rand(0, 1), "multirow", 256, 4, require_cuda=False) == (5, 0)


def test_out_tensor():
    A, B = tensors()
    with pytest.raises(lab.GemvInputError, match="8 elements"):
        check_inputs(A, B, "naive", 32, 0, out=torch.empty(7), require_cuda=False)
    with pytest.raises(lab.GemvInputError, match="float32"):
        check_inputs(A, B, "naive", 32, 0, out=torch.empty(8, dtype=torch.float64), require_cuda=False)


def test_unknown_stage():
    with pytest.raises(lab.GemvInputError, match="no stage"):
        lab.get_stage("fastest")
    assert lab.get_stage(4).name == "warp_shuffle" and lab.get_stage("multirow").number == 5


MISTAKES = {
    "not a tensor": lambda: ([[1.0]], torch.rand(1)),
    "float64": lambda: (torch.rand(8, 16, dtype=torch.float64), torch.rand(16)),
    "1-D A": lambda: (torch.rand(16), torch.rand(16)),
    "B too short": lambda: (torch.rand(8, 16), torch.rand(15)),
    "two devices": lambda: (torch.rand(8, 16), torch.empty(16, device="meta")),
    "a transpose": lambda: (torch.rand(16, 8).t(), torch.rand(16)),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_the_stage_path_and_the_dispatcher_say_the_same_for_the_same_mistake(mistake):
    from gemvlab.dispatch import plan_for

    messages = []
    for check in (lambda A, B: check_inputs(A, B, "coalesced", 256, 0, require_cuda=False), plan_for):
        with pytest.raises(lab.GemvInputError) as e:
            check(*MISTAKES[mistake]())
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_only_the_dispatcher_takes_row_strides_and_strided_b():
    from gemvlab.dispatch import plan_for

    A, B = torch.rand(8, 20)[:, :16], torch.rand(32)[::2]
    with pytest.raises(lab.GemvInputError, match=r"rows are 20 floats apart.*without a stage"):
        check_inputs(A, torch.rand(16), "coalesced", 256, 0, require_cuda=False)
    with pytest.raises(lab.GemvInputError, match=r"B is not contiguous.*without a stage"):
        check_inputs(torch.rand(8, 16), B, "coalesced", 256, 0, require_cuda=False)
    plan, lda = plan_for(A, B)
    assert (plan.M, plan.K, lda) == (8, 16, 20)
