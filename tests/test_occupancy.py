"""gemvlab.occupancy against CUDA's own occupancy calculator (cuda_occupancy.h, compiled here with
g++), and what a grid really leaves on the SMs."""

import shutil
import subprocess
from pathlib import Path

import pytest

import gemvlab as lab
from gemvlab.gpu.occupancy import HOPPER, KNOWN, largest_block, occupancy, residency
from gemvlab.native import toolchain

CALCULATOR = Path(__file__).with_name("occupancy_calculator.cpp")


def test_threads_limit():
    o = occupancy(registers=32, block=256, limits=HOPPER)
    assert (o.blocks_per_sm, o.warps_per_sm, o.occupancy, o.limiter) == (8, 64, 1.0, "threads")


def test_block_slots_limit_small_blocks():
    o = occupancy(registers=16, block=32, limits=HOPPER)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (32, 32, "blocks")


def test_registers_are_allocated_per_sub_partition():
    # 40 registers: 1280 per warp. A quarter of the register file (16384) holds 12 such warps, so
    # the SM holds 48 warps: 24 blocks of 64 threads, not 65536 // (1280 * 2) = 25.
    o = occupancy(registers=40, block=64, limits=HOPPER)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (24, 48, "registers")


def test_registers_limit_and_blocks_that_do_not_fit():
    o = occupancy(registers=168, block=256, limits=HOPPER)  # 5376 per warp: 3 per quarter, 12 per SM
    assert o.blocks_per_sm == 1 and o.limiter == "registers"
    assert occupancy(registers=168, block=1024, limits=HOPPER).blocks_per_sm == 0
    assert largest_block(168, HOPPER) == 384


def test_shared_memory_limit():
    o = occupancy(registers=16, block=128, limits=HOPPER, dynamic_shared_bytes=40_000)
    assert o.blocks_per_sm == 5 and o.limiter == "shared memory"  # (40000 + 1024) -> 41088 B each


def test_residency_of_a_small_grid():
    """The naive kernel at block 256: 8 blocks on 132 SMs. The calculator says 8 blocks per SM fit;
    spread one per SM (the model's assumption), the grid leaves 124 idle."""
    r = residency(occupancy(24, 256, HOPPER), grid=8, sms=132)
    assert (r.waves, r.busy_sms, r.first_wave_warps_per_sm) == (1, 8, 8)
    assert r.warps_per_sm == pytest.approx(8 * 8 / 132) and r.occupancy < 0.01
    assert "124 of 132 SMs idle if the scheduler spreads the blocks (assumed)" in r.describe()


def test_residency_in_waves():
    """Stage 2 at block 64 over 2048 rows: 32 blocks fit per SM, the grid gives each SM 15.5."""
    r = residency(occupancy(16, 64, HOPPER, dynamic_shared_bytes=256), grid=2048, sms=132)
    assert r.blocks_per_sm == 32 and r.waves == 1
    assert r.first_wave_warps_per_sm == pytest.approx(2048 / 132 * 2)
    # warp_shuffle<4> at 128 threads: 12 blocks per SM, 1584 slots, so a second wave of 464 blocks
    r = residency(occupancy(40, 128, HOPPER), grid=2048, sms=132)
    assert (r.blocks_per_sm, r.waves) == (12, 2) and r.last_wave_fill == pytest.approx(464 / 1584)


# ---- against the toolkit's calculator --------------------------------------------------------

@pytest.fixture(scope="module")
def calculator(tmp_path_factory):
    home = toolchain.find_cuda_home()
    gxx = shutil.which("g++")
    if not home or not gxx or not Path(home, "include", "cuda_occupancy.h").exists():
        pytest.skip("needs g++ and the CUDA toolkit's cuda_occupancy.h")
    exe = tmp_path_factory.mktemp("occ") / "occupancy_calculator"
    subprocess.run([gxx, "-O1", f"-I{home}/include", str(CALCULATOR), "-o", str(exe)], check=True)

    def run(cases):
        text = "".join(
            f"{L.compute_capability.replace('.', ' ')} {L.max_threads} {L.registers} {L.shared_bytes} "
            f"{L.shared_per_block_bytes} {L.shared_reserved_per_block} {L.shared_per_block_default} "
            f"{L.max_threads_per_block} {regs} {static} {dynamic} {block}\n"
            for L, regs, static, dynamic, block in cases)
        out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout
        return [tuple(int(x) for x in line.split()) for line in out.splitlines()]

    return run


def _compare(calculator, cases):
    answers = calculator(cases)
    assert len(answers) == len(cases)
    for (L, regs, static, dynamic, block), (blocks, by_regs, by_warps, by_blocks, by_smem) in zip(cases, answers):
        o = occupancy(regs, block, L, static, dynamic)
        what = f"{L.compute_capability} regs={regs} smem={static}+{dynamic} block={block}"
        assert o.blocks_per_sm == blocks, what
        assert (o.by["registers"], o.by["threads"], o.by["blocks"]) == (by_regs, by_warps, by_blocks), what
        assert o.by["shared memory"] == by_smem, what


def test_every_stage_variant_and_block_matches_the_calculator(calculator):
    """Every kernel gemvlab launches (stages, stage 4's steps, the dispatcher's kernels), at every
    block size it may be launched with, on the recorded GPU and the smaller ones the notebooks
    scale to."""
    cases = []
    for kernel in lab.kernels.ALL_KERNELS:
        for variant in (kernel.variants if kernel.template else (None,)):
            res = lab.resources(kernel, variant)
            for block in range(32, 1025, 32):
                for L in KNOWN.values():
                    cases.append((L, res.registers, res.shared_bytes, kernel.shared_per_thread * block, block))
    _compare(calculator, cases)


def test_register_counts_and_shared_sizes_match_the_calculator(calculator):
    cases = [(L, regs, static, dynamic, block)
             for L in KNOWN.values() for regs in (1, 16, 24, 31, 32, 33, 40, 48, 64, 72, 96, 128, 168, 200, 255)
             for static, dynamic in ((0, 0), (128, 0), (0, 4096), (8192, 1024), (40000, 0))
             for block in (1, 31, 32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024)]
    _compare(calculator, cases)
