"""The decode path (gemvlab.decode: bf16, fp16 and several vectors) as contracts, on the CPU: input
errors name their fix before any launch, the rule takes each branch where its conditions hold and
only picks compiled variants that fit the SM, explain and takes route calls correctly, both kernels
build for sm_75, sm_80 and sm_90, and the recorded decode study keeps its schema. The recorded
H200's and a T4's numbers stand in for a GPU; tuned constants and wording are not pinned."""

import copy
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gemvlab as lab
from gemvlab import checks, decode, dispatch, results
from gemvlab.decode import rule
from gemvlab.gpu.occupancy import KNOWN
from gemvlab.native import kernel as native_kernel
from gemvlab.native import report, toolchain
from gemvlab.results import decode as decode_results
from gemvlab.results import schema

ROOT = Path(__file__).resolve().parents[1]
H200 = dispatch.Device("NVIDIA H200", 132, 60 * 2**20, KNOWN["H200"])
T4 = dispatch.Device("Tesla T4", 40, 4 * 2**20, KNOWN["T4"])
DEVICES = pytest.mark.parametrize("device", [H200, T4], ids=["H200", "T4"])
BF, FP16, FP32 = torch.bfloat16, torch.float16, torch.float32
GRID = tuple(itertools.product((1, 7, 16, 1000, 4096, 100_000), (1, 8, 1000, 4096, 30_000), (1, 2, 3, 8, 9, 16),
                               (BF, FP16, FP32)))


def choose(N=4096, K=4096, n=4, dtype=BF, device=H200, lda=None, w_mod16=0, ldb=1, ldv=None, b_mod16=0):
    """The rule for W (N, K) and B = x.t() (ldb 1, ldv K) unless told otherwise."""
    return decode.choose(N, K, n, dtype, K if lda is None else lda, w_mod16, ldb, K if ldv is None else ldv,
                         b_mod16, device)


def grid_of_plans(device):
    for N, K, n, dtype in GRID:
        if dtype == FP32 and n == 1:
            continue  # the float32 dispatcher's
        for ldb, ldv in ((1, K), (n, 1)):  # B = x.t(), B contiguous (K, n)
            yield choose(N, K, n, dtype, device, ldb=ldb, ldv=ldv)


def n_tiles(plan) -> int:
    return decode.MMA.arguments(plan.variant)[1]


def pair(a_shape, a_dtype, b_shape, b_dtype=BF, t=False):
    """(A, B) on a device, zeros; A transposed (strided rows) with t."""
    def make(device):
        A = torch.zeros(a_shape, device=device).to(a_dtype)
        return (A.t() if t else A), torch.zeros(b_shape, device=device).to(b_dtype)
    return make


BAD_INPUTS = {  # (A, B) on a device -> what the message must name
    "mixed dtypes": (pair((8, 16), FP32, (16, 2)), re.escape("B = B.to(A.dtype)")),
    "17 vectors": (pair((8, 16), BF, (16, 17)), "chunks"),
    "int8": (pair((8, 16), torch.int8, (16, 2)), "dequantize"),
    "float8": (pair((8, 16), torch.float8_e4m3fn, (16, 2)), "dequantize"),
    "wrong K": (pair((8, 16), BF, (15, 2)), "K = 16"),
    "3-D A": (pair((2, 8, 16), BF, (16, 2)), "2-D"),
    "no columns": (pair((8, 16), BF, (16, 0)), "at least one column"),
    "strided rows": (pair((16, 8), BF, (16, 2), t=True), re.escape("A.contiguous()")),
}


@pytest.mark.parametrize("where", ["cpu", "meta"])
@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_inputs_are_refused_with_the_fix(case, where):
    """Each bad input raises GemvInputError naming the fix; gemv refuses it too, before any launch
    (naming the fix, or first the move to a GPU)."""
    make, fix = BAD_INPUTS[case]
    A, B = make(where)
    with pytest.raises(lab.GemvInputError, match=fix):
        checks.decode_operands(A, B, require_cuda=False)
    with pytest.raises(lab.GemvInputError, match=f"{fix}|{re.escape('.cuda()')}"):
        lab.gemv(A, B)


