"""What exploration rounds 4 to 6 share (tools/explore/round4.py ... round6.py; not part of gemvlab):
an exploration kernel library built from roundN.cu and launched with the dispatcher's argument
list, each candidate plan checked against float64 and timed round-robin beside the rule's own plan,
torch.matmul and the read ceiling, every launch alone with the L2 flushed before it (gemvlab.bench's
timer), printed and logged to OUT_DIR/roundN.jsonl.

    rnd = Round("round5", encode_with_mode)        # builds round5.cu, opens the log
    rnd.study(M, K, {"rows G=8 ...": rows(8, 4, 128)}, "label")
"""
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from gemvlab import bench, build, dispatch
from gemvlab.kernels import read_ceiling_launcher

EMPTY = 9  # every round's .cu launches an empty kernel for this variant
#: The launchers' arguments up to round 6 (gemvlab's own launchers now take a struct instead)
OLD_ARGTYPES = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                ctypes.c_void_p]


def rows(G, L, block, BM=1, MODE=0):
    """A rows_per_warp candidate: G lanes per row, L float4 loads per trip, B read as float4s (BM = 1)
    or scalars (0), and the round's MODE where it has one."""
    return dict(kind="rows", G=G, L=L, block=block, BM=BM, MODE=MODE)


def split(splits, L, block, BM=1, MODE=0):
    """A split_k candidate: `splits` stretches per row, L float4 loads per trip."""
    return dict(kind="split", splits=splits, L=L, block=block, BM=BM, MODE=MODE)


def encode_round4(kind, G, L, BM, MODE):
    """round4.cu's variant numbers (no MODE)."""
    return 100 + 10 * L + BM if kind == "split" else 20000 + 100 * G + 10 * L + BM


def encode_with_mode(kind, G, L, BM, MODE):
    """round5.cu's and round6.cu's variant numbers."""
    return 1000 + 100 * L + 10 * BM + MODE if kind == "split" else 200000 + 1000 * G + 100 * L + 10 * BM + MODE


