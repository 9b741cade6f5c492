"""The parts of gemvlab.bench that need no GPU."""

from gemvlab import bench


def test_bytes_and_bandwidth():
    assert bench.bytes_moved(2048, 1 << 20) == 4 * (2048 * 2**20 + 2**20 + 2048)
    assert abs(bench.gbps(4.8e9, 1.0) - 4800) < 1e-9


def test_ceiling_configs_follow_the_shape():
    long_rows = bench.ceiling_configs(2048, 1 << 20)
    assert long_rows == list(bench.CEILING_CONFIGS)  # every pass applies
    short = bench.ceiling_configs(2097152, 128)  # 32 float4s per row: too few for a block per row
    assert short and all(per_sm > 0 for _, per_sm in short)
    k1024 = bench.ceiling_configs(262144, 1024)
    assert (64, 0) in k1024 and (512, 0) not in k1024
    odd = bench.ceiling_configs(4096, 4099)  # K % 4 != 0: only the flat grid pass
    assert odd and all(per_sm > 0 for _, per_sm in odd)
