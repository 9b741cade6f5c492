#!/usr/bin/env bash
# The final run on the H200 (device tool), in two calls, each well inside the 10-minute limit:
#   tools/gpu-final.sh record     python -m gemvlab record: gemvlab-record.json (ignored), and $OUT/h200.json
#   tools/gpu-final.sh notebooks  every notebook live against that record, then every GPU test
# Prebuilt kernels travel in .gpucache (carry it), the notebook stack in .whl (../shared/gpu/).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export GEMVLAB_CACHE=$PWD/.gpucache PYTHONPATH=$PWD PYTHONUNBUFFERED=1
case ${1:-} in
  record)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
    timeout 570 python3 -m gemvlab record --out gemvlab-record.json > "$OUT/record.txt" 2>&1
    rc=$?
    cp gemvlab-record.json "$OUT/h200.json" 2>/dev/null || cp gemvlab-record.json.partial "$OUT/h200.partial.json"
    grep -E "failed|Error|wrote|memory:" "$OUT/record.txt" | cut -c1-300 | tail -12
    echo "record rc $rc" ;;
  notebooks)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
    export PYTHONPATH=$PYTHONPATH:/tmp/site GEMVLAB_RECORDED=$PWD/gemvlab-record.json
    timeout 300 python3 tools/execute_notebooks.py "$OUT" > "$OUT/notebooks.txt" 2>&1
    echo "notebooks rc $?"; grep -E "ipynb" "$OUT/notebooks.txt"
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_occupancy.py tests/test_gpu_correctness.py \
      tests/test_gpu_dispatch.py > "$OUT/pytest.txt" 2>&1
    echo "pytest rc $?"; tail -4 "$OUT/pytest.txt" ;;
  *) echo "usage: tools/gpu-final.sh record|notebooks"; exit 2 ;;
esac
