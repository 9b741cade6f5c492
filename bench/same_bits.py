"""Do gemvlab's kernels give the same bits as before a change? Capture once, compare after.

    python bench/same_bits.py capture bench/results/h200-bits.json   # on a GPU, before the change
    python bench/same_bits.py compare bench/results/h200-bits.json   # on the same GPU, after it
    python bench/same_bits.py list                                   # the cases and plans (no GPU)

Each case is a fixed shape and layout, with inputs drawn from a seeded generator on the GPU, run
through the public API only (``lab.gemv`` with or without a stage, ``lab.explain``), twice: the
file keeps the SHA-256 of the output's bytes and the plan ``lab.explain`` names. ``compare``
fails when a hash or a plan differs, or when two runs of one case differ. The cases cover every
stage at several block sizes and variants and every kernel variant the dispatcher's rule picks,
in every layout it takes (odd K, views that start mid-row, row strides, B (K,), (K, 1) or
strided, M = 1, empty shapes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    M: int
    K: int
    stage: str | None = None  # None: the dispatcher
    block: int | None = None
    variant: int | None = None
    offset: int = 0  # floats from the start of A's storage to A[0, 0]
    pad: int = 0  # floats between one row's end and the next row's start (row stride K + pad)
    b: str = "1d"  # "1d" (K,), "2d" (K, 1), "offset" (starts 1 float in), "strided" (stride 2)

    @property
    def name(self) -> str:
        how = self.stage or "gemv"
        if self.block:
            how += f" block {self.block}"
        if self.variant is not None:
            how += f" variant {self.variant}"
        layout = f"offset {self.offset}, " if self.offset else ""
        layout += f"lda {self.K + self.pad}, " if self.pad else ""
        return f"{self.M} x {self.K}, {layout}B {self.b}: {how}"


def cases() -> list[Case]:
    out = []
    # The stages, at the block sizes and variants the notebooks teach.
    for block in (32, 256):
        out.append(Case(512, 4096, "naive", block))
    for block in (128, 1024):
        out.append(Case(512, 8192, "coalesced", block))
        out.append(Case(512, 8192, "vectorized", block))
    for v in (1, 2, 4, 8):
        out.append(Case(300, 65536, "warp_shuffle", 256, v))
    for v in (1, 2):
        out.append(Case(300, 65536, "warp_shuffle_l1", 256, v))
    for v in (1, 2, 4, 8, 16):
        out.append(Case(257, 16384, "multirow", 128, v, b="2d"))
    # The dispatcher: row tiles, every tile entry and loads per thread.
    for K in (1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 24, 28, 31, 32, 33, 40, 44, 45, 48, 49, 50, 64):
        out.append(Case(-(-6_000_000 // K) + 37, K))
    out += [Case(400_001, 33, offset=3), Case(300_000, 50, pad=1), Case(500_000, 20, pad=2, b="2d")]
    # rows_per_warp: G = 4, 8, 16, 32, B as float4s or scalars, little data and more.
    for M, K in ((1_000_000, 65), (1_000_000, 96), (500_000, 128), (100_000, 513), (60_000, 1000),
                 (40_000, 2048), (200_000, 512), (1000, 500), (16, 1024), (8192, 128), (5, 3), (1, 1)):
        out.append(Case(M, K))
    out += [Case(100_000, 300, offset=1), Case(50_000, 777, b="strided"), Case(30_000, 1024, pad=4, b="2d")]
    # split_k: one block per row, split for waves, for odd K, for one trip, rows sharing B.
    for M, K in ((2048, 131_072), (700, 400_000), (1100, 240_000), (1024, 262_147), (500, 1_000_001),
                 (128, 2_097_152), (16, 1 << 20), (1, 1 << 22), (1, 65536), (16, 65536), (1, 8192),
                 (3, 5_000_000), (2, 8_000_000), (3, 5_000_001), (8, 3_000_000), (4096, 4099), (1, 4099 * 100)):
        out.append(Case(M, K))
    out += [Case(8, 3_000_000, offset=1), Case(8, 4_000_000, offset=1), Case(5, 4_000_003, b="offset"), Case(1024, 262_144, offset=2, b="2d"), Case(64, 1_000_003, b="offset"),
            Case(300, 100_003, pad=5), Case(2000, 20_000, b="strided"), Case(1, 1_000_001, offset=3)]
    # Empty shapes: nothing to launch, or zeros.
    out += [Case(0, 100), Case(100, 0)]
    return out


def inputs(c: Case, seed: int, device="cuda"):
    """A and B for a case: torch.rand from a generator seeded with `seed` on the GPU (on the CPU,
    `device="cpu"`, uninitialised storage of the same layout, for `list`)."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed)

    def draw(n):
        return torch.rand(n, device=device, generator=g) if device == "cuda" else torch.empty(n)

    lda = c.K + c.pad
    storage = draw(c.offset + c.M * lda + 4)
    A = storage[c.offset:c.offset + c.M * lda].view(c.M, lda)[:, :c.K]
    if c.b == "strided":
        B = draw(2 * c.K)[::2]
    elif c.b == "offset":
        B = draw(c.K + 1)[1:]
    else:
        B = draw(c.K)
    return A, (B.reshape(c.K, 1) if c.b == "2d" else B)


