"""Hardware counters from Nsight Compute (ncu) for gemvlab's kernels and torch.matmul.

    rows = counters.run(2048, 1048576)      # on a GPU with ncu: one row per profiled kernel
    counters.show(rows)

ncu replays each kernel several times to read its counters; it needs the GPU to itself and
takes tens of seconds at the headline shape. ``python -m gemvlab record`` keeps its rows so that
a machine without a GPU (or without ncu) shows what the H200 measured. The child process that
ncu profiles is ``python -m gemvlab.measure.counters M K``.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys

from ..native import toolchain

METRICS = {
    "gpu__time_duration.sum": "time",
    "dram__bytes_read.sum": "DRAM bytes read",
    "lts__t_sectors_srcunit_tex_op_read.sum": "L2 sectors read (from the SMs)",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global load requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "L1 sectors loaded",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum": "L1 sector hits",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "warps active, % of peak",
    "launch__grid_size": "grid", "launch__block_size": "block", "launch__registers_per_thread": "registers",
}
#: What the child runs, in this order: (label, stage or None for torch.matmul, block, variant).
KERNELS = (("2 coalesced", "coalesced", 1024, None), ("3 vectorized", "vectorized", 512, None),
           ("4b A through the L1", "warp_shuffle_l1", 256, 2), ("4 warp_shuffle", "warp_shuffle", 256, 2),
           ("5 multirow", "multirow", 1024, 2), ("gemv (dispatcher)", "gemv", None, None),
           ("torch.matmul", None, None, None))


#: The kernels a notebook's live run profiles (fewer: each takes ncu several replays).
LIVE = ("4b A through the L1", "4 warp_shuffle", "gemv (dispatcher)", "torch.matmul")


def command(M: int, K: int, only=None) -> list[str]:
    ncu = toolchain.find_tool("ncu") or "ncu"
    return [ncu, "--clock-control", "none", "--csv", "--page", "raw", "--metrics", ",".join(METRICS),
            sys.executable, "-m", "gemvlab.measure.counters", str(M), str(K), *(only or ())]


def run(M: int, K: int, timeout: float = 600, only=None) -> list[dict]:
    """Profile KERNELS (or those labelled in `only`) at M x K under ncu; one dict per kernel
    launch ncu saw."""
    env = toolchain.child_env()
    p = subprocess.run(command(M, K, only), capture_output=True, text=True, timeout=timeout, env=env, check=False)
    if p.returncode:
        raise RuntimeError(f"ncu failed ({p.returncode}): {(p.stderr or p.stdout)[-2000:]}")
    return parse(p.stdout)


def parse(text: str) -> list[dict]:
    """Rows of ncu's --csv --page raw output: kernel name and each metric (units in the 2nd row)."""
    start = text.find('"ID"')
    rows = list(csv.reader(io.StringIO(text[start:])))
    if len(rows) < 3:
        return []
    header, units = rows[0], rows[1]
    out = []
    for r in rows[2:]:
        if len(r) != len(header):
            continue
        d = dict(zip(header, r))
        row = {"kernel": d.get("Kernel Name", ""), "units": {}}
        for metric in METRICS:
            if metric in d:
                value = d[metric].replace(",", "")
                try:
                    row[metric] = float(value)
                except ValueError:
                    row[metric] = value
                row["units"][metric] = units[header.index(metric)]
        out.append(row)
    return out


def kernel_name(name: str) -> str:
    """A kernel's name with its template arguments, without its parameter list (ncu writes bool
    template arguments as 0 and 1: gemvlab's kernels get false and true, as the build report)."""
    name = name.replace("void ", "")
    name = name[:name.index("(")] if "(" in name else name
    if name.startswith(("gemv_warp_shuffle<", "gemv_rows_per_warp<")):
        name = name.replace(", 0>", ", false>").replace(", 1>", ", true>")
    if name.startswith("gemv_split_k<"):  # <LOADS, B_VEC, ROWS>
        loads, b_vec, rows = name[name.index("<") + 1:-1].split(", ")
        name = f"gemv_split_k<{loads}, {'true' if b_vec == '1' else 'false'}, {rows}>"
    return name


#: Kernels torch launches to make the inputs (torch.rand, torch.full), not part of any GEMV.
INPUT_KERNELS = ("distribution", "elementwise", "fill")


def show(rows: list[dict], label: str = "", only=None) -> None:
    """A table of the counters, one row per kernel (`only`: names to keep, matched as substrings);
    the kernels that made the inputs are left out."""
    rows = [r for r in rows if not any(w in r["kernel"] for w in INPUT_KERNELS)]
    rows = [r for r in rows if not only or any(o in kernel_name(r["kernel"]) for o in only)]
    print(f"{'kernel':<34}{'grid x block':>16}{'time us':>10}{'DRAM MB':>9}{'L2 sect M':>10}"
          f"{'L1 sect M':>10}{'L1 hit':>8}{'sect/req':>9}{'warps':>7}   {label}")
    for r in rows:
        name = kernel_name(r["kernel"])[:33]
        t = r.get("gpu__time_duration.sum", 0)
        t_us = t * {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}.get(
            r["units"].get("gpu__time_duration.sum"), 1e-3)
        dram = r.get("dram__bytes_read.sum", 0)
        unit = r["units"].get("dram__bytes_read.sum", "byte")
        dram_mb = dram * {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3}.get(unit, 1e-6)
        req = r.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") or 0
        sect = r.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") or 0
        hit = r.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum") or 0
        grid = f"{int(r.get('launch__grid_size', 0))} x {int(r.get('launch__block_size', 0))}"
        print(f"{name:<34}{grid:>16}{t_us:>10.1f}{dram_mb:>9.0f}"
              f"{(r.get('lts__t_sectors_srcunit_tex_op_read.sum') or 0) / 1e6:>10.1f}{sect / 1e6:>10.1f}"
              f"{(hit / sect if sect else 0):>8.0%}{(sect / req if req else 0):>9.1f}"
              f"{r.get('sm__warps_active.avg.pct_of_peak_sustained_active', 0):>6.0f}%")


def child(M: int, K: int, only=None) -> None:
    """Run each of KERNELS (those labelled in `only`) once on fresh inputs (what ncu profiles)."""
    import torch

    from ..api import gemv

    A = torch.rand(M, K, device="cuda")
    B = torch.rand(K, 1, device="cuda")
    for label, stage, block, variant in KERNELS:
        if only and label not in only:
            continue
        if stage is None:
            torch.matmul(A, B)
        elif stage == "gemv":
            gemv(A, B)
        else:
            gemv(A, B, stage, block, variant)
        torch.cuda.synchronize()


if __name__ == "__main__":
    child(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] or None)
