"""Every dispatcher kernel variant on small inputs of every layout, checked against float64:
``python -m gemvlab.selftest``. Small on purpose: it is what compute-sanitizer (memcheck,
racecheck) runs in the GPU tests, where every access is checked and a launch is slow."""

from __future__ import annotations

import sys

import torch


def main() -> int:
    from . import dispatch, kernels
    from .bench import reference, relative_error

    device = dispatch.Device.of()
    worst, count = 0.0, 0
    for M, K in ((3, 5), (5, 4099), (33, 8192), (7, 20_001), (70, 50), (9, 33), (300, 17), (130, 64), (600, 8)):
        for offset in (0, 1):
            storage = torch.rand(M * K + offset, device="cuda")
            A = storage[offset:offset + M * K].view(M, K)
            B = torch.rand(K, device="cuda")
            b_vec = offset == 0 and K % 4 == 0
            plans = [dispatch.make_plan(M, K, "rows_per_warp", device, b_vec, block, lanes_per_row=g)
                     for g in (1, 2, 4, 8, 16, 32) for block in (dispatch.ROWS_BLOCK, 256)]
            plans += [dispatch.make_plan(M, K, "split_k", device, b_vec, block, loads, splits)
                      for block, loads, splits in ((256, 2, 1), (256, 4, 3), (64, 2, 3), (64, 4, 1))]
            plans += [dispatch.make_plan(M, K, "split_k", device, b_vec, block, loads, splits, rows_per_block=rows)
                      for rows in (2, 4) for loads in (1, 2) for block, splits in ((256, 3), (64, 1))]
            plans += [dispatch.make_plan(M, K, "row_tiles", device, False, block, u, lanes_per_row=g, rows_per_group=r)
                      for g, r, u in map(kernels.row_tiles_template, kernels.ROW_TILES.variants) for block in (128, 256)
                      if dispatch.tile_fits(block // g * r, K, K) and K <= dispatch.TILE_MAX_K]
            plans.append(dispatch.choose(M, K, K, A.data_ptr() % 16, B.data_ptr() % 16, device))
            ref = reference(A, B)
            for plan in plans:
                C = dispatch.make_launch(plan, K, False, A.device)(A, B)
                err = relative_error(C, ref)
                worst, count = max(worst, err), count + 1
                if not err < 1e-5:
                    print(f"FAIL {plan.name} M={M} K={K} offset={offset}: {err:.2e}")
                    return 1
    torch.cuda.synchronize()
    print(f"selftest ok: {count} launches, worst relative error {worst:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