def test_inputs_that_require_grad_are_checked_too():
    """gemv on inputs that require grad (the custom op's path) refuses what the plain path refuses."""
    for case in ("mixed dtypes", "17 vectors"):
        make, fix = BAD_INPUTS[case]
        A, B = make("meta")
        with pytest.raises(lab.GemvInputError, match=fix):
            lab.gemv(A.requires_grad_(), B)


def test_cpu_tensors_are_refused_where_a_gpu_is_needed():
    """The launch path needs CUDA tensors and says how to move them."""
    A, B = torch.rand(8, 16).to(BF), torch.rand(16, 2).to(BF)
    assert checks.decode_operands(A, B, require_cuda=False)[:3] == (8, 16, 2)
    with pytest.raises(lab.GemvInputError, match=re.escape(".cuda()")):
        checks.decode_operands(A, B, require_cuda=True)
    with pytest.raises(lab.GemvInputError, match=re.escape(".cuda()")):
        lab.gemv(A, B)


def test_out_must_match_c():
    """out= must be C's dtype and element count, contiguous; None is fine."""
    cpu = torch.device("cpu")
    checks.check_decode_out(None, (8, 2), BF, cpu)
    checks.check_decode_out(torch.empty(8, 2, dtype=BF), (8, 2), BF, cpu)
    with pytest.raises(lab.GemvInputError, match="bfloat16"):
        checks.check_decode_out(torch.empty(8, 2), (8, 2), BF, cpu)
    for bad in (torch.empty(8, 3, dtype=BF), torch.empty(2, 8, dtype=BF).t()):
        with pytest.raises(lab.GemvInputError, match="contiguous"):
            checks.check_decode_out(bad, (8, 2), BF, cpu)


@DEVICES
def test_empty_shapes_launch_nothing(device):
    """N = 0: no launch; K = 0: zeros, no launch."""
    assert choose(N=0, device=device).kernel == "none" and choose(K=0, device=device).kernel == "zeros"
    assert choose(N=0, device=device).describe() and choose(K=0, device=device).describe()


@pytest.mark.parametrize("dtype,device,kernel", [
    (FP32, H200, "decode_cores"), (FP32, T4, "decode_cores"), (BF, T4, "decode_cores"), (FP16, T4, "decode_cores"),
    (BF, H200, "decode_mma"), (FP16, H200, "decode_mma")], ids=lambda x: getattr(x, "name", str(x)))
def test_the_kernel_follows_dtype_and_compute_capability(dtype, device, kernel):
    """float32 and halves before sm_80 on CUDA cores; halves from sm_80 on tensor cores."""
    for N, K, n in ((1, 8, 2), (4096, 4096, 4), (100_000, 1000, 16)):
        assert choose(N, K, n, dtype, device).kernel == kernel


def test_more_than_8_vectors_take_a_second_n_tile():
    """decode_mma: one n-tile of 8 vectors for n <= 8, two for 9 to 16."""
    for N, K, n in itertools.product((16, 4096, 100_000), (1000, 4096), range(1, 17)):
        assert n_tiles(choose(N, K, n)) == (1 if n <= 8 else 2)


@pytest.mark.parametrize("dtype,device", [(BF, H200), (FP16, H200), (BF, T4), (FP32, H200)])
def test_16_byte_loads_only_where_aligned(dtype, device):
    """Unaligned W: element by element, B not copied; aligned W: 16-byte loads, B copied only when
    its vectors are not aligned rows (contiguous (K, n)), not for x.t() with K % 8 == 0."""
    for plan in (choose(dtype=dtype, device=device, w_mod16=2), choose(dtype=dtype, device=device, lda=4097)):
        assert (plan.vec, plan.copy_b) == (0, False)
    contiguous, activation = (choose(dtype=dtype, device=device, ldb=4, ldv=1),
                              choose(dtype=dtype, device=device, ldb=1, ldv=4096))
    assert (contiguous.vec, contiguous.copy_b) == (3, True)
    assert (activation.vec, activation.copy_b) == (3, False)


