"""The notebooks' setup: live on a GPU, recorded otherwise; the two numbers, the model's inputs, and
the pitfall demos. Every number printed says where it comes from ("live on ..." or "recorded on ...")."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .. import results
from ..gpu import occupancy
from ..measure.timing import bytes_moved
from ..native import toolchain


@dataclass
class Context:
    live: bool
    doc: dict  # the stage table's source: a live run here, or the recorded file
    recorded: dict  # the recorded file (sweeps, shapes, pitfalls)
    predictions: dict = field(default_factory=dict)  # stage name -> model.Prediction, made before measuring

    @property
    def label(self) -> str:
        return results.label(self.doc)


def setup(upto: int) -> Context:
    """Configure the build, load the recorded results and, on a GPU, measure stages 1..upto live
    at the headline shape (round-robin with torch.matmul and the read ceiling), scaled down to
    fit the GPU's memory when needed (and said so)."""
    toolchain.configure()  # sets CUDA_HOME and friends where missing, and says so once
    recorded = results.load()
    live = torch.cuda.is_available()
    if live:
        from ..results.record import live_headline

        doc = live_headline(upto=upto, rounds=3, warmup_ms=10, rep_ms=150)
        head = doc["headline"]
        what = f"Stages 1 to {upto}, torch.matmul" if upto else "torch.matmul"
        print(f"Live: {torch.cuda.get_device_name()}. {what} and the read ceiling measured just now; sweeps, "
              f"shapes and pitfall transcripts below are {results.label(recorded)} unless a cell says live.")
        if head.get("scaled_from"):
            M0, K0 = head["scaled_from"]
            print(f"Scaled to fit this GPU's memory: M = {head['M']:,}, K = {head['K']:,} (A is "
                  f"{4 * head['M'] * head['K'] / 2**30:.1f} GiB) instead of M = {M0:,}, K = {K0:,} "
                  f"({4 * M0 * K0 / 2**30:.0f} GiB). Live numbers are for the scaled shape; recorded ones for the full one.")
    else:
        doc = recorded
        print(f"No CUDA GPU here: numbers are {results.label(recorded)}; compiler facts are computed here.")
    return Context(live, doc, recorded)


def two_numbers(ctx: Context) -> None:
    """Bytes the headline GEMV must move, and the floor times they imply."""
    M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
    nbytes = bytes_moved(M, K)
    peak = ctx.doc["machine"].get("datasheet_GBps")
    ceiling = results.headline(ctx.doc)["ceiling"]
    print(f"M = {M:,}, K = {K:,}: A is {4 * M * K / 2**30:.2f} GiB; bytes moved 4*(M*K + K + M) = {nbytes / 1e9:.3f} GB")
    print(f"arithmetic: 2*M*K = {2 * M * K / 1e9:.2f} GFLOP, {2 * M * K / nbytes:.2f} FLOP per byte: memory-bound")
    if peak:
        print(f"floor at the datasheet peak ({peak} GB/s): {nbytes / peak / 1e6:.3f} ms")
    if ceiling:
        bw = ceiling["GBps"]
        print(f"floor at the measured read ceiling ({bw:.0f} GB/s): {nbytes / bw / 1e6:.3f} ms  [{ctx.label}]")


def model_inputs(ctx: Context) -> None:
    """The measured numbers the model runs on (this GPU's live, or the recorded run's), and what
    Little's law asks of them."""
    m = ctx.doc["machine"]
    mem = m["memory"]
    ceiling = results.headline(ctx.doc)["ceiling"]
    latency = mem.get("far_latency_ns") or mem["dram_latency_ns"]
    print(f"memory latency, one load at a time: {latency:.0f} ns (random lines over A's size)")
    if mem.get("warp_latency_ns"):
        print(f"memory latency of one load instruction whose 32 lanes read 32 unrelated lines: "
              f"{mem['warp_latency_ns']:.0f} ns")
    print(f"read ceiling: {ceiling['GBps']:,.0f} GB/s; {m['sm_count']} SMs; SM clock {mem['sm_clock_mhz']} MHz")
    need = ceiling["GBps"] * 1e9 * latency * 1e-9
    print(f"Little's law: reading at the ceiling needs {ceiling['GBps']:,.0f} GB/s x {latency:.0f} ns = "
          f"{need / 2**20:.2f} MiB in flight, {need / m['sm_count'] / 1024:.1f} KiB per SM  [{ctx.label}]")


def sm_limits(recorded: dict | None = None) -> occupancy.SMLimits:
    """This GPU's per-SM limits, or the recorded GPU's when there is no GPU here."""
    if torch.cuda.is_available():
        return occupancy.limits_of_device()
    return occupancy.SMLimits.from_dict((recorded or results.load())["machine"]["sm_limits"])


def pitfall(ctx: Context, demo: str) -> None:
    """Run a pitfall demo in a child process (on a GPU), or show the recorded GPU's transcript."""
    from .. import pitfalls

    print(pitfalls.DEMOS[demo])
    if ctx.live:
        result = pitfalls.run(demo)
        result["label"] = f"live on {torch.cuda.get_device_name()}, in a child process"
    else:
        result = pitfalls.recorded(demo, ctx.recorded)
    pitfalls.show(result)
