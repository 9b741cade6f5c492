"""Notebook 06's pictures: what a 16-byte load holds, one read of W serving several vectors, the
mma.sync tile and which lane loads what, and the roofline with its ridge points."""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, Rectangle

from .pictures import LANE_COLORS, Figure


def _clean(ax):
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(False)


def loads():
    """One 16-byte load: four float32 values, or eight bf16 values."""
    fig = Figure(figsize=(8, 1.9))
    ax = fig.subplots()
    for row, (count, name) in enumerate(((4, "float32: 4 values"), (8, "bfloat16: 8 values"))):
        y = 1.2 - 1.2 * row
        for i in range(count):
            w = 16 / count
            ax.add_patch(Rectangle((i * w, y), w * 0.95, 0.8, color=LANE_COLORS(i / 8), lw=0))
        ax.text(16.6, y + 0.4, name, va="center", fontsize=9)
    ax.set_xlim(-0.5, 24)
    ax.set_ylim(-0.2, 2.2)
    _clean(ax)
    ax.set_title("one 16-byte load (a 128-bit LDG in SASS): the same instruction, twice the elements in bf16",
                 fontsize=9, loc="left")
    return fig


def shared_read(n: int = 4):
    """One 16-byte piece of a row of W, read once, multiplied by the same piece of each of n vectors."""
    fig = Figure(figsize=(8, 2.8))
    ax = fig.subplots()
    for i in range(8):
        ax.add_patch(Rectangle((i, n), 0.95, 0.9, color="#4c72b0", lw=0))
    ax.text(8.3, n + 0.45, "8 elements of W's row: loaded once", va="center", fontsize=9)
    for j in range(n):
        for i in range(8):
            ax.add_patch(Rectangle((i, n - 1.4 - j), 0.95, 0.9, color=LANE_COLORS(0.3 + 0.6 * j / max(1, n - 1)), lw=0))
        ax.text(8.3, n - 0.95 - j, f"vector {j}: the same 8 k", va="center", fontsize=8)
        ax.add_patch(FancyArrowPatch((12.6, n - 0.95 - j), (14.2, n - 0.95 - j), arrowstyle="->", mutation_scale=10))
        ax.text(14.4, n - 0.95 - j, f"sum {j} += 8 products", va="center", fontsize=8)
    ax.set_xlim(-0.5, 19)
    ax.set_ylim(-1.6, n + 1.2)
    _clean(ax)
    ax.set_title(f"n = {n} vectors: W's bytes are read once, the arithmetic is done {n} times", fontsize=9, loc="left")
    return fig


