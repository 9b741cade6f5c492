"""What ctypes costs per call on the CPU (no GPU): a C function with the dispatcher's old
argument list (12 arguments, argtypes set) against the new one (6 pointers), and a bare call;
and a function-level `from gemvlab import dispatch` (what kernels.gemv did on every call).
libc's labs stands in for the launcher (it ignores the extra arguments); logged in
ctypes-call-cost.txt.   python tools/explore/round7/ctypes_call_cost.py"""
import ctypes
import platform
import timeit

n = 200_000
old = ctypes.CDLL(None).labs
old.argtypes = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong,
                ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
new = ctypes.CDLL(None).labs
new.argtypes = [ctypes.c_void_p] * 6
bare = ctypes.CDLL(None).labs
print(platform.processor() or platform.machine(), platform.python_version())
for name, f in (("12 arguments (argtypes)", lambda: old(1234567, 64, 2345678, 3456789, None, 64, 64, 0, 1, 128, 17, 5)),
                ("6 pointers (argtypes)", lambda: new(1234567, 2345678, 3456789, None, 4567890, 5)),
                ("1 int, no argtypes", lambda: bare(5))):
    best = min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6
    print(f"{name:<26} {best:.2f} us per call (best of 5 x {n:,})")


def imported():
    from gemvlab import dispatch  # noqa: F401 - the module is already loaded: the lookup is what costs


imported()
print(f"{'function-level import':<26} {min(timeit.repeat(imported, number=n, repeat=5)) / n * 1e6:.2f} us per call")
