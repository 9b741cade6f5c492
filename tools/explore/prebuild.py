"""Build, on a machine without a GPU, every library tools/explore/round26.py to round37.py load, into
$GEMVLAB_CACHE (gemvlab's kernels and pitfalls included), so that the device run only loads them:

    CUDA_HOME=/usr/local/cuda GEMVLAB_CACHE=/tmp/gc TORCH_CUDA_ARCH_LIST=9.0 python tools/explore/prebuild.py
    mkdir -p .gpucache && cp -r /tmp/gc/torch<here>-cu13.0 .gpucache/torch<device's torch>-cu13.0

(the cache's folder is named by torch's version; the device has its own torch, session 15: 2.11.0),
then run with GEMVLAB_CACHE=$PWD/.gpucache and carry [".gpucache"]. Each build's headers are the
ones its round's script passes; a change to any of them changes the hash, so rebuild after one.
"""
from pathlib import Path

from gemvlab import build, kernels

here = Path(__file__).parent
cuda = here.parent.parent / "gemvlab" / "cuda"


def text(path):
    return Path(path).read_text()


kernels.build_all()
for p in sorted((cuda / "pitfalls").glob("*.cu")):
    build.build(p.stem, p.read_text())
before = here / "round7" / "before"
for name in ("split_k", "rows_per_warp"):  # round7.py, which every later round imports
    build.build(f"before_{name}", text(before / f"{name}.cu"), headers={"any_alignment.cuh": text(before / "any_alignment.cuh")})
gemvlab_headers = {n: text(cuda / n) for n in ("split_k.cu", "any_alignment.cuh", "launch_args.cuh")}
old_tiles = {"row_tiles.cu": text(here / "round19" / "row_tiles.cu")}
# row_tiles.cu before its loads per trip became a template argument (commit 2e515c7), as rounds 27 to 34 ran it
tiles_26_34 = {"row_tiles.cu": text(here / "round34" / "row_tiles.cu"), "launch_args.cuh": text(cuda / "launch_args.cuh")}
build.build("round19", text(here / "round19.cu"), headers={**gemvlab_headers, **old_tiles})
build.build("round20", text(here / "round20.cu"), headers={"round19.cu": text(here / "round19.cu"), **old_tiles,
                                                          **gemvlab_headers})
build.build("round24", text(here / "round24.cu"), headers={"round20.cu": text(here / "round20.cu"),
                                                          "round19.cu": text(here / "round19.cu"), **old_tiles,
                                                          **gemvlab_headers})
for which in ("before", "now"):
    build.build(f"{which}24_split_k", text(here / "round24" / which / "split_k.cu"),
                headers={"any_alignment.cuh": text(here / "round24" / which / "any_alignment.cuh"),
                         "launch_args.cuh": text(cuda / "launch_args.cuh")})
build.build("round26", text(here / "round26.cu"), headers=gemvlab_headers)
build.build("round27", text(here / "round27.cu"), headers=tiles_26_34)
build.build("round29", text(here / "round29.cu"), headers=tiles_26_34)
build.build("round31", text(here / "round31.cu"), headers={"launch_args.cuh": text(cuda / "launch_args.cuh")})
build.build("round32", text(here / "round32.cu"), headers=tiles_26_34)
build.build("round33", text(here / "round33.cu"), headers=tiles_26_34)
build.build("round34", text(here / "round34.cu"), headers=tiles_26_34)
build.build("round35", text(here / "round35.cu"), headers={n: text(cuda / n) for n in ("row_tiles.cu", "launch_args.cuh")})
build.build("round37", text(here / "round37.cu"), headers={n: text(cuda / n) for n in ("row_tiles.cu", "launch_args.cuh")})
print("built into the cache")