def run_case(c: Case, seed: int) -> dict:
    import torch

    import gemvlab as lab

    A, B = inputs(c, seed)
    plan = lab.explain(A, B).splitlines()[0] if c.stage is None else c.name.split(": ")[1]
    digests = []
    for _ in range(2):
        C = lab.gemv(A, B) if c.stage is None else lab.gemv(A, B, c.stage, c.block, c.variant)
        torch.cuda.synchronize()
        digests.append(hashlib.sha256(C.contiguous().cpu().numpy().tobytes()).hexdigest())
    return {"case": c.name, "plan": plan, "sha256": digests[0], "repeats": digests[0] == digests[1],
            "shape": list(C.shape)}


def capture(path: str) -> int:
    import torch

    import gemvlab

    found = [run_case(c, seed) for seed, c in enumerate(cases())]
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "gemvlab": gemvlab.__file__, "cases": found}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    bad = [r["case"] for r in found if not r["repeats"]]
    print(f"captured {len(found)} cases on {doc['gpu']} with {doc['gemvlab']} into {path}; {len(bad)} differ "
          "between two runs")
    for name in bad:
        print(f"  not repeatable: {name}")
    return 1 if bad else 0


def compare(path: str) -> int:
    import torch

    with open(path) as f:
        before = {r["case"]: r for r in json.load(f)["cases"]}
    now = [run_case(c, seed) for seed, c in enumerate(cases())]
    problems = []
    for r in now:
        old = before.get(r["case"])
        if old is None:
            problems.append(f"{r['case']}: not in {path}")
        elif (old["sha256"], old["plan"], old["shape"]) != (r["sha256"], r["plan"], r["shape"]):
            what = "plan" if old["plan"] != r["plan"] else "bits"
            problems.append(f"{r['case']}: {what} differ ({old['plan']} -> {r['plan']})")
        if not r["repeats"]:
            problems.append(f"{r['case']}: two runs differ")
    kernels = sorted({r["plan"].split(": ", 1)[-1].split(" x ")[0] for r in now})
    import gemvlab

    print(f"{len(now)} cases on {torch.cuda.get_device_name()} with {gemvlab.__file__}, {len(kernels)} kernels: "
          f"{len(now) - len(problems)} the same bits as {path}")
    for k in kernels:
        print(f"  {k}")
    for p in problems:
        print(f"  DIFFERENT {p}")
    return 1 if problems else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=("capture", "compare", "list"))
    p.add_argument("path", nargs="?", default="bench/results/h200-bits.json")
    a = p.parse_args(argv)
    if a.command == "list":  # needs no GPU: the dispatcher's plan for the recorded GPU
        import gemvlab as lab

        for seed, c in enumerate(cases()):
            plan = lab.explain(*inputs(c, seed, "cpu")).splitlines()[0] if c.stage is None else ""
            print(f"{c.name}  {plan}")
        return 0
    return capture(a.path) if a.command == "capture" else compare(a.path)


if __name__ == "__main__":
    sys.exit(main())