def test_layout_is_read_from_the_tensors():
    """plan_for reads W's and B's strides and addresses: the rule sees what the tensors are."""
    W, x = torch.rand(64, 4104).to(BF), torch.rand(4, 4096).to(BF)
    plan = decode.plan_for(W[:, :4096], x.t())[0]
    assert (plan.vec, plan.copy_b) == (3, False)
    assert decode.plan_for(W[:, :4096], x.t().contiguous())[0].copy_b
    assert decode.plan_for(W[:, 1:4097], x.t())[0].vec == 0


def test_mma_launches_fit_the_sm(device=H200):
    """decode_mma: whole warps, no more than MAX_WARPS, at least one block resident per SM."""
    plans = [p for p in grid_of_plans(device) if p.kernel == "decode_mma"]
    assert plans
    for plan in plans:
        warps = plan.block // 32
        assert 32 <= plan.block <= 32 * rule.MAX_WARPS and plan.block % 32 == 0 and warps == plan.warps_split_k, plan
        shared = rule.shared_bytes(plan.warps_split_k, n_tiles(plan))
        assert decode.MMA.occupancy(plan.block, plan.variant, device.limits, shared).blocks_per_sm >= 1, plan


@DEVICES
def test_mma_warps_keep_one_wave_or_fill_the_waves(device):
    """decode_mma: where one wave holds every tile of 16 rows at two or more warps per block, the
    plan keeps them in one wave with the most warps per block that do (any count up to K's trips and
    MAX_WARPS). Elsewhere, with one n-tile, it takes the count of 1 to TRIP_WARPS warps whose waves
    leave the smallest share of their block slots idle, the fewer warps on a tie; with two, where
    the tiles need more than one wave, the trips bound of test_mma_warps_bound_each_warps_trips."""
    if int(device.limits.compute_capability.split(".")[0]) < 8:
        pytest.skip("decode_cores before sm_80")
    seen = set()
    for N, K, n in itertools.product((16, 1024, 4096, 14_336, 18_944, 28_672, 65_536, 262_144), (1024, 4096, 8192, 28_672),
                                     (1, 16)):
        plan = choose(N, K, n, BF, device)
        warps, nt = plan.warps_split_k, n_tiles(plan)

        def slots(w, variant=plan.variant, nt=nt):  # blocks of w warps the GPU holds at once
            return rule._slots(decode.MMA, 32 * w, variant, device, rule.shared_bytes(w, nt))

        trips = -(-K // (32 * decode.MMA.arguments(plan.variant)[2]))
        most = min(rule.MAX_WARPS, trips)
        one_wave = max((w for w in range(1, most + 1) if slots(w) >= plan.grid), default=0)
        if one_wave >= 2 or (nt == 2 and one_wave == 1):
            seen.add("one wave" if warps & (warps - 1) == 0 else "one wave, warps not a power of two")
            assert warps == one_wave, (N, K, n, warps, one_wave)
        elif nt == 1:
            counts = [w for w in range(1, min(most, rule.TRIP_WARPS) + 1) if slots(w)]
            fills = {w: rule.fill(plan.grid, slots(w)) for w in counts}
            assert fills[warps] == max(fills.values()) and all(fills[w] < fills[warps] for w in counts if w < warps), (
                N, K, n, warps, fills)
            seen.add("fullest waves" + (", not one warp" if warps > 1 else "")
                     + (", warps not a power of two" if warps & (warps - 1) else ""))
        else:
            seen.add("waves, two n-tiles")
            assert 1 <= warps <= min(most, rule.TRIP_WARPS), (N, K, n, warps)
    assert seen == {"one wave", "one wave, warps not a power of two", "fullest waves",
                    "fullest waves, not one warp, warps not a power of two", "waves, two n-tiles"}, seen


def test_fill_is_tiles_over_the_block_slots_of_their_waves():
    """rule.fill: tiles over the block slots of the waves they take, rounded up."""
    assert rule.fill(1792, 2112) == 1792 / 2112
    assert rule.fill(1792, 660) == 1792 / 1980
    assert rule.fill(2112, 528) == 1.0
    assert rule.fill(1, 132) == 1 / 132


@DEVICES
def test_two_n_tiles_load_b_late_where_that_buys_warps(device):
    """decode_mma with two n-tiles: B's loads wait for their trip (STAGES_LATE_B) exactly where the
    tiles fit in one wave and that variant's registers let the wave hold at least LATE_B_GAIN times
    the warps per tile that STAGES does; one n-tile always keeps STAGES."""
    if int(device.limits.compute_capability.split(".")[0]) < 8:
        pytest.skip("decode_cores before sm_80")
    seen = set()
    for N, K in itertools.product((1024, 4096, 14_336, 18_944, 28_672, 65_536), (1024, 4096, 28_672)):
        plan = choose(N, K, 16, BF, device)
        trips = -(-K // (32 * rule.LOADS))
        most = min(rule.MAX_WARPS, trips)

        def one_wave_warps(stages, most=most, tiles=plan.grid):  # 0 where the tiles need more than one wave
            v = native_kernel.encode(2, 2, rule.LOADS, stages)
            fit = [w for w in range(1, most + 1) if rule._slots(decode.MMA, 32 * w, v, device, rule.shared_bytes(w, 2)) >= tiles]
            return max(fit, default=0)

        early = one_wave_warps(rule.STAGES)
        late = 0 < early and one_wave_warps(rule.STAGES_LATE_B) >= rule.LATE_B_GAIN * early
        assert decode.MMA.arguments(plan.variant)[3] == (rule.STAGES_LATE_B if late else rule.STAGES), (N, K)
        assert decode.MMA.arguments(choose(N, K, 8, BF, device).variant)[3] == rule.STAGES, (N, K)
        seen.add(late)
    assert seen == {True, False}


def test_mma_warps_bound_each_warps_trips(device=H200):
    """decode_mma with two n-tiles and many tiles per SM: enough warps per block that each walks at
    most MAX_TRIPS trips of K, until TRIP_WARPS warps; more trips than that leave it at TRIP_WARPS."""
    for K in (1024, 2048, 4096, 8192, 16_384, 65_536):
        plan = choose(262_144, K, 16, BF, device)  # 124 tiles of 16 rows per SM: more than one wave holds
        trips = -(-K // (32 * decode.MMA.arguments(plan.variant)[2]))
        assert plan.warps_split_k >= min(rule.TRIP_WARPS, trips / rule.MAX_TRIPS / 2 ** 0.5), (K, plan.warps_split_k)
        assert plan.warps_split_k <= max(1, min(rule.TRIP_WARPS, 2 ** 0.5 * trips / rule.MAX_TRIPS)), (K, plan)


@DEVICES
def test_every_plan_uses_a_compiled_variant_and_describes_itself(device):
    """Every plan the rule returns names a compiled variant of its kernel and reads as text."""
    for plan in grid_of_plans(device):
        assert plan.variant in decode.KERNELS[plan.kernel].variants, plan
        assert plan.describe().strip()


def test_explain_names_the_decode_kernel_on_cpu_tensors():
    """explain works without a GPU; bf16 goes to decode_mma, float32 with one vector does not."""
    assert "decode_mma" in lab.explain(torch.rand(4096, 4096).to(BF), torch.rand(4096, 4).to(BF))
    assert "decode" not in lab.explain(torch.rand(4096, 4096), torch.rand(4096, 1))


def test_takes_routes_halves_and_several_vectors_to_decode():
    """decode takes bf16 and several vectors; float32 with one vector stays with the dispatcher."""
    A = torch.rand(8, 16)
    assert decode.takes(A.to(BF), torch.rand(16).to(BF)) and decode.takes(A, torch.rand(16, 3))
    assert not decode.takes(A, torch.rand(16)) and not decode.takes(A, torch.rand(16, 1))


@pytest.mark.parametrize("x,bias,fix", [
    ((2, 3, 64), None, "reshape"), ((3, 63), None, "W.shape"), ((3, 64), (31,), "bias"), ((3, 64), (32, 1), "bias")])
def test_linear_refuses_bad_inputs_before_any_launch(x, bias, fix):
    """linear checks x's shape, its features against W and the bias, on CPU tensors."""
    W = torch.rand(32, 64).to(BF)
    b = None if bias is None else torch.rand(bias).to(BF)
    with pytest.raises(lab.GemvInputError, match=fix):
        lab.linear(torch.rand(x).to(BF), W, b)


def test_both_kernels_build_for_sm_75_80_and_90(monkeypatch):
    """Each compiled variant of both decode kernels compiles for every architecture asked for."""
    if torch.cuda.is_available():
        pytest.skip("a GPU decides the architecture here")
    if not os.environ.get("CUDA_HOME"):
        monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")
    toolchain.configure()
    if toolchain.missing_for_build():
        pytest.skip("cannot build here: " + "; ".join(toolchain.missing_for_build()))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "7.5;8.0;9.0")
    monkeypatch.setattr(native_kernel, "_builds", {})  # the in-process cache does not key on the architecture
    monkeypatch.setattr(native_kernel, "_seen", {})
    for kernel in decode.KERNELS.values():
        built = kernel.build()
        compiled = {arch: set() for arch in ("sm_75", "sm_80", "sm_90")}
        for symbol, arch in re.findall(r"Compiling entry function '([^']+)' for '(sm_\d+)'", built.ptxas_log):
            compiled.setdefault(arch, set()).add(report.demangle(symbol))
        for v in kernel.variants:
            name = kernel.kernel_name(v)
            assert name in built.resources, name
            assert all(name in names for names in compiled.values()), (name, built.arch)


def test_the_decode_schema_accepts_the_record_and_refuses_bad_rows():
    """validate_decode takes the recorded section; a row missing a key or of an unknown kernel fails."""
    section = copy.deepcopy(results.load()["decode"])
    schema.validate_decode(section)
    missing = copy.deepcopy(section)
    del missing["rows"][0]["ms"]
    unknown = copy.deepcopy(section)
    unknown["rows"][0]["kernel"] = "cublas"
    for bad in (missing, unknown, {"rows": None}):
        with pytest.raises(results.SchemaError):
            schema.validate_decode(bad)


def test_the_recorded_decode_rows():
    """Every row carries the table's keys; every recorded case has a gemv row."""
    rows = decode_results.rows(results.load())
    keys = {"M", "K", "n", "dtype", "kernel", "ms", "q1", "q3", "GBps", "vs_torch", "vs_ceiling", "chosen",
            "source", "gpu"}
    assert rows and all(keys <= set(r) for r in rows)
    cases = {(r["M"], r["K"], r["n"], r["dtype"]) for r in rows}
    with_gemv = {(r["M"], r["K"], r["n"], r["dtype"]) for r in rows if r["kernel"] == "gemv"}
    assert cases == with_gemv


def test_table_decode_json_prints_a_list():
    """python -m gemvlab table --decode --json prints the rows as a JSON list."""
    out = subprocess.run([sys.executable, "-m", "gemvlab", "table", "--decode", "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)
    assert isinstance(rows, list) and rows and {"M", "kernel", "ms"} <= set(rows[0])
