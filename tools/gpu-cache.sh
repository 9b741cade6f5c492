#!/usr/bin/env bash
# Build every kernel here (no GPU needed) for the GPU machine's sm_90, into .gpucache, so that a device call
# spends its minutes measuring, not compiling. Carry .gpucache with the call; tools/gpu-run.sh points
# GEMVLAB_CACHE at it. Builds are filed under the torch version that loads them (gemvlab.native.build
# .cache_root): DEVICE_TORCH names the GPU machine's (../shared/gpu/README.md). The kernels are called through
# ctypes, not torch's C++ API, so a build made beside this machine's torch loads there.
# Usage: tools/gpu-cache.sh [--decode-tune]   (--decode-tune: also bench/tune_dispatch.py --decode's builds)
set -euo pipefail
DEVICE_TORCH=${DEVICE_TORCH:-2.11.0}
PY=${PY:-.venv/bin/python}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TORCH_CUDA_ARCH_LIST=9.0 GEMVLAB_CACHE=$PWD/.gpucache
"$PY" -c "import gemvlab.kernels as k; k.build_all()"  # every kernel gemvlab launches
[ "${1:-}" = --decode-tune ] && "$PY" bench/tune_dispatch.py --decode --dry > /dev/null
here=$("$PY" -c "from gemvlab.native.build import cache_root; print(cache_root().name)")
there="torch${DEVICE_TORCH}-${here#*-}"
if [ "$here" != "$there" ]; then
  mkdir -p ".gpucache/$there"
  cp -r ".gpucache/$here/." ".gpucache/$there/"
  rm -rf ".gpucache/${here:?}"
fi
# what loading does not need: objects, ninja's files, disassembly (64 MiB may travel in all)
find .gpucache \( -name '*.o' -o -name 'sass.txt' -o -name '*.ninja*' \) -delete
du -sh .gpucache/"$there"
