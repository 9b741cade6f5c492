"""Pictures of ideas, drawn by code: which threads read which bytes, the tree against the shuffle,
Little's law, waves of blocks, split-K. Each returns a matplotlib Figure, closed in pyplot so that a
notebook cell shows it once (as the cell's value)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

LANE_COLORS = plt.cm.viridis


def Figure(figsize):
    """A figure made through pyplot (which sets up the notebook's display of figures) and closed at
    once, so that the cell shows it once, as its value, not a second time when the cell ends."""
    fig = plt.figure(figsize=figsize)
    plt.close(fig)
    return fig
A_COLOR, IDLE = "#f2f2f2", "#dddddd"


def _grid(ax, rows: int, cols: int, cells: dict, title: str, note: str = "", col_label: str = "column of A"):
    """rows x cols squares (one float each); cells: (row, col) -> lane, drawn in that lane's colour."""
    for r in range(rows):
        for c in range(cols):
            lane = cells.get((r, c))
            color = A_COLOR if lane is None else LANE_COLORS(lane / 31)
            ax.add_patch(Rectangle((c, rows - 1 - r), 0.95, 0.95, color=color, lw=0))
    ax.set_xlim(-0.5, cols + 0.5)
    ax.set_ylim(-0.5, rows + 0.5)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(False)
    ax.set_title(title, fontsize=9, loc="left")
    ax.set_xlabel(col_label + (f"\n{note}" if note else ""), fontsize=8)
    ax.set_ylabel("row of A", fontsize=8)


def access(pattern: str, G: int = 4, rows_per_block: int = 2):
    """Which lane of warp 0 reads which float of A in one load instruction (colour = lane 0 to 31).

    "naive": lane l reads row l (one float of each of 32 rows); "coalesced": the 32 lanes read 32
    neighbouring floats of one row; "float4": each lane reads 4 neighbouring floats, 128 in all;
    "multirow": each lane reads the same float4 column of `rows_per_block` rows (B once for all);
    "rows_per_warp": G lanes per row, 32 / G rows per warp; "row_tiles": consecutive rows read as one
    flat stretch of float4s."""
    fig = Figure(figsize=(9, 3.2))
    ax = fig.subplots()
    cells = {}
    if pattern == "naive":
        rows, cols = 32, 40
        cells = {(lane, 0): lane for lane in range(32)}
        title, note = "stage 1: lane l reads row l", "one load instruction touches 32 rows, 32 cache lines, 4 bytes used of each"
    elif pattern == "coalesced":
        rows, cols = 4, 136
        cells = {(0, lane): lane for lane in range(32)}
        title, note = "stage 2: 32 lanes read 32 neighbouring floats of one row", "128 contiguous bytes: one cache line"
    elif pattern == "float4":
        rows, cols = 4, 136
        cells = {(0, 4 * lane + j): lane for lane in range(32) for j in range(4)}
        title, note = "stages 3 and 4: each lane reads a float4", "512 contiguous bytes: four cache lines, a quarter of the instructions"
    elif pattern == "multirow":
        rows, cols = 4, 136
        cells = {(r, 4 * lane + j): lane for r in range(rows_per_block) for lane in range(32) for j in range(4)}
        title = f"stage 5: each lane reads the same float4 column of {rows_per_block} rows"
        note = f"one load of B serves {rows_per_block} rows"
    elif pattern == "rows_per_warp":
        rows, cols = 32 // G + 2, 64
        cells = {(lane // G, 4 * (lane % G) + j): lane for lane in range(32) for j in range(4)}
        title, note = f"rows per warp: {G} lanes per row, {32 // G} rows per warp", f"each row read {4 * G} floats at a time"
    elif pattern == "row_tiles":
        K, rows, cols = 12, 12, 12
        flat = [(i // K, i % K) for i in range(128)]
        cells = {rc: i // 4 for i, rc in enumerate(flat) if rc[0] < rows}
        title, note = "row tiles: rows of 12 floats, read as one flat stretch", "lane l reads floats 4l to 4l + 3 of the stretch"
        _grid(ax, rows, cols, cells, title, note, "column of A (K = 12)")
        fig.tight_layout()
        return fig
    else:
        raise ValueError(f"no access picture {pattern!r}")
    _grid(ax, rows, cols, cells, title, note)
    fig.tight_layout()
    return fig


def tree_vs_shuffle(n: int = 8, shuffle: bool = True):
    """n partial sums added: as a tree in shared memory, a barrier between levels (stages 2 and 3),
    and (with `shuffle`) against warp shuffles, register to register with no barrier (stage 4)."""
    fig = Figure(figsize=(10, 3.4) if shuffle else (5.5, 3.4))
    axes = fig.subplots(1, 2) if shuffle else [fig.subplots()]
    levels = n.bit_length() - 1
    for ax, kind in zip(axes, ("tree", "shuffle")):
        for lv in range(levels + 1):
            y = levels - lv
            live = n >> lv if kind == "tree" else n
            for t in range(n):
                active = t < live
                ax.add_patch(Rectangle((t, y), 0.8, 0.6, color="#1f5fa8" if active else IDLE))
                ax.text(t + 0.4, y + 0.3, f"{t}", ha="center", va="center", fontsize=7,
                        color="white" if active else "#888888")
            if lv < levels:
                step = (n >> lv) // 2 if kind == "tree" else n >> (lv + 1)
                for t in range((n >> lv) // 2 if kind == "tree" else n - step):
                    ax.add_patch(FancyArrowPatch((t + step + 0.4, y), (t + 0.4, y - 0.4), arrowstyle="->",
                                                 mutation_scale=8, color="#e07b39", lw=1))
                if kind == "tree":
                    ax.plot([-0.3, n], [y - 0.2, y - 0.2], ls="--", color="#aa0000", lw=1)
                    ax.text(n + 0.1, y - 0.2, "__syncthreads()", fontsize=7, color="#aa0000", va="center")
        ax.set_xlim(-0.5, n + 2.6)
        ax.set_ylim(-0.6, levels + 0.8)
        ax.axis("off")
        ax.set_title("shared-memory tree: each level waits for a barrier" if kind == "tree" else
                     "__shfl_down_sync: a lane reads a register of the lane `offset` above, no barrier",
                     fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def littles_law(ceiling_GBps: float, latency_ns: float, sms: int, points: dict | None = None):
    """Bandwidth against the bytes each SM keeps in flight: sms x bytes / latency, capped by the read
    ceiling. `points`: label -> (bytes in flight per SM, measured GB/s), drawn on it."""
    import numpy as np

    fig = Figure(figsize=(7.5, 3.8))
    ax = fig.subplots()
    x = np.logspace(2, 6, 200)
    model = np.minimum(sms * x / latency_ns, ceiling_GBps)  # bytes / ns = GB/s
    ax.plot(x, model, color="black", lw=1.5, label=f"{sms} SMs x bytes in flight / {latency_ns:.0f} ns, at most the ceiling")
    knee = ceiling_GBps * latency_ns / sms
    ax.axvline(knee, color="#888888", ls=":", lw=1)
    ax.text(knee * 1.1, ceiling_GBps * 0.15, f"{knee / 1024:.1f} KiB per SM\nfill the ceiling", fontsize=8)
    for i, (label, (b, gbps)) in enumerate((points or {}).items()):
        ax.plot([b], [gbps], "o", ms=6)
        # labels alternate below and above their points, so neighbours near the ceiling stay apart
        ax.annotate(label, (b, gbps), textcoords="offset points", xytext=(6, -12 if i % 2 == 0 else 6), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes in flight per SM (requested, not yet delivered)")
    ax.set_ylabel("GB/s")
    ax.set_title("Little's law: bandwidth = bytes in flight / latency", fontsize=10, loc="left")
    ax.legend(fontsize=8, loc="lower right", frameon=False)
    fig.tight_layout()
    return fig


def waves(grid: int, blocks_per_sm: int, sms: int):
    """`grid` blocks on `sms` SMs that each hold `blocks_per_sm` at once: full waves, then a last
    wave whose empty slots idle while it runs."""
    slots = blocks_per_sm * sms
    total_waves = -(-grid // slots)
    last = grid - (total_waves - 1) * slots
    fig = Figure(figsize=(9, 2.4))
    ax = fig.subplots()
    for w in range(total_waves):
        frac = (slots if w < total_waves - 1 else last) / slots
        ax.add_patch(Rectangle((w, 0), 0.92 * frac, 1, color="#1f5fa8"))
        ax.add_patch(Rectangle((w + 0.92 * frac, 0), 0.92 * (1 - frac), 1, color=IDLE))
        ax.text(w + 0.46, 0.5, f"wave {w + 1}\n{round(frac * slots):,} blocks", ha="center", va="center", fontsize=7,
                color="white" if frac > 0.5 else "black")
    ax.set_xlim(-0.1, total_waves)
    ax.set_ylim(-0.3, 1.3)
    ax.axis("off")
    ax.set_title(f"{grid:,} blocks, {blocks_per_sm} per SM on {sms} SMs ({slots:,} at a time): {total_waves} "
                 f"wave{'s' if total_waves > 1 else ''}, the last {last / slots:.0%} full (grey: idle slots)",
                 fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def split_k(M: int = 3, splits: int = 4):
    """Split-K: each of M rows cut into `splits` stretches, one block per stretch writing a partial
    sum; a second kernel adds each row's partials in one fixed order (the same bits every run)."""
    fig = Figure(figsize=(9, 2.8))
    ax = fig.subplots()
    colors = plt.cm.tab10
    for r in range(M):
        y = M - 1 - r
        for s in range(splits):
            ax.add_patch(Rectangle((s * 1.5, y), 1.4, 0.7, color=colors(s)))
            ax.text(s * 1.5 + 0.7, y + 0.35, f"block {r + M * s}", ha="center", va="center", fontsize=7, color="white")
        ax.text(-0.2, y + 0.35, f"row {r}", ha="right", va="center", fontsize=8)
        for s in range(splits):
            ax.add_patch(Rectangle((splits * 1.5 + 0.6 + 0.45 * s, y + 0.1), 0.4, 0.5, color=colors(s)))
        ax.annotate("", (splits * 1.5 + 0.6 + 0.45 * splits + 0.9, y + 0.35),
                    (splits * 1.5 + 0.6 + 0.45 * splits + 0.1, y + 0.35), arrowprops={"arrowstyle": "->"})
        ax.text(splits * 1.5 + 0.6 + 0.45 * splits + 1.0, y + 0.35, f"C[{r}] = p0 + p1 + ... (in order)",
                va="center", fontsize=8)
    ax.set_xlim(-1.2, splits * 1.5 + 6)
    ax.set_ylim(-0.3, M + 0.3)
    ax.axis("off")
    ax.set_title(f"split-K: {M} rows x {splits} stretches = {M * splits} blocks, then one fixed-order sum per row "
                 "(block b takes stretch b / M of row b % M)", fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def warp_sectors(pattern: str, K: int = 1048576, lanes: int = 32) -> dict:
    """The 32-byte sectors one warp's load instruction touches, for a row-per-thread ('naive'),
    row-per-block ('coalesced') or float4 ('float4') read of A. Returns addresses, sectors and
    the fraction of fetched bytes that are used."""
    if pattern == "naive":
        addrs, size = [lane * K * 4 for lane in range(lanes)], 4  # lane l reads row l, column k
    elif pattern == "coalesced":
        addrs, size = [lane * 4 for lane in range(lanes)], 4  # lane l reads column k + l of one row
    elif pattern == "float4":
        addrs, size = [lane * 16 for lane in range(lanes)], 16
    else:
        raise ValueError("pattern is 'naive', 'coalesced' or 'float4'")
    sectors = sorted({a // 32 for a in addrs})
    return {"pattern": pattern, "addresses": addrs, "bytes_per_lane": size, "sectors": sectors,
            "bytes_used": lanes * size, "bytes_fetched": 32 * len(sectors),
            "efficiency": lanes * size / (32 * len(sectors))}


def sectors(K: int = 1048576):
    """One warp-wide load, naive against coalesced: each box a 32-byte sector, filled where used."""
    fig = Figure(figsize=(10, 3.8))
    axes = fig.subplots(2, 1)
    for ax, pattern in zip(axes, ("naive", "coalesced")):
        w = warp_sectors(pattern, K)
        n = len(w["sectors"])
        for i, sector in enumerate(w["sectors"]):
            used = [a for a in w["addresses"] if a // 32 == sector]
            ax.add_patch(plt.Rectangle((i, 0), 0.92, 1, fill=False, lw=1))
            for a in used:
                off = (a - sector * 32) / 32
                ax.add_patch(plt.Rectangle((i + off * 0.92, 0), w["bytes_per_lane"] / 32 * 0.92, 1,
                                           color="#1f5fa8"))
        ax.set_xlim(-0.2, max(n, 32) + 0.2)
        ax.set_ylim(-0.1, 1.1)
        ax.axis("off")
        where = "32 lanes read 32 rows, K floats apart" if pattern == "naive" else "32 lanes read 32 neighbouring floats"
        ax.set_title(f"{pattern}: {where}: {n} sectors fetched ({w['bytes_fetched']} B) for "
                     f"{w['bytes_used']} B used = {w['efficiency']:.1%}", fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def sm_map(blocks: int, warps_per_block: int, sms: int, title: str = ""):
    """Where a grid's warps sit on the GPU's SMs, one block per SM while there are fewer blocks than
    SMs (the scheduler spreads them; assumed): each square an SM, its shade the warps it holds."""
    import numpy as np

    per_sm = np.zeros(sms)
    for b in range(blocks):
        per_sm[b % sms] += warps_per_block
    cols = 33
    fig = Figure(figsize=(9, 1.9))
    ax = fig.subplots()
    for i in range(sms):
        shade = plt.cm.Blues(0.25 + 0.75 * per_sm[i] / max(per_sm.max(), 1)) if per_sm[i] else IDLE
        ax.add_patch(Rectangle((i % cols, -(i // cols)), 0.9, 0.9, color=shade))
    ax.set_xlim(-0.2, cols)
    ax.set_ylim(-(sms // cols) - 0.2, 1)
    ax.set_aspect("equal")
    ax.axis("off")
    busy = int((per_sm > 0).sum())
    ax.set_title(title or f"{blocks:,} blocks of {warps_per_block} warp{'s' if warps_per_block > 1 else ''}: "
                 f"{busy} of {sms} SMs busy, {per_sm.max():.0f} warps on the fullest (grey: idle)", fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def littles_law_of(ctx, upto: int):
    """littles_law with a run's read ceiling, memory latency and SM count, and each stage up to
    `upto` drawn at its bytes in flight per SM (the model's) and its measured bandwidth."""
    from .. import results
    from .model_cells import bandwidth_points

    m = ctx.doc["machine"]
    latency = m["memory"].get("far_latency_ns") or m["memory"]["dram_latency_ns"]
    ceiling = results.headline(ctx.doc)["ceiling"]["GBps"]
    fig = littles_law(ceiling, latency, m["sm_count"], bandwidth_points(ctx, upto) if upto else None)
    fig.axes[0].set_title(f"Little's law: bandwidth = bytes in flight / latency  [{ctx.label}]", fontsize=9, loc="left")
    return fig


def waves_of(stage, block: int, variant: int | None, M: int, limits, sms: int):
    """waves() for a stage's grid at `block` threads: its blocks per SM from the occupancy calculator."""
    from ..kernels import get_stage

    st = get_stage(stage)
    v = st.default if variant is None else variant
    occ = st.occupancy(block, v, limits)
    fig = waves(st.grid(M, block, v), occ.blocks_per_sm, sms)
    fig.axes[0].set_title(f"{st.kernel_name(v)} at {block} threads, limited by {occ.limiter}: "
                          + fig.axes[0].get_title(), fontsize=9, loc="left")
    return fig
