"""The dispatcher's reasons, as data the rule returns and as the words gemvlab.explain prints.

The rule (gemvlab.dispatch.rule) decides; each decision leaves a :class:`Reason`: which decision
it is (`decides`), a key naming the case, and the numbers behind it. :func:`text` renders one
reason; :func:`describe` a whole plan. Nothing here decides anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .kernels import REDUCE_BLOCK

#: The decisions a plan is made of: every plan's reasons cover the ones its kernel takes.
DECISIONS = {"none": ("kernel",), "zeros": ("kernel",), "row_tiles": ("kernel", "tile"),
             "rows_per_warp": ("kernel", "alignment", "lanes"), "split_k": ("kernel", "alignment", "splits")}


@dataclass(frozen=True)
class Reason:
    decides: str  # "kernel", "alignment", "lanes", "tile", "splits" or "rows_per_block"
    key: str  # which case of that decision
    facts: dict = field(default_factory=dict, hash=False)

    def __str__(self) -> str:
        return text(self)


def _alignment(f: dict) -> str:
    start = ("every row starts 16-byte aligned" if f["alike"] and f["a_mod16"] == 0 else
             "rows start at different offsets from a 16-byte boundary" if not f["alike"] else
             f"rows start {f['a_mod16']} bytes past a 16-byte boundary")
    b = ("float4s (aligned where A's rows are)" if f["b_vec"] else
         "float4s shifted into place by warp shuffles (not aligned where A's rows are)" if f["shuffled"] else
         "scalars (not aligned where A's rows are)")
    return f"{start}: float4 body with a scalar head and tail per row; B read as {b}"


def _tile(f: dict) -> str:
    G, R = f["G"], f["R"]
    return (f"K = {f['K']:,} <= {f['max_k']}: rows so short that a block loads {f['rows']} of them as one stretch of "
            f"A (a tile of {f['floats']:,} floats in shared memory), then {G} lane{'s' if G > 1 else ''} per row "
            f"add{'' if G > 1 else 's'} it up"
            + (f", {R} rows per {'group of lanes' if G > 1 else 'thread'}" if R > 1 else "")
            + "; A is more than one trip of the resident threads")


def _lanes(f: dict) -> str:
    G, K = f["G"], f["K"]
    head = f"K = {K:,} <= {f['short_k']:,}: rows too short to keep a block busy; "
    if f["case"] == "one trip":
        how = (f"A ({f['floats']:,} floats) fits in one trip of the {f['resident']:,} resident threads "
               f"({f['per_trip']} floats each): {G} lanes per row, at most {-(-K // G)} floats per lane")
    elif f["case"] == "few float4s":
        how = f"rows under {f['few_k']} floats (3 float4s per lane at {f['line_lanes']} lanes): {G} lanes per row"
    else:
        how = (f"{G} lanes per row, {-(-K // G)} floats per lane at most: the power of two nearest "
               f"K / {f['per_lane']}, at least {f['line_lanes']} (a group's load instruction then covers "
               f"128 contiguous bytes of its row)")
    return head + how + f", {f['block'] // G} rows per block of {f['block']}"


def _split_kernel(f: dict) -> str:
    rows, splits, loads = f["rows"], f["splits"], f["loads"]
    return (f"K = {f['K']:,} > {f['short_k']:,}: a block of {f['block']} threads per "
            + (f"{rows} rows' " if rows > 1 else "row")
            + (f"{' ' if rows == 1 else ''}stretch ({splits} stretches per row)" if splits > 1 else "")
            + f", {loads} float4 load{'s' if loads > 1 else ''} of A in flight per thread per row; "
              f"{f['bps']} blocks fit per SM ({f['sms']} SMs: {f['slots']} slots)")


def _busy(f: dict) -> str:
    return (f"{f['rows']:,} rows give each SM {f['warps_per_sm']:.0f} resident warps (of {f['max_warps']}), at least "
            f"{f['busy']:.0%} of the slots")


def _unsplit(f: dict) -> str:
    waves, last = f["waves"], f["last"]
    return (_busy(f) + ", " + ("in one wave" if waves <= 1 else f"in {waves:.2f} waves of {f['slots']}, the last "
                                                                 f"{last:.0%} full")
            + ": one block per row" + (f" (rows under {2 * f['min_chunk']:,} floats are not split)" if f["too_short"] else ""))


def _busy_split(f: dict) -> str:
    waves, blocks, s = f["waves"], f["blocks"], f["splits"]
    why = (f"rows at different offsets from B, whose blocks may end unevenly in {waves:.2f} waves" if not f["alike"]
           else f"the last of their {waves:.2f} waves of {f['slots']} only {f['last']:.0%} full (under "
                f"{f['full_last']:.0%})")
    return (_busy(f) + ", but " + why + f": {s} stretch{'es' if s != 1 else ''} per row make{'s' if s == 1 else ''} {blocks * s:,} blocks, "
            f"{blocks * s / f['slots']:.1f} waves (at least {f['busy_waves']}, so the last is a small part)")


def _few_rows(f: dict) -> str:
    blocks, s = f["blocks"], f["splits"]
    if f["warps_per_sm"] >= f["busy"] * f["max_warps"]:  # busy rows, split only for B's sake
        head = (f"{f['rows']:,} rows give each SM {f['warps_per_sm']:.1f} resident warps (of {f['max_warps']}), but "
                f"B sets the least number of stretches")
    else:
        head = (f"{f['rows']:,} rows alone give each SM {f['warps_per_sm']:.1f} resident warps (of {f['max_warps']}), "
                f"fewer than {f['busy']:.0%} of the slots")
    return (head + f": {s} stretch{'es' if s != 1 else ''} per row make{'s' if s == 1 else ''} {blocks * s:,} blocks"
            + (f" of {f['rows_per_block']} rows" if f["rows_per_block"] > 1 else "") + ", about "
            f"{blocks * s / f['slots']:.1f} waves of {f['slots']}"
            + (f" (aimed at {f['uneven']}, not {f['target']}: rows at different offsets from B, whose blocks may "
               "end unevenly)" if f["is_uneven"] else "")
            + (f" (stretches of at least {f['min_chunk']:,} floats allow at most {f['most']})" if s == f["most"] else ""))


_TEXT = {
    ("kernel", "empty"): lambda f: "M = 0: an empty result, nothing to launch",
    ("kernel", "zeros"): lambda f: "K = 0: every row sums nothing, C is zeros (no kernel)",
    ("kernel", "row_tiles"): _tile,
    ("tile", "one trip"): lambda f: (
        f"the tile is more than 4 float4s per thread: one trip of {f['loads']} loads per thread, all in flight at "
        "once, into shared memory sized to the tile rather than a static 4,096-float tile (12 or more blocks per "
        "SM of those would need the largest shared-memory carveout, the smallest L1)"),
    ("tile", "static"): lambda f: f"the tile is at most {f['loads']} float4s per thread: one trip into a static tile",
    ("kernel", "rows_per_warp"): lambda f: f"K = {f['K']:,} <= {f['short_k']:,}: rows_per_warp",
    ("lanes", "rows_per_warp"): _lanes,
    ("alignment", "rows"): _alignment,
    ("kernel", "split_k"): _split_kernel,
    ("splits", "b over l2"): lambda f: (
        f"B ({4 * f['K'] / 2**20:.0f} MiB) is more than {f['share']:.0%} of the L2 ({f['l2'] / 2**20:.0f} MiB): at "
        f"least {f['least']} stretches, so the rows sharing a stretch of B can find it in the L2"),
    ("splits", "busy unsplit"): _unsplit,
    ("splits", "busy split"): _busy_split,
    ("splits", "few rows"): _few_rows,
    ("splits", "one trip"): lambda f: (
        f"A ({f['floats']:,} floats) fits in one trip of the {f['threads']:,} resident threads: {f['splits']} "
        f"stretches instead, of about {-(-f['K'] // f['splits']):,} floats (one trip per thread)"),
    ("rows_per_block", "share b"): lambda f: (
        f"{f['M']:,} rows (fewer than {f['below']}), and B more than {f['share']:.0%} of the L2: {f['rows']} rows per "
        "block share each float4 of B"
        + ("" if f["b_vec"] else " (loaded aligned and shifted into place for each row by warp shuffles, the rows "
                                 "not being aligned like B)")
        + f", {f['loads']} load{'s' if f['loads'] > 1 else ''} of each row per trip"),
}
#: Reasons that say again what another line of the description says: kept as data, not printed.
_QUIET = {("kernel", "rows_per_warp"), ("tile", "static")}


def text(r: Reason) -> str:
    return _TEXT[(r.decides, r.key)](r.facts)


def launch_text(plan) -> str:
    """The launch in words: grid, block, what each block does."""
    if plan.kernel == "split_k":
        out = f"{plan.grid} blocks of {plan.block} threads"
        groups = -(-plan.M // plan.rows_per_block)
        rows = (f"{groups} group{'s' if groups > 1 else ''} of {plan.rows_per_block} rows" if plan.rows_per_block > 1
                else f"{plan.M} rows")
        if plan.splits > 1:
            out += (f" ({rows} x {plan.splits} stretches of {plan.chunk:,} floats), then "
                    f"{-(-plan.M * 32 // REDUCE_BLOCK)} block{'s' if plan.M * 32 > REDUCE_BLOCK else ''} of "
                    f"{REDUCE_BLOCK} adding each row's "
                    f"{plan.splits} partial sums")
        return out
    if plan.kernel == "rows_per_warp":
        return (f"{plan.grid} blocks of {plan.block} threads, {plan.lanes_per_row} lanes per row "
                f"({plan.block // plan.lanes_per_row} rows per block)")
    if plan.kernel == "row_tiles":
        G, R = plan.lanes_per_row, plan.rows_per_group
        return (f"{plan.grid} blocks of {plan.block} threads, each loading {plan.block // G * R} rows as one "
                f"stretch ({plan.loads} float4 loads per thread per trip"
                + (", the tile sized to its rows" if plan.loads > 4 else "")
                + f"), then {G} lane{'s' if G > 1 else ''} per row"
                + (f", each {'group of lanes' if G > 1 else 'thread'} summing {R} rows" if R > 1 else ""))
    return "no launch"


def describe(plan) -> str:
    lines = [f"M = {plan.M:,}, K = {plan.K:,}: {plan.name}", f"  launch: {launch_text(plan)}"]
    if plan.waves:
        lines.append(f"  waves: {plan.waves}, the last {plan.last_wave_fill:.0%} full")
    lines += [f"  - {text(r)}" for r in plan.reasons if (r.decides, r.key) not in _QUIET]
    return "\n".join(lines)
