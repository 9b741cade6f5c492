"""Cells about torch.matmul: the kernels it launches (torch.profiler), their waves, and Nsight
Compute's counters beside gemvlab's."""

from __future__ import annotations

import torch

from .. import results
from ..gpu import occupancy
from ..measure.accuracy import random_inputs
from ..native import toolchain
from .context import Context


def matmul_kernels(ctx: Context) -> None:
    """The kernels torch.matmul (cuBLAS) launches at the headline shape, with grids and times:
    torch.profiler, live on a GPU, recorded otherwise."""
    from ..measure import profile

    if ctx.live:
        M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
        A, B = random_inputs(M, K)
        kernels, label = profile.kernels_of(lambda: torch.matmul(A, B)), f"live on {torch.cuda.get_device_name()}"
        del A, B
    else:
        found = (ctx.recorded.get("profiles") or {}).get("torch.matmul") or {}
        kernels, label, M, K = found.get("kernels") or [], results.label(ctx.recorded), found.get("M"), found.get("K")
    print(f"torch.matmul(A, B), M = {M:,}, K = {K:,}: each kernel's median over 5 calls, L2 flushed before each")
    profile.show(kernels, f"[{label}]")


def counters(ctx: Context, only=None, live: bool = True) -> None:
    """Nsight Compute's counters for the stages and torch.matmul at the headline shape: with `live`,
    on a machine with a GPU and ncu, run now for stage 4, the dispatcher and torch.matmul (half a
    minute); the recorded H200's (every stage) otherwise."""
    from ..measure import counters as ncu

    found, label = None, None
    if live and ctx.live and toolchain.find_tool("ncu"):
        M, K = ctx.doc["headline"]["M"], ctx.doc["headline"]["K"]
        try:
            found = {"M": M, "K": K, "rows": ncu.run(M, K, timeout=300, only=ncu.LIVE), "kernels": list(ncu.LIVE)}
            label = f"live on {torch.cuda.get_device_name()}"
        except Exception as e:  # noqa: BLE001 - no permission for counters, say so and show the recorded
            print(f"ncu did not run here ({str(e).splitlines()[0][:200]}); the recorded counters follow")
    if found is None:
        found, label = ctx.recorded.get("counters") or {}, results.label(ctx.recorded)
    if not found.get("rows"):
        print(f"no counters recorded ({found.get('error', 'not measured')})")
        return
    print(f"Nsight Compute, M = {found['M']:,}, K = {found['K']:,}, one launch each")
    ncu.show(found["rows"], label=f"[{label}]", only=only)


def matmul_overhead(ctx: Context) -> None:
    """torch.matmul's first kernel at the headline shape: its blocks, their waves, and its time
    beyond reading A at the read ceiling (its cause is not separated here)."""
    doc = ctx.recorded
    prof = (doc.get("profiles") or {}).get("torch.matmul") or {}
    if not prof.get("kernels"):
        print("no torch.matmul profile recorded")
        return
    k = max(prof["kernels"], key=lambda k: k["us"])
    blocks = k["grid"][0] * k["grid"][1] * k["grid"][2]
    regs = k["registers"] or 32
    # The recorded GPU's limits (the profile is the recorded one, whatever GPU is here).
    o = occupancy.occupancy(regs, k["block"][0], occupancy.SMLimits.from_dict(doc["machine"]["sm_limits"]),
                            k["shared_bytes"] or 0)
    sms = doc["machine"]["sm_count"]
    slots = o.blocks_per_sm * sms
    waves = occupancy.residency(o, blocks, sms).waves
    M, K = prof["M"], prof["K"]
    at_ceiling = 4 * M * K / (results.headline(doc)["ceiling"]["GBps"] * 1e9) * 1e3
    extra = k["us"] / 1e3 - at_ceiling
    shared = "shared memory not profiled" if k.get("shared_bytes") is None else f"{k['shared_bytes']} B of shared memory"
    from ..measure.profile import short_name

    print(f"{short_name(k['name'])}: {blocks:,} blocks of {k['block'][0]} threads, {4 * M * K / blocks / 1024:.0f} KiB of A "
          f"each on average; {o.blocks_per_sm} blocks per SM fit ({regs} registers, {shared}; "
          f"limited by {o.limiter}): {waves} waves of {slots:,}")
    print(f"{k['us'] / 1e3:.3f} ms, against {at_ceiling:.3f} ms to read A at the read ceiling: {extra:.3f} ms more  "
          f"[{results.label(doc)}]")
    st = next((r for r in results.headline(doc)["stages"] if r["stage"] == "warp_shuffle"), None)
    if st:
        print(f"stage 4 ({st['block']} threads): {M:,} blocks, one per row, {4 * K / 2**20:.0f} MiB of A each; "
              f"{st['ms']:.3f} ms, {st['ms'] - at_ceiling:.3f} ms beyond the read ceiling's time")
