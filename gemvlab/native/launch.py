"""The one place where Python calls CUDA: the launchers' two signatures, set on ctypes once.

Every .cu file gemvlab builds exports ``extern "C" int launch_*(...)`` functions that return a
``cudaError_t`` (0 when the launch was queued) and take device pointers. There are two shapes:

* ``STAGE``: ``(const float* A, const float* B, float* C, long long M, long long K, int block,
  int variant, cudaStream_t stream)``: the teaching stages, the read ceiling, the memory-latency
  chase, the pitfall demos and the exercises. Readable, and what a learner writes.
* ``PLAN``: ``(const float* A, const float* B, float* C, float* partials, const LaunchArgs* args,
  cudaStream_t stream)``: the dispatcher's kernels. A plan's fixed numbers travel in one struct
  built once per plan (:class:`LaunchArgs`, launch_args.cuh), because ctypes converts every
  argument on every call and six pointers cost less than twelve numbers.

:func:`launcher` returns a Python function for one exported symbol with its argument types set;
:meth:`Launcher.check` turns a non-zero code into an exception naming the CUDA error. Inputs must
have been checked (gemvlab.checks) before any call: a launcher trusts what it is given.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from pathlib import Path

import torch

#: The launchers' argument types, by signature name.
SIGNATURES = {
    "stage": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong, ctypes.c_longlong,
              ctypes.c_int, ctypes.c_int, ctypes.c_void_p],
    "plan": [ctypes.c_void_p] * 6,
}
HEADER = Path(__file__).with_name("launch_args.cuh")


class LaunchArgs(ctypes.Structure):
    """launch_args.cuh's struct (the same fields in the same order; a test compares the two)."""

    _fields_ = [("lda", ctypes.c_longlong), ("M", ctypes.c_longlong), ("K", ctypes.c_longlong),
                ("chunk", ctypes.c_longlong), ("splits", ctypes.c_int), ("block", ctypes.c_int),
                ("variant", ctypes.c_int), ("ldb", ctypes.c_longlong), ("ldv", ctypes.c_longlong),
                ("ldc", ctypes.c_longlong), ("ldcv", ctypes.c_longlong), ("n", ctypes.c_int), ("vec", ctypes.c_int)]


def header_fields() -> list[tuple[str, str]]:
    """(C type, name) of each field of launch_args.cuh's struct, in order."""
    body = re.search(r"struct LaunchArgs \{(.*?)\};", HEADER.read_text(), re.DOTALL).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return [(m[0], m[1]) for m in re.findall(r"(long long|int)\s+(\w+);", body)]


@dataclass
class Launcher:
    """One exported launcher of a built library, callable with its signature's arguments."""

    name: str  # what the error says was launched
    function: ctypes._CFuncPtr
    library: ctypes.CDLL

    def __call__(self, *args) -> int:
        return self.function(*args)

    def error_string(self, code: int) -> str:
        fn = self.library.cudaGetErrorString  # from the CUDA runtime this library links
        fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_int]
        return fn(code).decode()

    def check(self, code: int, what: str | None = None) -> None:
        """Raise when a launch returned an error: configuration errors show at once (a fault in
        the kernel shows at a later call that waits for the GPU)."""
        if code:
            raise RuntimeError(f"launching {what or self.name} failed: {self.error_string(code)} (CUDA error {code})")


def launcher(built, symbol: str, signature: str = "stage", name: str | None = None) -> Launcher:
    """The exported `symbol` of a Built library, with `signature`'s argument types."""
    fn = getattr(built.library, symbol)
    fn.restype = ctypes.c_int
    fn.argtypes = SIGNATURES[signature]
    return Launcher(name or symbol, fn, built.library)


def synchronize(built) -> int:
    """cudaDeviceSynchronize from the runtime the library links (the same context as torch's):
    the error code of anything that went wrong since the last wait."""
    fn = built.library.cudaDeviceSynchronize
    fn.restype = ctypes.c_int
    return fn()


def error_name(built, code: int) -> str:
    fn = built.library.cudaGetErrorName
    fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_int]
    return fn(code).decode()


try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # the handle, without a Stream object
except AttributeError:  # pragma: no cover - older torch
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def layout_key(A, B) -> tuple:
    """Everything a plan depends on in A and B (shape, strides, dtype, device, alignment, type): the
    key of the dispatchers' launch caches. Raises AttributeError for what is not a tensor."""
    return (A.shape, A.stride(), A.dtype, A.device, B.shape, B.stride(), B.dtype,
            A.data_ptr() % 16, B.data_ptr() % 16, type(A), type(B))


def stream(device_index: int) -> int:
    """The current CUDA stream's handle on a device (what every launcher takes last)."""
    return _raw_stream(device_index)
