"""The decode path on the GPU: bf16, fp16 and float32 W with 1 to 16 vectors against float64 on
500+ random shapes and layouts within the stated bound, every compiled variant, the same bits on
every run, NaN and inf, linear, out=, autograd, torch.compile and CUDA graphs, the cost of a call.
Skipped without CUDA (run on the GPU machine)."""

import random

import pytest
import torch

import gemvlab as lab
from gemvlab import decode
from gemvlab.gpu.device import Device
from gemvlab.measure.accuracy import relative_error
from gemvlab.measure.decode import error_bound, reference

pytestmark = pytest.mark.gpu
DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def case(N, K, n, dtype, rng, device="cuda"):
    """W (N, K) of dtype with a random row stride and first element, and B (K, n) as a contiguous
    matrix, as x.t() for an activation x (n, K), or with a gap between vectors; (K,) when n == 0."""
    lda = K + rng.choice((0, 0, 1, 3, 8))
    off = rng.choice((0, 0, 1, 2, 5))
    W = torch.rand(N * lda + off + K, device=device).to(dtype)[off:off + N * lda].view(N, lda)[:, :K]
    if n == 0:
        return W, torch.rand(K, device=device).to(dtype)
    layout = rng.choice(("contiguous", "activation", "gap"))
    if layout == "contiguous":
        B = torch.rand(K, n, device=device).to(dtype)
    elif layout == "activation":
        B = torch.rand(n, K, device=device).to(dtype).t()
    else:
        B = torch.rand(n, K + 5, device=device).to(dtype)[:, 1:K + 1].t()
    return W, B


