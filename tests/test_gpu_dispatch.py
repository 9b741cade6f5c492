"""The dispatcher on the GPU: every kernel and branch against float64, 500+ random shapes and
layouts, the same bits on every run, torch.compile and CUDA graphs, compute-sanitizer, and the
cost of a call. Skipped without CUDA (run on the GPU machine)."""

import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gemvlab as lab
from gemvlab import dispatch
from gemvlab.measure.accuracy import reference, relative_error
from gemvlab.native import toolchain

pytestmark = pytest.mark.gpu
TOL = 1e-5
ROOT = Path(__file__).resolve().parent.parent


def layout_case(M, K, rng, device="cuda"):
    """A and B for (M, K), in one of the layouts users pass: contiguous, a view that starts
    mid-row (any offset), a column slice (row stride > K), B as (K,) or (K, 1) or strided."""
    kind = rng.choice(["contiguous", "offset", "column_slice"])
    extra = rng.randrange(1, 9) if kind == "column_slice" else 0
    offset = rng.randrange(1, 8) if kind != "contiguous" else 0
    lda = K + extra
    storage = torch.rand(offset + M * lda + 1, device=device)
    A = storage[offset:offset + M * lda].view(M, lda)[:, :K] if M else storage[:0].view(0, K)
    b_kind = rng.choice(["1d", "2d", "offset", "strided"]) if K else "1d"
    if b_kind == "strided":
        B = torch.rand(2 * K, device=device)[::2]
    elif b_kind == "offset":
        B = torch.rand(K + 3, device=device)[rng.randrange(1, 4):][:K]
    else:
        B = torch.rand(K, device=device)
    if b_kind == "2d" or (b_kind == "offset" and rng.random() < 0.5):
        B = B.reshape(K, 1)
    return A, B, f"{kind} (lda {lda}, offset {offset}), B {b_kind}"


