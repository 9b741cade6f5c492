"""A performance model for every kernel in the workbook: bytes in flight and latency (Little's
law), what the grid leaves on the SMs, and two caps. Computed before a measurement is shown.

Little's law: to sustain a bandwidth, memory must have bandwidth x latency bytes requested and
not yet delivered. A warp keeps a fixed number of bytes of A in flight (its loads issued before
it waits); so the bandwidth a launch can reach is

    resident warps x bytes in flight per warp / (memory latency + the L1's time for those loads)

capped by the read ceiling (what a read-only pass over A measured in the same run) and, for a
kernel whose warps touch many cache lines per instruction, by the L1's rate of about one
128-byte line per clock per SM. Resident warps come from the occupancy calculator and the grid
(gemvlab.gpu.occupancy): blocks run in waves, and each wave is priced on its own, so a nearly empty
last wave costs what it costs.

The inputs are measurements of the GPU, not of the kernel: the DRAM latency of a dependent load
(``gemvlab.measure.latency``: one thread chasing pointers), the SM clock, the read ceiling. Where a
prediction misses, :class:`Prediction` says which term set it, so the look-back can name the
assumption that failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..gpu import occupancy
from ..kernels import get_stage
from ..native.sass import loads_before_first_use
from .timing import bytes_moved, gbps

#: The L1 looks up about one 128-byte line per SM clock (Nsight Compute counts them as
#: "wavefronts"); a load instruction whose 32 lanes touch 32 different lines takes 32 of them.
#: A fit to the naive stage's block-size sweep (notebook 01 prints the fit).
L1_LINES_PER_CLOCK = 1.0


@dataclass(frozen=True)
class Traffic:
    """What one warp of a kernel has in flight while it waits for memory."""

    bytes_in_flight: int  # bytes of A one warp has requested and not yet received
    l1_lines: int  # 128-byte lines its load instructions look up per such round (A and B)
    why: str
    scattered: bool = False  # each load instruction's 32 lanes read 32 unrelated lines (the naive stage)


def loads_issued(stage, variant=None) -> list[str] | None:
    """The global loads one thread issues before it first uses one, from the kernel's SASS
    (gemvlab.native.sass.loads_before_first_use); None without a disassembler."""
    k = get_stage(stage)
    text = k.build().disassembly()
    return loads_before_first_use(text, k.kernel_name(variant)) if text else None


def a_loads(stage, loads: list[str]) -> int:
    """How many of `loads` (loads_issued) read A: the L2-only ones (`__ldcg`: .STRONG.GPU) where
    the kernel has them; all of them for a pass that reads A alone; else half (A and B in pairs)."""
    if not get_stage(stage).reads_b:
        return len(loads)
    strong = sum("STRONG.GPU" in x for x in loads)
    return strong or max(1, len(loads) // 2)


def a_loads_in_flight(stage, variant=None) -> tuple[int | None, str]:
    """Loads of A one thread issues before it first waits, from the SASS, and the reason;
    (None, why) without SASS."""
    loads = loads_issued(stage, variant)
    if not loads:
        return None, "no disassembler here: the source's count is used"
    n = a_loads(stage, loads)
    return n, f"{n} of A issued before the first use (the SASS: {len(loads)} loads, then a multiply)"


def loads_written(stage, variant: int | None = None) -> int:
    """The independent float4 loads of A per lane per trip that a kernel's source writes (what
    ptxas issues before the first use can be fewer: `a_loads_in_flight` counts it in the SASS)."""
    return get_stage(stage).loads_per_trip(variant)


def traffic(stage, variant: int | None = None) -> Traffic:
    """The loads in flight per warp for a kernel: the pattern from how it reads A, the count of
    loads actually issued before the first use from its SASS."""
    k = get_stage(stage)
    v = k.default if variant is None else variant
    if k.access == "scattered":
        # 32 lanes, 32 rows 4 MiB apart: one 32-byte sector of each row in flight per lane (the
        # next seven floats arrive with the first). Two trips of the 4-times-unrolled loop per
        # sector, each issuing 4 loads of A (32 lines each) and 4 of B (1 line each).
        return Traffic(32 * 32, 2 * (4 * 32 + 4), "32 lanes x one 32-byte sector each (a different row per lane)",
                       scattered=True)
    if k.access == "scalar":
        return Traffic(32 * 4, 2, "1 load of 4 bytes per lane: 128 bytes per warp")
    written = loads_written(k, v)
    n, why = a_loads_in_flight(k, v if k.template else None)
    if n is None:
        n = written
    what = "".join(f"{name} = {a}, " for name, a in zip(k.template, k.arguments(v))) if len(k.template) == 1 else ""
    return Traffic(32 * 16 * n, 8 * n, f"{what}float4 loads of A in flight per lane: {why}: {512 * n} bytes per warp")


@dataclass
class Wave:
    blocks: int
    warps_per_sm: float  # resident warps per SM, averaged over all SMs
    in_flight_bytes: float  # over the whole GPU
    GBps: float
    bound: str  # "bytes in flight", "read ceiling" or "L1 lines"
    ms: float


@dataclass
class Prediction:
    stage: str
    M: int
    K: int
    block: int
    variant: int | None
    grid: int
    occ: occupancy.Occupancy
    res: occupancy.Residency
    traffic: Traffic
    latency_ns: float
    round_ns: float  # one warp's wait per round: latency + its L1 time
    l1_lines_timed: int  # the lines whose L1 time is added to the latency (not those inside it)
    ceiling_GBps: float
    waves: list = field(default_factory=list)
    ms: float = 0.0

    @property
    def GBps(self) -> float:
        return gbps(bytes_moved(self.M, self.K), self.ms)

    @property
    def bound(self) -> str:
        """The term that set most of the time."""
        by = {}
        for w in self.waves:
            by[w.bound] = by.get(w.bound, 0.0) + w.ms
        return max(by, key=by.get) if by else ""

    def describe(self) -> str:
        o, r, t = self.occ, self.res, self.traffic
        lines = [
            f"{get_stage(self.stage).kernel_name(self.variant)}, block {self.block}: grid {self.grid:,} blocks",
            f"  occupancy calculator: {o.blocks_per_sm} blocks ({o.warps_per_sm} warps) per SM, limited by {o.limiter}",
            f"  the grid: {r.describe()}",
            f"  in flight per warp: {t.why}",
            f"  one round per warp: {self.latency_ns:.0f} ns "
            f"{'latency of a load whose 32 lanes read 32 unrelated lines' if t.scattered else 'memory latency'}"
            + (f" + {self.round_ns - self.latency_ns:.0f} ns of L1 time ({self.l1_lines_timed} lines)"
               if self.round_ns - self.latency_ns >= 1 else ""),
        ]
        for i, w in enumerate(self.waves):
            name = "wave" if len(self.waves) == 1 else f"wave {i + 1}" if i < 2 or i == len(self.waves) - 1 else None
            if name is None:
                if i == 2:
                    lines.append(f"  ... {len(self.waves) - 3} more full waves like wave 2")
                continue
            lines.append(f"  {name}: {w.blocks:,} blocks, {w.warps_per_sm:.1f} warps/SM, "
                         f"{w.in_flight_bytes / 2**20:.2f} MiB in flight -> {w.GBps:,.0f} GB/s ({w.bound}), "
                         f"{w.ms:.3f} ms")
        rest_ms = self.ms - sum(w.ms for w in self.waves)
        lines.append(f"  B and C, {4 * (self.K + self.M) / 1e6:,.1f} MB, at the read ceiling: {rest_ms:.3f} ms")
        lines.append(f"  predicted: {self.ms:.3f} ms ({self.GBps:,.0f} GB/s; read ceiling {self.ceiling_GBps:,.0f} GB/s)")
        return "\n".join(lines)


def predict(stage, M: int, K: int, block: int | None = None, variant: int | None = None, *,
            limits: occupancy.SMLimits, sms: int, latency_ns: float, ceiling_GBps: float,
            clock_mhz: float, far_latency_ns: float | None = None, warp_latency_ns: float | None = None,
            grid: int | None = None) -> Prediction:
    """The model's time for one launch of a stage (or step, or read pass, or dispatcher kernel:
    give its `grid`) at M x K."""
    st = get_stage(stage)
    block = getattr(st, "default_block", 256) if block is None else block
    v = st.default if variant is None else variant  # a template argument, or a launch argument (a grid)
    occ = st.occupancy(block, v, limits)
    grid = st.grid(M, block, v or 0) if grid is None else grid
    res = occupancy.residency(occ, grid, sms)
    t = traffic(st, v)
    latency = far_latency_ns or latency_ns  # the chase over all of A: at most 1% of its loads can hit the L2
    lines = t.l1_lines
    if t.scattered and warp_latency_ns:
        # A load instruction whose 32 lanes read 32 unrelated lines waits the warp chase's latency,
        # which already includes that instruction's own 32 lookups.
        latency, lines = warp_latency_ns, t.l1_lines - 32
    l1_ns = lines / L1_LINES_PER_CLOCK / clock_mhz * 1e3
    round_ns = latency + l1_ns
    warps_per_block = -(-block // 32)
    rows_per_block = M / grid if grid else 0  # a split_k block holds a stretch: a fraction of a row
    pred = Prediction(st.name, M, K, block, v, grid, occ, res, t, latency, round_ns, lines, ceiling_GBps)
    if grid == 0 or occ.blocks_per_sm == 0:
        pred.ms = float("inf")
        return pred
    slots = sms * occ.blocks_per_sm
    left = grid
    while left > 0:
        blocks = min(left, slots)
        busy = min(sms, blocks)
        warps = blocks * warps_per_block
        in_flight = warps * t.bytes_in_flight
        gbps = in_flight / (round_ns * 1e-9) / 1e9
        bound = "bytes in flight"
        if gbps > ceiling_GBps:
            gbps, bound = ceiling_GBps, "read ceiling"
        if t.scattered:  # every element of A is one line lookup, shared by the busy SMs' L1s
            lines_per_byte = (t.l1_lines / 2) / (32 * 4 * 4)  # per loop trip: 132 lines for 512 B of A
            l1_gbps = busy * clock_mhz * 1e6 * L1_LINES_PER_CLOCK / lines_per_byte / 1e9
            if l1_gbps < gbps:
                gbps, bound = l1_gbps, "L1 lines"
        wave_bytes = blocks * rows_per_block * K * 4
        ms = wave_bytes / (gbps * 1e9) * 1e3
        pred.waves.append(Wave(blocks, warps / sms, in_flight, gbps, bound, ms))
        left -= blocks
    pred.ms = sum(w.ms for w in pred.waves) + 4 * (K + M) / (ceiling_GBps * 1e9) * 1e3
    return pred


def machine_inputs(doc: dict) -> dict:
    """The model's inputs from a results document (live or recorded): the GPU's limits and SM
    count, the measured latencies and clock, and the read ceiling of its headline run."""
    from ..results import views

    m = doc["machine"]
    mem = m.get("memory") or {}
    ceiling = views.headline(doc)["ceiling"]
    return {"limits": occupancy.SMLimits.from_dict(m["sm_limits"]), "sms": m["sm_count"],
                "latency_ns": mem["dram_latency_ns"], "far_latency_ns": mem.get("far_latency_ns"),
                "warp_latency_ns": mem.get("warp_latency_ns"),
                "clock_mhz": mem["sm_clock_mhz"], "ceiling_GBps": ceiling["GBps"]}


def predict_plan(plan, launch_us: float = 0.0, **inputs) -> Prediction | None:
    """The model for the dispatcher's plan (gemvlab.dispatch.plan.Plan): its kernel over its grid, plus
    `launch_us` per launch (a launch that moves almost nothing, measured)."""
    if plan.kernel not in ("split_k", "rows_per_warp", "row_tiles"):
        return None
    p = predict(plan.kernel, plan.M, plan.K, plan.block, plan.variant, grid=plan.grid, **inputs)
    p.ms += launch_us * 1e-3 * (2 if plan.splits > 1 else 1)
    return p