def random_cases(count, seed=0):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        K = rng.choice((rng.randint(1, 64), rng.randint(65, 5000), rng.randint(5000, 40_000)))
        N = rng.randint(1, max(1, min(20_000, 2**24 // K)))
        out.append((N, K, rng.choice((0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16)), rng.choice(DTYPES), rng.randint(0, 2**31)))
    return out


def test_500_random_shapes_and_layouts_within_the_bound(gpu):
    worst = {}
    for N, K, n, dtype, seed in random_cases(520):
        rng = random.Random(seed)
        W, B = case(N, K, n, dtype, rng)
        if dtype == torch.float32 and n <= 1:
            continue  # the float32 dispatcher's (tests/test_gpu_dispatch.py)
        C = lab.gemv(W, B)
        assert C.dtype == dtype and C.shape == ((N,) if n == 0 else (N, n))
        err = relative_error(C.float(), reference(W, B))
        assert err <= error_bound(dtype, K), (N, K, n, dtype, tuple(W.stride()), tuple(B.stride()), err)
        worst[dtype] = max(worst.get(dtype, 0), err / error_bound(dtype, K))
    assert len(worst) == 3, worst


def test_every_compiled_variant(gpu):
    """Each compiled variant of both kernels at several block sizes, on aligned and unaligned rows,
    B contiguous (copied) and as an activation's transpose, at shapes with a partial last tile and a
    K tail; each row and vector checked."""
    device = Device.of()
    dtypes = {0: torch.float32, 1: torch.float16, 2: torch.bfloat16}
    for kernel in decode.KERNELS.values():
        for v in kernel.variants:
            args = kernel.arguments(v)
            dtype = dtypes[args[0]]
            most = 8 * args[1] if kernel is decode.MMA else args[1]
            n = max(1, most - 3)
            for aligned, N, K in ((True, 77, 1000), (False, 77, 999), (True, 5, 4104)):
                W = torch.rand(N, K + 8, device="cuda").to(dtype)[:, (0 if aligned else 1):][:, :K]
                B = torch.rand(n, K, device="cuda").to(dtype).t() if aligned else torch.rand(K, n, device="cuda").to(dtype)
                ref = reference(W, B)
                plan = decode.choose(N, K, n, dtype, W.stride(0), W.data_ptr() % 16, B.stride(0), B.stride(1),
                                     B.data_ptr() % 16, device)
                for block in (32, 128, 256):
                    p = type(plan)(**{**plan.__dict__, "kernel": kernel.name, "variant": v, "block": block})
                    C = decode.make_launch(p, (W.stride(0), B.stride(0), B.stride(1)), (N, n), dtype, W.device)(W, B)
                    rel = ((C.double() - ref).abs() / ref.abs()).max().item()
                    assert rel <= error_bound(dtype, K), (kernel.kernel_name(v), block, aligned, rel)


def test_same_bits_every_run(gpu):
    for dtype in DTYPES:
        for N, K, n in ((14_336, 4096, 4), (1000, 8192, 16), (4099, 333, 3)):
            W, B = torch.rand(N, K, device="cuda").to(dtype), torch.rand(n, K, device="cuda").to(dtype).t()
            first = lab.gemv(W, B)
            for _ in range(3):
                assert torch.equal(lab.gemv(W, B).view(torch.int16 if dtype != torch.float32 else torch.int32),
                                   first.view(torch.int16 if dtype != torch.float32 else torch.int32))


def test_nan_and_inf_propagate(gpu):
    for dtype in DTYPES:
        N, K, n = 64, 4096, 3
        W, B = torch.rand(N, K, device="cuda").to(dtype), torch.rand(K, n, device="cuda").to(dtype)
        W[5, 100] = float("nan")
        W[7, 200] = float("inf")
        B[300, 1] = float("inf")
        C = lab.gemv(W, B).float()
        ref = reference(W, B)
        assert torch.isnan(C[5]).all() and torch.isinf(C[7]).all()
        assert torch.equal(torch.isinf(C), torch.isinf(ref.float())) and torch.equal(torch.isnan(C), torch.isnan(ref))


def test_linear_matches_functional_linear(gpu):
    for dtype in DTYPES:
        W = torch.rand(3000, 2048, device="cuda").to(dtype)
        b = torch.rand(3000, device="cuda").to(dtype)
        for x in (torch.rand(2048, device="cuda").to(dtype), torch.rand(1, 2048, device="cuda").to(dtype),
                  torch.rand(5, 2048, device="cuda").to(dtype)):
            y = lab.linear(x, W, b)
            ref = torch.nn.functional.linear(x.double(), W.double(), b.double())
            assert y.shape == ref.shape and y.dtype == dtype and y.is_contiguous()
            assert relative_error(y.float(), ref) <= error_bound(dtype, 2048) + 2.0**-8


def test_out_autograd_compile_and_graphs(gpu):
    W = torch.rand(4096, 1024, device="cuda").to(torch.bfloat16)
    B = torch.rand(1024, 4, device="cuda").to(torch.bfloat16)
    ref = reference(W, B)
    out = torch.empty(4096, 4, dtype=torch.bfloat16, device="cuda")
    assert lab.gemv(W, B, out=out) is not None and relative_error(out.float(), ref) <= error_bound(torch.bfloat16, 1024)
    Wg, Bg = W.float().requires_grad_(), B.float().requires_grad_()
    lab.gemv(Wg, Bg).sum().backward()
    assert torch.allclose(Wg.grad, B.float().sum(1).expand(4096, -1))
    assert torch.allclose(Bg.grad, W.float().sum(0)[:, None].expand(-1, 4), rtol=1e-4)

    @torch.compile(fullgraph=True)
    def f(W, B):
        return torch.ops.gemvlab.gemv(W, B) * 2

    assert relative_error((f(W, B) / 2).float(), ref) <= error_bound(torch.bfloat16, 1024)
    lab.gemv(W, B)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        C = torch.ops.gemvlab.gemv(W, B)
    W.copy_(torch.rand_like(W, dtype=torch.float32).to(torch.bfloat16))
    graph.replay()
    torch.cuda.synchronize()
    assert relative_error(C.float(), reference(W, B)) <= error_bound(torch.bfloat16, 1024)


def test_bad_inputs_raise_before_launch_and_context_survives(gpu):
    W = torch.rand(64, 256, device="cuda").to(torch.bfloat16)
    for B, says in ((torch.rand(256, 3, device="cuda"), r"B = B\.to\(A\.dtype\)"),
                    (torch.rand(256, 17, device="cuda").to(torch.bfloat16), "chunks"),
                    (torch.rand(256, 2).to(torch.bfloat16), "cuda")):
        with pytest.raises(lab.GemvInputError, match=says):
            lab.gemv(W, B)
    with pytest.raises(lab.GemvInputError, match="dequantize"):
        lab.gemv(W.to(torch.int8), torch.rand(256, 2, device="cuda").to(torch.int8))
    torch.cuda.synchronize()
    assert torch.isfinite(lab.gemv(W, torch.rand(256, 2, device="cuda").to(torch.bfloat16)).float()).all()


@pytest.mark.timing
def test_python_adds_at_most_10_us_per_call(gpu):
    from gemvlab.measure import overhead

    # the least of three samples: noise (a clock ramping, another process) only ever adds time
    result = min((overhead.measure(4096, 4096, dtype=torch.bfloat16, vectors=4) for _ in range(3)),
                 key=lambda r: r["added_us"])
    assert result["added_us"] <= 10, result
