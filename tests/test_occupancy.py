from gemvlab.occupancy import HOPPER, largest_block, occupancy


def test_threads_limit():
    o = occupancy(registers=32, block=256, limits=HOPPER)
    assert (o.blocks_per_sm, o.warps_per_sm, o.occupancy, o.limiter) == (8, 64, 1.0, "threads")


def test_block_slots_limit_small_blocks():
    o = occupancy(registers=16, block=32, limits=HOPPER)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (32, 32, "blocks")


def test_registers_limit():
    o = occupancy(registers=168, block=256, limits=HOPPER)  # 168 * 32 = 5376 per warp, 8 warps
    assert o.blocks_per_sm == 65536 // (5376 * 8) == 1 and o.limiter == "registers"
    assert occupancy(registers=168, block=1024, limits=HOPPER).blocks_per_sm == 0
    assert largest_block(168, HOPPER) == 384


def test_shared_memory_limit():
    o = occupancy(registers=16, block=128, limits=HOPPER, shared_bytes=100_000)
    assert o.blocks_per_sm == 2 and o.limiter == "shared memory"
