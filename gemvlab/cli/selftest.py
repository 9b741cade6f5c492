"""``python -m gemvlab selftest``: every compiled dispatcher variant, the decode kernels' included,
on small inputs of every layout, checked against float64. Small on purpose: it is what compute-sanitizer (memcheck,
racecheck) runs in the GPU tests, where every access is checked and a launch is slow."""

from __future__ import annotations

import torch


def plans(M: int, K: int, b_vec: bool, device) -> list:
    """A plan for every compiled variant of every dispatcher kernel that can take M x K (B as float4s
    only where `b_vec`), at the rule's block sizes and others."""
    from ..dispatch import KERNELS, make_plan, tile_fits, tuning

    out = []
    for g, b in map(KERNELS["rows_per_warp"].arguments, KERNELS["rows_per_warp"].variants):
        if b_vec or not b:
            out += [make_plan(M, K, "rows_per_warp", device, bool(b), block, lanes_per_row=g)
                    for block in (tuning.ROWS_BLOCK, 256)]
    for loads, b, rows in map(KERNELS["split_k"].arguments, KERNELS["split_k"].variants):
        if b_vec or not b:
            out += [make_plan(M, K, "split_k", device, bool(b), block, loads, splits, rows_per_block=rows)
                    for block, splits in ((256, 1), (256, 3), (64, 3))]
    for g, r, u in map(KERNELS["row_tiles"].arguments, KERNELS["row_tiles"].variants):
        out += [make_plan(M, K, "row_tiles", device, False, block, u, lanes_per_row=g, rows_per_group=r)
                for block in (64, 128, 256) if K <= 64 and tile_fits(block // g * r, K, K)]
    return out


def main() -> int:
    from ..dispatch import choose, make_launch
    from ..gpu.device import Device
    from ..measure.accuracy import reference, relative_error

    device = Device.of()
    worst, count = 0.0, 0
    for M, K in ((3, 5), (5, 4099), (33, 8192), (7, 20_001), (70, 50), (9, 33), (300, 17), (130, 64), (600, 8)):
        for offset in (0, 1):
            storage = torch.rand(M * K + offset, device="cuda")
            A = storage[offset:offset + M * K].view(M, K)
            B = torch.rand(K, device="cuda")
            b_vec = offset == 0 and K % 4 == 0
            ref = reference(A, B)
            for plan in plans(M, K, b_vec, device) + [choose(M, K, K, A.data_ptr() % 16, B.data_ptr() % 16, device)]:
                C = make_launch(plan, K, False, A.device)(A, B)
                err = relative_error(C, ref)
                worst, count = max(worst, err), count + 1
                if not err < 1e-5:
                    print(f"FAIL {plan.name} M={M} K={K} offset={offset}: {err:.2e}")
                    return 1
    decoded = decode_cases(device)
    if decoded < 0:
        return 1
    count += decoded
    torch.cuda.synchronize()
    print(f"selftest ok: {count} launches, worst relative error {worst:.1e}")
    return 0


def decode_cases(device) -> int:
    """Every compiled decode variant at small shapes (a partial tile, a K tail), on aligned and
    unaligned rows, B contiguous (copied) and as an activation's transpose; the launches made, or
    -1 after printing the first failure."""
    from ..decode import KERNELS, choose, make_launch
    from ..decode.kernels import DTYPE_CODES
    from ..measure.accuracy import relative_error
    from ..measure.decode import error_bound, reference

    dtypes = {c: t for t, c in DTYPE_CODES.items()}
    count = 0
    for kernel in KERNELS.values():
        for v in kernel.variants:
            args = kernel.arguments(v)
            dtype = dtypes[args[0]]
            n = max(1, (8 * args[1] if kernel.name == "decode_mma" else args[1]) - 1)
            for aligned, N, K in ((True, 37, 200), (False, 37, 203), (True, 3, 4104)):
                W = torch.rand(N, K + 8, device="cuda").to(dtype)[:, (0 if aligned else 1):][:, :K]
                B = (torch.rand(n, K, device="cuda").to(dtype).t() if aligned else
                     torch.rand(K, n, device="cuda").to(dtype))
                plan = choose(N, K, n, dtype, W.stride(0), W.data_ptr() % 16, B.stride(0), B.stride(1),
                              B.data_ptr() % 16, device)
                for block in (32, 128):
                    p = type(plan)(**{**plan.__dict__, "kernel": kernel.name, "variant": v, "block": block})
                    C = make_launch(p, (W.stride(0), B.stride(0), B.stride(1)), (N, n), dtype, W.device)(W, B)
                    err = relative_error(C.float(), reference(W, B))
                    count += 1
                    if not err <= error_bound(dtype, K):
                        print(f"FAIL {kernel.kernel_name(v)} N={N} K={K} n={n} block={block}: {err:.2e}")
                        return -1
    return count
