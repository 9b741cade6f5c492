"""The rule: which kernel and launch gemvlab.gemv(A, B) uses, as a pure function of numbers.

choose(M, K, lda, a_mod16, b_mod16, device) returns a Plan whose reasons (gemvlab.dispatch.reasons)
say why, decision by decision: the kernel, how B is read, the lanes per row or the tile, the
splits and rows per block. The tuned numbers are in gemvlab.dispatch.tuning, their measurements
in docs/design/dispatch.md. Unit tested on the CPU, branch by branch, with a recorded GPU's numbers.
"""

from __future__ import annotations

import math

from ..gpu.device import Device
from ..native.kernel import encode
from . import tuning as T
from .kernels import ROWS_PER_WARP, TILE_MAX_K
from .plan import Plan, make_plan, split_k_slots, tile_fits, tile_floats, tile_loads
from .reasons import Reason


def _next_pow2(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


def _nearest_pow2(x: float) -> int:
    return 1 << max(0, round(math.log2(x))) if x > 1 else 1


def resident_rows_threads(b_vec: bool, device: Device) -> int:
    """The GPU's resident rows_per_warp threads (at G = 32: every G's kernel has about the same
    registers): how many lanes one trip of loads can keep busy."""
    occ = ROWS_PER_WARP.occupancy(T.ROWS_BLOCK, encode(32, b_vec), device.limits)
    return device.sms * occ.blocks_per_sm * T.ROWS_BLOCK


def rows_lanes(M: int, K: int, b_vec: bool, device: Device) -> tuple[int, Reason]:
    """rows_per_warp's lanes per row G (MIN_LANES to 32) for M rows of K floats, and why."""
    resident = resident_rows_threads(b_vec, device)
    if M * K <= resident * T.FLOATS_PER_TRIP:  # little data: as few trips per lane as G <= 32 allows
        G, case = min(32, max(T.MIN_LANES, _next_pow2(-(-K // T.FLOATS_PER_TRIP)))), "one trip"
    elif K < T.FEW_FLOAT4S_K:
        G, case = T.MIN_LANES, "few float4s"
    else:
        G, case = min(32, max(T.LINE_LANES, _nearest_pow2(K / T.FLOATS_PER_LANE))), "line"
    return G, Reason("lanes", "rows_per_warp", {
        "case": case, "G": G, "K": K, "floats": M * K, "resident": resident, "per_trip": T.FLOATS_PER_TRIP, "few_k": T.FEW_FLOAT4S_K,
        "line_lanes": T.LINE_LANES, "per_lane": T.FLOATS_PER_LANE, "short_k": T.SHORT_ROW_K, "block": T.ROWS_BLOCK})


def tile_plan(K: int, lda: int) -> tuple | None:
    """The first TILE_ROWS entry whose rows fit the tile and load in one trip of at most
    TILE_MAX_LOADS per thread, or None."""
    return next((t for t in T.TILE_ROWS if tile_fits(t[0], K, lda) and tile_loads(t[0], K, t[1], lda)
                 <= T.TILE_MAX_LOADS), None)


def choose(M: int, K: int, lda: int, a_mod16: int, b_mod16: int, device: Device) -> Plan:
    """The rule. `a_mod16`, `b_mod16`: A's and B's addresses modulo 16 bytes; `lda`: floats from
    one row of A to the next."""
    if M == 0:
        return Plan(M, K, "none", reasons=(Reason("kernel", "empty"),))
    if K == 0:
        return Plan(M, K, "zeros", reasons=(Reason("kernel", "zeros"),))
    alike = M == 1 or lda % 4 == 0  # every row starts at the same offset from a 16-byte boundary
    b_vec = alike and (a_mod16 - b_mod16) % 16 == 0  # ... and B at that offset too

    def alignment(shuffled: bool = False) -> Reason:
        return Reason("alignment", "rows", {"alike": alike, "a_mod16": a_mod16, "b_vec": b_vec, "shuffled": shuffled})

    tile = tile_plan(K, lda)
    if (K <= TILE_MAX_K and M > 1 and tile and lda - K <= T.TILE_MAX_GAP * K
            and M * K > resident_rows_threads(b_vec, device) * T.FLOATS_PER_TRIP):
        rows, block, G, R = tile
        loads = tile_loads(rows, K, block, lda)
        why = (Reason("kernel", "row_tiles", {"K": K, "max_k": TILE_MAX_K, "rows": rows, "floats": tile_floats(rows, K, lda),
                                                  "G": G, "R": R}),
               Reason("tile", "one trip" if loads > T.TILE_LOADS else "static", {"loads": loads}))
        return make_plan(M, K, "row_tiles", device, False, block, loads, lanes_per_row=G, reasons=why,
                         rows_per_group=R, lda=lda)
    if K <= T.SHORT_ROW_K:
        G, lanes = rows_lanes(M, K, b_vec, device)
        why = (Reason("kernel", "rows_per_warp", {"K": K, "short_k": T.SHORT_ROW_K}), lanes, alignment())
        return make_plan(M, K, "rows_per_warp", device, b_vec, T.ROWS_BLOCK, lanes_per_row=G, reasons=why)
    return _split_k(M, K, alike, b_vec, device, alignment)


def _split_k(M: int, K: int, alike: bool, b_vec: bool, device: Device, alignment) -> Plan:
    """Long rows: split_k, its splits, and rows per block."""
    bps, slots = split_k_slots(device, b_vec)
    max_warps = device.limits.max_threads // 32
    warps_per_sm = min(bps, M / device.sms) * (T.SPLIT_BLOCK // 32)  # one block per row
    splits, split_why = choose_splits(M, K, slots, warps_per_sm, max_warps, device.l2_bytes, rows_alike=alike)
    rows, loads, shuffled = 1, T.LOADS, False
    if splits > 1 and 2 <= M < T.SHARE_B_BELOW_M and 4 * K > T.B_SHARE_OF_L2 * device.l2_bytes:
        rows, loads = (T.SHARE_B_ROWS, T.SHARE_B_LOADS) if b_vec else (T.SHARE_B_ROWS_SHUFFLED, T.SHARE_B_LOADS_SHUFFLED)
        shuffled = not b_vec
        bps, slots = split_k_slots(device, b_vec, rows, loads)
        splits, split_why = choose_splits(M, K, slots, warps_per_sm, max_warps, device.l2_bytes, rows, alike)
        split_why.append(Reason("rows_per_block", "share b", {"M": M, "below": T.SHARE_B_BELOW_M, "share": T.B_SHARE_OF_L2,
                                                                  "rows": rows, "b_vec": b_vec, "loads": loads}))
    kernel = Reason("kernel", "split_k", {"K": K, "short_k": T.SHORT_ROW_K, "block": T.SPLIT_BLOCK, "rows": rows, "splits": splits,
                                              "loads": loads, "bps": bps, "sms": device.sms, "slots": slots})
    return make_plan(M, K, "split_k", device, b_vec, T.SPLIT_BLOCK, loads, splits,
                     reasons=(kernel, alignment(shuffled), *split_why), rows_per_block=rows)


def choose_splits(M: int, K: int, slots: int, warps_per_sm: float, max_warps: int, l2_bytes: int,
                  rows_per_block: int = 1, rows_alike: bool = True) -> tuple[int, list[Reason]]:
    """How many stretches to cut each row into, and why: none when the rows alone keep enough warps
    busy (`warps_per_sm` from one block per row, against the SM's `max_warps`) and their blocks fill
    their waves, else, for such busy rows, enough for BUSY_SPLIT_WAVES waves of `slots` blocks, and
    for fewer rows about TARGET_WAVES waves (UNEVEN_WAVES for one row per block where the rows are
    not alike); always stretches of at least MIN_CHUNK floats, and a stretch of B small enough for
    the L2 when several blocks share it. A stretch takes ceil(M / rows_per_block) blocks.
    `rows_alike`: every row starts at the same offset from a 16-byte boundary."""
    rows, M = M, -(-M // rows_per_block)  # from here on, M counts the blocks of one stretch
    why = []
    most, least = max(1, K // T.MIN_CHUNK), 1
    share = int(T.B_SHARE_OF_L2 * l2_bytes)
    if M > 1 and 4 * K > T.B_SHARE_OF_L2 * l2_bytes:
        least = min(most, -(-4 * K // share))
        why.append(Reason("splits", "b over l2", {"K": K, "share": T.B_SHARE_OF_L2, "l2": l2_bytes, "least": least}))
    facts = {"rows": rows, "blocks": M, "warps_per_sm": warps_per_sm, "max_warps": max_warps, "busy": T.BUSY_WARPS, "slots": slots,
                 "alike": rows_alike, "min_chunk": T.MIN_CHUNK}
    if warps_per_sm >= T.BUSY_WARPS * max_warps and least == 1:
        waves = M / slots
        last = waves - math.ceil(waves) + 1  # how full the last wave is
        fills = rows_alike and (waves <= 1 or last >= T.FULL_LAST_WAVE)  # one block per row fills its waves
        if most == 1 or waves >= T.SPLIT_BELOW_WAVES or fills:
            too_short = not fills and waves < T.SPLIT_BELOW_WAVES  # so most == 1
            why.append(Reason("splits", "busy unsplit", dict(facts, waves=waves, last=last, too_short=too_short)))
            return 1, why
        s = min(most, -(-T.BUSY_SPLIT_WAVES * slots // M))
        why.append(Reason("splits", "busy split", dict(facts, waves=waves, last=last, splits=s,
                                                       full_last=T.FULL_LAST_WAVE, busy_waves=T.BUSY_SPLIT_WAVES)))
        return s, why
    uneven = not rows_alike and rows_per_block == 1  # blocks of several rows keep TARGET_WAVES
    target = T.UNEVEN_WAVES if uneven else T.TARGET_WAVES
    s = min(most, max(least, (target * slots) // M, 1))
    why.append(Reason("splits", "few rows", dict(facts, splits=s, rows_per_block=rows_per_block, is_uneven=uneven,
                                                 uneven=T.UNEVEN_WAVES, target=T.TARGET_WAVES, most=most)))
    if s > 1 and rows * K <= slots * T.ONE_TRIP:  # little data: one trip per thread
        s = min(max(1, K // T.ONE_TRIP), max(s, (target * slots) // M))
        why.append(Reason("splits", "one trip", {"K": K, "floats": rows * K, "threads": slots * T.SPLIT_BLOCK, "splits": s}))
    return s, why