class Round:
    def __init__(self, name, encode, rounds=3, target_ms=40.0):
        """encode: the round's variant numbers for its own NAME.cu; None: the round has none
        (round 7 times gemvlab's own kernels through dispatch.make_launch)."""
        out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp")
        self.log = open(out / f"{name}.jsonl", "w")
        if encode is not None:
            self.fn = build.build(name, (Path(__file__).parent / f"{name}.cu").read_text()).function(f"launch_{name}")
            self.fn.argtypes = OLD_ARGTYPES
        self.encode, self.rounds, self.target_ms = encode, rounds, target_ms
        self.device = dispatch.Device.of()
        self.t_start = time.time()

    @staticmethod
    def say(*a):
        print(*a, flush=True)

    def x_launch(self, A, B, C, P, kind, block, G=0, L=2, BM=1, splits=1, MODE=0):
        M, K = A.shape
        if kind == "empty":
            variant, chunk = EMPTY, 0
        elif kind == "split":
            chunk = -(-(-(-K // splits)) // 4) * 4
            splits = -(-K // chunk)
            variant = self.encode(kind, G, L, BM, MODE)
        else:
            variant, chunk = self.encode(kind, G, L, BM, MODE), 0
        s = torch.cuda.current_stream().cuda_stream
        args = (A.data_ptr(), K, B.data_ptr(), C.data_ptr(), P.data_ptr(), M, K, chunk, splits, block, variant, s)
        fn = self.fn

        def f():
            rc = fn(*args)
            assert rc == 0, (kind, block, G, L, BM, splits, rc)
        return f

    def timed(self, fns):
        """name -> (median, q25, q75, n): every launch alone, L2 flushed before it, round-robin."""
        rounds = self.rounds
        n = {}
        for name, f in fns.items():
            f()
            torch.cuda.synchronize()
            est = max(bench._one_launch_ms(f), 0.002)
            n[name] = max(20, min(300, int(self.target_ms / (est + 0.06) / rounds)))
            for _ in range(3):
                f()
        times = {name: [] for name in fns}
        for _ in range(rounds):
            for name, f in fns.items():
                times[name] += bench._timed_launches(f, n[name])
        out = {}
        for name, t in times.items():
            q = statistics.quantiles(t, n=4)
            out[name] = (statistics.median(t), q[0], q[2], len(t))
        return out

    @staticmethod
    def unflushed(f, n=300):
        """Median ms of n launches back to back, no flush: what a launch costs with the L2 warm."""
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for s, e in ev:
            s.record(); f(); e.record()
        torch.cuda.synchronize()
        return statistics.median([s.elapsed_time(e) for s, e in ev])

    def study(self, M, K, cands, label, offset=0, ceiling=True):
        """cands: name -> rows(...) or split(...) (or dict(kind="empty", block=32)). offset: A starts
        this many floats into its allocation (0: aligned). ceiling: time the read ceiling too."""
        say = self.say
        A, B, ref = self.inputs(M, K, label, offset)
        C = torch.empty(M, 1, device="cuda")
        P = torch.empty(max(1, M * max([c.get("splits", 1) for c in cands.values()] + [1])), device="cuda")
        fns, errs = {}, {}
        rule_plan = dispatch.plan_for(A, B)
        rule = dispatch.launcher(A, B)
        fns["rule " + rule_plan.name] = lambda: rule(A, B)
        fns["torch.matmul"] = lambda: torch.matmul(A, B)
        for name, c in cands.items():
            try:
                f = self.x_launch(A, B, C, P, **c)
                C.fill_(float("nan"))
                f()
                torch.cuda.synchronize()
            except AssertionError as e:
                say(f"  {name}: launch failed {e}")
                continue
            errs[name] = bench.relative_error(C, ref) if c["kind"] != "empty" else 0.0
            if not errs[name] < 1e-4:
                say(f"  {name}: WRONG, relative error {errs[name]:.2e}")
                continue
            fns[name] = f
        self.time_and_log(M, K, label, fns, errs, cands, A, ceiling and offset == 0)
        return A, B, rule, fns

    def inputs(self, M, K, label, offset=0):
        """A (M, K) starting `offset` floats into its storage, B (K, 1), and their float64 product."""
        self.say(f"== {label}: M={M:,} K={K:,}")
        base = torch.rand(M * K + offset + 4, device="cuda")
        A = base[offset:offset + M * K].view(M, K)
        B = torch.rand(K, 1, device="cuda")
        return A, B, bench.reference(A, B)

    def time_and_log(self, M, K, label, fns, errs, cands, A, ceiling=True):
        """Time fns round-robin (with the read ceiling where A allows one), print and log each."""
        say = self.say
        ceiling_ms = None
        if A.data_ptr() % 16 == 0 and ceiling:  # over A's first M * K // 4 float4s, where M * K % 4 != 0
            R = A if (M * K) % 4 == 0 else A.reshape(-1)[:M * K // 4 * 4].view(1, -1)
            pick = bench.measure_read_ceiling(R, warmup_ms=3, rep_ms=15)
            fns["read ceiling"] = read_ceiling_launcher(R, pick["block"], pick["variant"])
        t = self.timed(fns)
        nbytes = bench.bytes_moved(M, K)
        if "read ceiling" in t:
            ceiling_ms = t["read ceiling"][0]
        torch_ms = t["torch.matmul"][0]
        for name, (ms, q25, q75, n) in sorted(t.items(), key=lambda kv: kv[1][0]):
            of_ceiling = (nbytes / ms) / (4 * M * K / ceiling_ms) if ceiling_ms and name != "read ceiling" else None
            say(f"  {name:<34} {ms * 1e3:9.2f} us [{q25 * 1e3:.2f} {q75 * 1e3:.2f}] n={n:4} vs torch {torch_ms / ms:5.2f}x"
                + (f"  of ceiling {of_ceiling:.3f}" if of_ceiling else ""))
            self.log.write(json.dumps(dict(M=M, K=K, label=label, name=name, ms=ms, q25=q25, q75=q75, n=n,
                                           vs_torch=torch_ms / ms, of_ceiling=of_ceiling, err=errs.get(name),
                                           cand=cands.get(name))) + "\n")
        self.log.flush()

    def elapsed(self):
        return time.time() - self.t_start