def random_shapes(n, seed=0, max_elements=2**28):
    """M log-uniform in 1..1e6, K log-uniform in 1..1e8, within max_elements, about a third with
    odd K; plus the edges."""
    rng = random.Random(seed)
    shapes = [(1, 1), (1, 3), (3, 1), (1, 100_000_001 // 4), (1_000_000, 1), (1_000_000, 7), (17, 5_000_003)]
    while len(shapes) < n:
        M = int(math.exp(rng.uniform(0, math.log(1e6))))
        K = int(math.exp(rng.uniform(0, math.log(1e8))))
        if M * K > max_elements:
            continue
        if rng.random() < 0.35:
            K |= 1
        shapes.append((M, K))
    return shapes


def test_500_random_shapes_and_layouts_match_float64(gpu):
    rng = random.Random(1)
    failures = []
    for M, K in random_shapes(520):
        A, B, how = layout_case(M, K, rng)
        C = lab.gemv(A, B)
        assert C.shape == ((M, 1) if B.dim() == 2 else (M,)), how
        err = relative_error(C, reference(A, B)) if M else 0.0
        if not err < TOL:
            failures.append(f"M={M} K={K} {how} {dispatch.plan_for(A, B)[0].name}: {err:.2e}")
        del A, B, C
    assert not failures, "\n".join(failures[:20])


def test_the_largest_shapes(gpu):
    """K = 10^8 in one row, and a million rows, past 2^31 elements in total."""
    for M, K in ((1, 100_000_000), (1_000_000, 2100)):
        if torch.cuda.mem_get_info()[0] < 4 * M * K * 2.5:
            pytest.skip("not enough GPU memory")
        A, B = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
        assert relative_error(lab.gemv(A, B), reference(A, B)) < TOL
        del A, B
    M, K = 2049, 1 << 20  # the last rows start past 2^31 floats
    A, B = torch.rand(M, K, device="cuda"), torch.rand(K, 1, device="cuda")
    C, ref = lab.gemv(A, B), reference(A, B)
    assert abs(C[-1].item() - ref[-1].item()) / ref[-1].item() < TOL


def compiled_plans(M, K, b_vec, device):
    """A plan for every compiled variant that takes M x K (gemvlab selftest's list)."""
    from gemvlab.cli.selftest import plans

    return plans(M, K, b_vec, device)


@pytest.mark.parametrize("M,K,aligned", [(37, 4099, False), (64, 8192, True), (5, 130_001, False), (300, 96, True),
                                         (700, 33, False), (513, 8, True)])
def test_each_compiled_variant_matches_float64(gpu, M, K, aligned):
    device = dispatch.Device.of()
    storage = torch.rand(M * K + 3, device="cuda")
    A = (storage[:M * K] if aligned else storage[1:1 + M * K]).view(M, K)
    B = torch.rand(K, device="cuda")
    ref = reference(A, B)
    for plan in compiled_plans(M, K, aligned and K % 4 == 0, device):
        C = dispatch.make_launch(plan, K, False, A.device)(A, B)
        assert relative_error(C, ref) < TOL, plan.name


def test_row_tiles_at_every_loads_per_trip_and_offset(gpu):
    """row_tiles at every compiled variant (more than 4 loads: the tile in shared memory sized to its
    rows, the trips counted per warp), A starting at every offset from a 16-byte boundary and a
    last tile of a few rows; each row checked."""
    device = dispatch.Device.of()
    kernel = dispatch.KERNELS["row_tiles"]
    for K in (1, 5, 8, 17, 24, 31, 32, 33, 39, 45, 48, 50, 64):
        for g, r, u in map(kernel.arguments, kernel.variants):
            for block in (64, 128):
                rows = block // g * r
                if not dispatch.tile_fits(rows, K, K):
                    continue
                M = 3 * rows + 5
                for a_off in range(4):
                    A = torch.rand(M * K + 8, device="cuda")[a_off:a_off + M * K].view(M, K)
                    B = torch.rand(K, device="cuda")
                    ref = reference(A, B).reshape(-1)
                    plan = dispatch.make_plan(M, K, "row_tiles", device, False, block, u, lanes_per_row=g,
                                              rows_per_group=r)
                    C = dispatch.make_launch(plan, K, False, A.device)(A, B).reshape(-1).double()
                    worst = ((C - ref).abs() / ref).max().item()
                    assert worst < 1e-5, (plan.name, block, K, a_off, worst)


def test_rows_sharing_b_at_every_offset(gpu):
    """split_k with several rows per block where rows and B start at every offset from a 16-byte
    boundary (dot_rows_shuffled: B's float4s shifted into place per row), with stretches from 4
    floats up, so that rows with no body, one float4 and a few float4s all occur; each row is
    checked (non-negative inputs: a row's error is |C - ref| / ref)."""
    device = dispatch.Device.of()
    for M, K in ((5, 4099), (7, 1001), (3, 45), (9, 130_003)):
        for a_off in range(4):
            for b_off in range(4):
                storage = torch.rand(M * K + 8, device="cuda")
                A = storage[a_off:a_off + M * K].view(M, K)
                B = torch.rand(K + 8, device="cuda")[b_off:b_off + K]
                ref = reference(A, B).reshape(-1)
                for rows, loads in ((4, 1),):  # the compiled variant with B not aligned like the rows
                    for splits in sorted({1, 3, -(-K // 4), -(-K // 8), -(-K // 40)}):
                        b_vec = False
                        plan = dispatch.make_plan(M, K, "split_k", device, b_vec, 256, loads, splits,
                                                  rows_per_block=rows)
                        C = dispatch.make_launch(plan, K, False, A.device)(A, B).reshape(-1).double()
                        worst = ((C - ref).abs() / ref).max().item()
                        assert worst < 1e-5, (plan.name, M, K, a_off, b_off, splits, worst)


def test_an_infinity_in_b_gives_infinity_not_nan(gpu):
    """A positive A times a B holding +inf is +inf in every row, as torch.matmul gives it: no
    kernel may multiply a zero of A (a row's missing float4, a padding row) by that infinity."""
    device = dispatch.Device.of()
    for M, K in ((5, 4099), (3, 45), (9, 1001)):
        for a_off, b_off in ((1, 0), (0, 3), (2, 1)):
            A = (torch.rand(M * K + 8, device="cuda") + 0.5)[a_off:a_off + M * K].view(M, K)
            for where in (0, K // 2, K - 1, K - 5):
                B = torch.rand(K + 8, device="cuda")[b_off:b_off + K].clone()
                B[where] = float("inf")
                for plan in compiled_plans(M, K, False, device):
                    C = dispatch.make_launch(plan, K, False, A.device)(A, B)
                    assert torch.isinf(C).all() and not torch.isnan(C).any(), (plan.name, M, K, a_off, b_off, where)


def test_same_bits_every_run(gpu):
    for M, K in ((1, 33_554_432), (16, 4_000_001), (2048, 65536), (100_000, 300), (4096, 4099)):
        A, B = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
        first = lab.gemv(A, B)
        for _ in range(3):
            assert torch.equal(lab.gemv(A, B), first), (M, K, dispatch.plan_for(A, B)[0].name)


def test_bad_inputs_raise_before_launch_and_context_survives(gpu):
    A, B = torch.rand(64, 300, device="cuda"), torch.rand(300, device="cuda")
    for a, b, msg in [(A.cpu(), B.cpu(), "CPU"), (A, B.cpu(), "same GPU"), (A.double(), B, "float32"),
                      (A, B[:7], "shape"), (A.t(), torch.rand(64, device="cuda"), "contiguous"),
                      (A[None], B, "2-D")]:
        with pytest.raises(lab.GemvInputError, match=msg):
            lab.gemv(a, b)
    torch.cuda.synchronize()
    assert relative_error(lab.gemv(A, B), reference(A, B)) < TOL


def test_out_and_autograd(gpu):
    A, B = torch.rand(300, 5000, device="cuda"), torch.rand(5000, 1, device="cuda")
    out = torch.empty(300, 1, device="cuda")
    assert lab.gemv(A, B, out=out).data_ptr() == out.data_ptr()
    assert relative_error(out, reference(A, B)) < TOL
    A.requires_grad_(True)
    B.requires_grad_(True)
    lab.gemv(A, B).sum().backward()
    assert torch.allclose(A.grad, B.detach().reshape(1, -1).expand(300, -1))
    assert torch.allclose(B.grad.reshape(-1), A.detach().sum(0), rtol=1e-4)


def test_torch_compile_and_cuda_graphs(gpu):
    A, B = torch.rand(1000, 70_000, device="cuda"), torch.rand(70_000, device="cuda")
    ref = reference(A, B)

    @torch.compile(fullgraph=True)
    def f(A, B):
        return torch.ops.gemvlab.gemv(A, B) * 2

    assert relative_error(f(A, B) / 2, ref) < TOL
    static_A, static_B = A.clone(), B.clone()
    lab.gemv(static_A, static_B)  # warm-up outside the capture (loads the module, caches the plan)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_C = torch.ops.gemvlab.gemv(static_A, static_B)
    static_A.copy_(torch.rand_like(A))
    graph.replay()
    torch.cuda.synchronize()
    assert relative_error(static_C, reference(static_A, static_B)) < TOL
    for M, K in ((4, 3_000_000), (50_000, 100)):  # a split (two kernels) and a short-row plan
        A2, B2 = torch.rand(M, K, device="cuda"), torch.rand(K, device="cuda")
        lab.gemv(A2, B2)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            C2 = lab.gemv(A2, B2)
        g.replay()
        torch.cuda.synchronize()
        assert relative_error(C2, reference(A2, B2)) < TOL


@pytest.mark.timing
def test_python_adds_at_most_10_us_per_call(gpu):
    """CUDA events around the whole lab.gemv(A, B) call, against events around the launch alone."""
    from gemvlab.measure import overhead

    result = overhead.measure(4096, 4096)
    assert result["added_us"] <= 10, result


def test_dispatcher_kernels_are_clean_under_compute_sanitizer(gpu):
    tool = toolchain.find_tool("compute-sanitizer")
    if not tool:
        pytest.skip("no compute-sanitizer")
    for which in ("memcheck", "racecheck"):
        run = subprocess.run([tool, "--tool", which, "--error-exitcode", "3", sys.executable, "-m", "gemvlab",
                              "selftest"], capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)
        summary = [ln for ln in run.stdout.splitlines() if "SUMMARY" in ln]
        assert run.returncode == 0 and "selftest ok" in run.stdout, (which, run.stdout[-3000:], run.stderr[-2000:])
        assert summary and ("0 errors" in summary[-1] or "0 hazards" in summary[-1]), summary
