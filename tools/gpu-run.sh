#!/usr/bin/env bash
# What we run on the GPU machine (the device tool's H200), in one call, logging under $OUT.
# Usage: tools/gpu-run.sh STEP...   steps: doctor build test quick record notebooks counters
# The machine has torch, triton, pytest and ninja but no network: gemvlab runs from the
# checkout (PYTHONPATH), and the notebook stack comes as wheels in .whl/ (../shared/gpu/).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
status=0
for step in "$@"; do
  echo "=== $step $(date -u +%H:%M:%S)"
  case $step in
    doctor) nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee "$OUT/smi.txt"
            python3 -m gemvlab doctor 2>&1 | tee "$OUT/doctor.txt" ;;
    build) python3 -m gemvlab build 2>&1 | tee "$OUT/build.txt" ;;
    test) python3 -m pytest -q -p no:cacheprovider tests 2>&1 | tee "$OUT/pytest.txt" | tail -25 ;;
    quick) python3 -m gemvlab record --quick --no-pitfalls --out "$OUT/quick.json" > "$OUT/quick.txt" 2>&1
           rc=$?; tail -30 "$OUT/quick.txt"; [ $rc = 0 ] || { status=$rc; break; } ;;
    record) python3 -m gemvlab record --out "$OUT/h200.json" > "$OUT/record.txt" 2>&1
            rc=$?; tail -40 "$OUT/record.txt"; [ $rc = 0 ] || status=$rc ;;
    notebooks)
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
      export PYTHONPATH=$PYTHONPATH:/tmp/site
      python3 tools/execute_notebooks.py "$OUT" 2>&1 | tee "$OUT/notebooks.txt" ;;
    counters)  # L1 and L2 traffic of stage 4 with and without __ldcg (tools/explore/l1_counters.py)
      ncu --clock-control none --kernel-name regex:"gemv|s4x" --metrics \
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,\
gpu__time_duration.sum python3 tools/explore/l1_counters.py 2>&1 | tee "$OUT/counters.txt" | tail -60 ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
  [ "${PIPESTATUS[0]:-0}" = 0 ] || status=1
done
exit $status
