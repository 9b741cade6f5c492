"""The parts of gemvlab.measure that need no GPU."""

from gemvlab.measure import bench, ceiling
from gemvlab.measure.timing import Timing


def test_bytes_and_bandwidth():
    assert bench.bytes_moved(2048, 1 << 20) == 4 * (2048 * 2**20 + 2**20 + 2048)
    assert abs(bench.gbps(4.8e9, 1.0) - 4800) < 1e-9


def test_ceiling_configs_follow_the_shape():
    long_rows = ceiling.ceiling_configs(2048, 1 << 20)
    assert long_rows == list(ceiling.CEILING_CONFIGS)  # every pass applies
    short = ceiling.ceiling_configs(2097152, 128)  # 32 float4s per row: too few for a block per row
    assert short and all(per_sm > 0 for _, per_sm in short)
    k1024 = ceiling.ceiling_configs(262144, 1024)
    assert (64, 0) in k1024 and (512, 0) not in k1024
    odd = ceiling.ceiling_configs(4096, 4099)  # K % 4 != 0: only the flat grid pass
    assert odd and all(per_sm > 0 for _, per_sm in odd)


def test_timing_statistics():
    t = Timing.of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.ms, t.min_ms, t.max_ms, t.n, t.mean_ms) == (3.0, 1.0, 5.0, 5, 3.0)
    assert t.q25_ms < t.ms < t.q75_ms
    assert "mean_ms" not in t.as_dict()  # the results schema keeps medians and quartiles
    one = Timing.of([2.0])
    assert (one.q25_ms, one.q75_ms) == (2.0, 2.0)
