"""The notebooks' sliders: block size (notebooks 01 to 04) and the shape explorer (notebook 05).
Each redraws one figure per move, live on a GPU, recorded otherwise."""

from __future__ import annotations

import torch

from .. import results
from ..gpu import occupancy
from ..kernels import get_stage
from ..measure import bench
from ..measure.accuracy import random_inputs
from .context import Context, sm_limits
from .dispatch_cells import explain_shape


def _slider_view(sliders: dict, show):
    """Sliders above an Output area; each change clears the area and calls show(**values) in it.
    Figures are displayed explicitly and closed (no reliance on the inline backend noticing an
    open figure), so every move leaves exactly one plot. Returns the box for the cell to display."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    from IPython.display import clear_output, display

    out = widgets.Output()

    def redraw(_=None):
        with out:
            clear_output(wait=True)
            fig = show(**{name: s.value for name, s in sliders.items()})
            if fig is not None:
                display(fig)
                plt.close(fig)

    for s in sliders.values():
        s.observe(redraw, names="value")
    redraw()
    return widgets.VBox([*sliders.values(), out])


def block_slider(ctx: Context, stage, variant=None):
    """A block-size slider. On a GPU it times the stage at the chosen block size now, at the
    headline shape; without one it shows the recorded sweep there and the occupancy implied."""
    import ipywidgets as widgets

    from .plots import plot_block_sweep

    st = get_stage(stage)
    variant = st.default if variant is None else variant
    limits = sm_limits(ctx.recorded)
    state = {}

    sms = (torch.cuda.get_device_properties(0).multi_processor_count if ctx.live
           else ctx.recorded["machine"]["sm_count"])

    def show(block):
        o = st.occupancy(block, variant, limits)
        M = ctx.doc["headline"]["M"]
        r = occupancy.residency(o, st.grid(M, block, variant or 0), sms)
        print(f"block {block}: the occupancy calculator allows {o.blocks_per_sm} blocks ({o.warps_per_sm} warps) "
              f"per SM, limited by {o.limiter}")
        print(f"  the grid for M = {M:,}: {r.describe()}")
        if ctx.live:
            if "inputs" not in state:
                M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
                state["inputs"] = random_inputs(M, K)
            A, B = state["inputs"]
            try:
                m = bench.measure_stage(st, A, B, block, variant, warmup_ms=5, rep_ms=50, min_launches=5)
                print(f"live: {m['ms']:.3f} ms, {m['GBps']:.0f} GB/s (median of {m['n']} launches), "
                      f"relative error {m['rel_err']:.1e}")
            except Exception as e:  # noqa: BLE001 - a block the stage refuses: show why
                print(f"not launched: {e}")
        else:
            r = next((r for r in results.block_sweep(ctx.recorded, st.name)
                      if r["block"] == block and r["variant"] == (variant if st.variant_name else None)), None)
            if r and r["status"] == "ok":
                print(f"recorded: {r['ms']:.3f} ms, {r['GBps']:.0f} GB/s  [{results.label(ctx.recorded)}]")
            elif r:
                print(f"recorded: {r['status']}: {r['note']}")
        return plot_block_sweep(ctx.recorded, st.name, variants=[variant if st.variant_name else None],
                                mark_block=block)

    return _slider_view({"block": widgets.SelectionSlider(options=[32, 64, 128, 256, 512, 1024],
                                                          value=st.default_block, description="block")}, show)


def shape_slider(ctx: Context):
    """M and K sliders over the recorded explorer grid: the kernel chosen, the model's time, and
    the recorded (or live) time beside torch.matmul."""
    import ipywidgets as widgets

    from ..results.studies import EXPLORER_K, EXPLORER_M

    def show(M, K):
        if M * K > 2**30:
            print(f"M x K = {M * K:,} floats: larger than the explorer grid records (2^30); pick a smaller pair")
        else:
            explain_shape(ctx, M, K)
        return _explorer_map(ctx.recorded, M, K)

    return _slider_view({"M": widgets.SelectionSlider(options=list(EXPLORER_M), value=16, description="M"),
                         "K": widgets.SelectionSlider(options=list(EXPLORER_K), value=1048576, description="K")}, show)


def _explorer_map(doc: dict, M: int, K: int):
    """The recorded explorer grid as a map: gemv's speed against torch.matmul's at each (M, K),
    the chosen pair outlined."""
    import matplotlib.pyplot as plt
    import numpy as np

    from ..results.studies import EXPLORER_K, EXPLORER_M

    ratio = np.full((len(EXPLORER_M), len(EXPLORER_K)), np.nan)
    for i, m in enumerate(EXPLORER_M):
        for j, k in enumerate(EXPLORER_K):
            kinds = results.by_kind(results.rows(doc, "explorer", M=m, K=k, ok=True))
            g, t = kinds.get("dispatch"), kinds.get("torch_matmul")
            if g and t:
                ratio[i, j] = t["ms"] / g["ms"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    im = ax.imshow(ratio, cmap="RdYlGn", vmin=0.5, vmax=1.5, aspect="auto")
    for i in range(len(EXPLORER_M)):
        for j in range(len(EXPLORER_K)):
            if not np.isnan(ratio[i, j]):
                ax.text(j, i, f"{ratio[i, j]:.2f}", ha="center", va="center", fontsize=7)
    if M in EXPLORER_M and K in EXPLORER_K:
        ax.add_patch(plt.Rectangle((EXPLORER_K.index(K) - 0.5, EXPLORER_M.index(M) - 0.5), 1, 1, fill=False,
                                   lw=2.5, color="black"))
    ax.set_xticks(range(len(EXPLORER_K)), [f"{k:,}" for k in EXPLORER_K], fontsize=7)
    ax.set_yticks(range(len(EXPLORER_M)), [f"{m:,}" for m in EXPLORER_M], fontsize=7)
    ax.set_xlabel("K")
    ax.set_ylabel("M")
    fig.colorbar(im, ax=ax, label="torch.matmul ms / gemv ms")
    ax.set_title(f"gemv against torch.matmul (blank: not recorded)  [{results.label(doc)}]", fontsize=9)
    fig.tight_layout()
    return fig
