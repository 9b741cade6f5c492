"""A kernel as gemvlab knows it: one .cu file, its exported launcher, and the template variants
compiled in, with the one codec that packs a variant's template arguments into an int.

Every kernel gemvlab launches (the stages, the dispatcher's, the yardsticks, the pitfall demos)
is a :class:`Kernel`. The variant is what the launcher's ``variant`` argument carries: for a
kernel with one template argument it is that argument (stage 4's LOADS = 2 is variant 2); with
several, :func:`encode` packs them, ``VARIANT_BITS`` bits each, and launch_args.cuh's
``GEMV_VARIANT`` packs them the same way on the CUDA side. Numbers both sides need (the codec's
width, a tile's size) are defined once in Python and reach nvcc as ``-D`` flags (:attr:`Kernel.defines`),
so there is nothing to keep in step by hand.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..gpu import occupancy
from .build import Built, build
from .launch import Launcher, launcher
from .toolchain import arch_flags

#: Bits per template argument in a packed variant (GEMV_VARIANT in launch_args.cuh).
VARIANT_BITS = 8
NATIVE_DIR = Path(__file__).parent


def encode(*args: int) -> int:
    """Template arguments -> one variant number: the first in the lowest VARIANT_BITS bits."""
    out = 0
    for i, a in enumerate(args):
        if not 0 <= int(a) < 1 << VARIANT_BITS:
            raise ValueError(f"template argument {a} does not fit in {VARIANT_BITS} bits")
        out |= int(a) << (VARIANT_BITS * i)
    return out


def decode(variant: int, n: int) -> tuple[int, ...]:
    """A variant number -> its n template arguments (encode's inverse)."""
    mask = (1 << VARIANT_BITS) - 1
    return tuple((variant >> (VARIANT_BITS * i)) & mask for i in range(n))


_builds: dict = {}  # (source path, source, headers, defines) -> Built
#: (source path, defines) -> (the files read, their (mtime, size) then, the _builds key): a build
#: whose files are unchanged is found without reading them again.
_seen: dict = {}


def _stamp(paths) -> tuple:
    return tuple((st.st_mtime_ns, st.st_size) for st in (p.stat() for p in paths))


@dataclass(frozen=True, kw_only=True)
class Kernel:
    """One .cu file's launcher and the kernel it launches."""

    name: str  # gemvlab's name for it: "warp_shuffle", "split_k", "read_ceiling"
    source_path: Path  # the .cu file
    launcher: str  # the exported extern "C" function
    symbol: str  # the __global__ function: templated ones are named symbol<arguments>
    signature: str = "stage"  # gemvlab.native.launch.SIGNATURES
    template: tuple = ()  # the template arguments a variant carries, by name; () when it carries none
    bool_args: tuple = ()  # which of those are bool (printed true / false, as ptxas names them)
    fixed_args: str = ""  # template arguments after the variant's, the same for every variant: ", true"
    variants: tuple = (0,)  # the variants compiled in (for a templated kernel: its instantiations)
    default_variant: int | None = None  # what a launch without one uses (None: variants[0])
    shared_per_thread: int = 0  # dynamic shared memory its launcher sets, bytes per thread of the block
    defines: tuple = field(default=())  # (name, value) pairs passed to nvcc as -Dname=value
    loads_from: tuple = ()  # template arguments whose product is the float4 loads of A per trip
    fixed_loads: int = 1  # the loads per trip where loads_from is empty
    reads_b: bool = True  # False for a pass that reads A alone (the read ceiling)
    access: str = "float4"  # how a warp reads A (gemvlab.measure.model): "float4" bodies, "scalar"
    #                         (32 neighbouring floats per load), or "scattered" (each lane its own row)

    @property
    def source_file(self) -> str:
        return self.source_path.name

    def source(self) -> str:
        return self.source_path.read_text()

    def headers(self, source: str | None = None) -> dict:
        """The local headers the source #includes ({file name: text}), found beside the source or
        in gemvlab/native (launch_args.cuh), and theirs in turn."""
        return {name: text for name, (_, text) in self._headers(source).items()}

    def _headers(self, source: str | None = None) -> dict:
        """{file name: (path, text)} of the local headers, as headers()."""
        found, todo = {}, [self.source() if source is None else source]
        while todo:
            for name in re.findall(r'^#include "([^"]+)"', todo.pop(), re.MULTILINE):
                if name not in found:
                    path = next(p for p in (self.source_path.parent / name, NATIVE_DIR / name) if p.exists())
                    found[name] = (path, path.read_text())
                    todo.append(found[name][1])
        return found

    def flags(self) -> list[str]:
        return [f"-D{k}={v}" for k, v in self.defines]

    def build(self) -> Built:
        """Compile the .cu file (or load it from the cache); works without a GPU. Kernels that
        share a file and flags share one build."""
        arch = tuple(arch_flags()[0])  # a change of TORCH_CUDA_ARCH_LIST is another build
        ident = (str(self.source_path), tuple(self.defines), arch)
        seen = _seen.get(ident)
        if seen and seen[2] in _builds and _stamp(seen[0]) == seen[1]:
            return _builds[seen[2]]  # no file changed since that build: skip reading them
        stamp_before = _stamp([self.source_path])  # before the read: an edit during it is seen next time
        source = self.source()
        found = self._headers(source)
        paths = [self.source_path, *(path for path, _ in found.values())]
        stamp = stamp_before + _stamp(paths[1:])
        headers = {name: text for name, (_, text) in found.items()}
        key = (str(self.source_path), source, tuple(sorted(headers.items())), tuple(self.defines), arch)
        if key not in _builds:
            _builds[key] = build(self.source_path.stem.lstrip("0123456789_"), source, self.flags(), headers)
        _seen[ident] = (paths, stamp, key)
        return _builds[key]

    @property
    def default(self) -> int:
        return self.variants[0] if self.default_variant is None else self.default_variant

    def arguments(self, variant: int) -> tuple[int, ...]:
        """The template arguments of a variant, in `template`'s order."""
        if len(self.template) <= 1:
            return (variant,) if self.template else ()
        return decode(variant, len(self.template))

    def kernel_name(self, variant: int | None = None) -> str:
        """The kernel's name as ptxas reports it: gemv_split_k<2, true, 1>."""
        if not self.template:
            return self.symbol
        v = self.default if variant is None else variant
        args = [("true" if a else "false") if n in self.bool_args else str(a)
                for n, a in zip(self.template, self.arguments(v))]
        return f"{self.symbol}<{', '.join(args)}{self.fixed_args}>"

    def loads_per_trip(self, variant: int | None = None) -> int:
        """The independent float4 loads of A one lane's source writes per trip (ptxas may issue
        fewer before the first use: gemvlab.native.sass.loads_before_first_use counts those)."""
        if not self.loads_from:
            return self.fixed_loads
        args = dict(zip(self.template, self.arguments(self.default if variant is None else variant)))
        return math.prod(args[n] for n in self.loads_from)

    def resources(self, variant: int | None = None):
        """The ptxas line (registers, shared memory, spills) of one variant."""
        return self.build().resources[self.kernel_name(variant)]

    def occupancy(self, block: int, variant: int | None, limits, dynamic_shared_bytes: int = 0):
        """Blocks and warps per SM at `block` threads (gemvlab.gpu.occupancy), from the resource
        report, the shared memory the launcher sets per thread and any more a plan sets."""
        res = self.resources(variant)
        return occupancy.occupancy(res.registers, block, limits, res.shared_bytes,
                                   self.shared_per_thread * block + dynamic_shared_bytes)

    def function(self) -> Launcher:
        """The launcher, with its signature's argument types (built on first use)."""
        return launcher(self.build(), self.launcher, self.signature, self.name)