def mma_tile():
    """Top left: the shapes of mma.sync.m16n8k16. Top right: which lane of a warp loads which 16 bytes
    of the tile's 16 rows (colour = lane): lane (g, t) loads elements 8 t .. 8 t + 7 of rows g and
    g + 8. Bottom: the PTX ISA's fragment layout puts the mma's column c of A and row c of B in the
    lanes with the same t; the k each lane loaded there, for the first and the second mma.sync."""
    fig = Figure(figsize=(9, 5.4))
    grid = fig.add_gridspec(2, 2, width_ratios=[1, 1.3], height_ratios=[3.4, 1.6])
    left, right, strip = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
    for x, y, w, h, name in ((0, 0, 16, 16, "A: 16 rows of W\nx 16 of K"), (19, 0, 8, 16, "B: 16 of K\nx 8 vectors"),
                             (30, 0, 8, 16, "C: 16 rows\nx 8 vectors")):
        left.add_patch(Rectangle((x, y), w, h, fill=False, lw=1.5))
        left.text(x + w / 2, y + h / 2, name, ha="center", va="center", fontsize=8)
    left.text(17.5, 8, "x", ha="center", va="center", fontsize=12)
    left.text(28.5, 8, "+=", ha="center", va="center", fontsize=11)
    left.set_xlim(-1, 39)
    left.set_ylim(-1, 17)
    left.set_aspect("equal")
    _clean(left)
    left.set_title("one mma.sync: 2,048 multiply-adds, sums in fp32", fontsize=9, loc="left")
    for g in range(8):
        for t in range(4):
            lane = 4 * g + t
            for h in (0, 8):
                right.add_patch(Rectangle((8 * t, 15 - (g + h)), 7.8, 0.9, color=LANE_COLORS(lane / 31), lw=0))
    right.set_xlim(-0.5, 32.5)
    right.set_ylim(-0.5, 16.5)
    right.set_xlabel("32 elements of K (one load per lane)", fontsize=8)
    right.set_ylabel("16 rows of W", fontsize=8)
    _clean(right)
    right.set_title("lane 4 g + t (g = 0..7, t = 0..3) loads rows g and g + 8,\nelements 8 t to 8 t + 7: two mma.sync's worth",
                    fontsize=9, loc="left")
    for c in range(16):  # column c of the mma's A (row c of its B) sits in lanes with t = (c % 8) // 2
        t = (c % 8) // 2
        k = 8 * t + c % 2 + (2 if c >= 8 else 0)  # which of the lane's 8 loaded elements it hands over there
        strip.add_patch(Rectangle((c, 0), 0.95, 1.9, color=LANE_COLORS((4 * 3 + t) / 31), alpha=0.35 + 0.15 * t, lw=0))
        strip.text(c + 0.47, 2.4, f"t={t}", ha="center", fontsize=7)
        strip.text(c + 0.47, 1.35, f"{k}", ha="center", va="center", fontsize=8)
        strip.text(c + 0.47, 0.45, f"{k + 4}", ha="center", va="center", fontsize=8)
    strip.text(-0.3, 1.35, "k, 1st mma", ha="right", va="center", fontsize=8)
    strip.text(-0.3, 0.45, "k, 2nd mma", ha="right", va="center", fontsize=8)
    strip.set_xlim(-4, 16.2)
    strip.set_ylim(-0.9, 3.0)
    _clean(strip)
    strip.set_xlabel("the mma's column c of A = row c of B, c = 0..15 (PTX ISA layout); the lanes holding it have this t",
                     fontsize=8)
    strip.set_title("so A's column c and B's row c both carry the same k: every product still pairs W and B at one k",
                    fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def roofline(bandwidth_GBps: float, cores_TFLOPs: float, tensor_TFLOPs: float, label: str):
    """Attainable TFLOP/s against FLOP per byte of W: the memory's slope, the CUDA cores' and the
    tensor cores' roofs, and bf16 decode at n = 1 to 16 vectors (n FLOP per byte)."""
    import numpy as np

    fig = Figure(figsize=(7.5, 3.6))
    ax = fig.subplots()
    x = np.logspace(-0.3, 3, 200)
    ax.plot(x, np.minimum(bandwidth_GBps * x / 1e3, cores_TFLOPs), color="#dd8452", label="CUDA cores, fp32 FMA")
    ax.plot(x, np.minimum(bandwidth_GBps * x / 1e3, tensor_TFLOPs), color="#4c72b0", label="tensor cores, bf16")
    for n in (1, 2, 4, 8, 16):
        ax.plot([n], [bandwidth_GBps * n / 1e3], "ko", ms=4)
        ax.annotate(f"n={n}", (n, bandwidth_GBps * n / 1e3), textcoords="offset points", xytext=(4, -10), fontsize=7)
    for roof, color in ((cores_TFLOPs, "#dd8452"), (tensor_TFLOPs, "#4c72b0")):
        ridge = roof * 1e3 / bandwidth_GBps
        ax.axvline(ridge, color=color, ls=":", lw=1)
        ax.text(ridge * 1.05, roof * 1.25, f"ridge: {ridge:.0f}", color=color, fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOP per byte of W (bf16 decode: n)")
    ax.set_ylabel("TFLOP/s (dots: the model at n vectors)")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(f"the roofline [{label}]", fontsize=9)
    fig.tight_layout()
    return fig
