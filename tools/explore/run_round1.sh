#!/usr/bin/env bash
# Exploration round 1 on the H200 (device tool), each step bounded in time. Prebuilt kernels come
# in .gpucache (carried); outputs go to $OUT.
export GEMVLAB_CACHE=$PWD/.gpucache PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
timeout 200 python3 tools/explore/dispatch_round1.py "$OUT" latency shapes overhead profile steps pitfalls > "$OUT/round1.txt" 2>&1
echo "round1 rc $?"
python3 -m gemvlab kernelbench > /tmp/solution.py && timeout 150 python3 -m gemvlab kernelbench --check /tmp/solution.py > "$OUT/kernelbench.txt" 2>&1
echo "kernelbench rc $?"
timeout 220 python3 -m pytest -q -x -p no:cacheprovider tests/test_gpu_occupancy.py tests/test_gpu_dispatch.py > "$OUT/pytest.txt" 2>&1
echo "pytest rc $?"
tail -3 "$OUT/pytest.txt"; grep -E "rule|latency|added_us|done" "$OUT/round1.txt" | cut -c1-150 | head -40
