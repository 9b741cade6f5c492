#!/usr/bin/env bash
# What we run on the GPU machine (the device tool's H200), in one call, logging under $OUT.
# Usage: tools/gpu-run.sh STEP...
#   doctor     nvidia-smi and python -m gemvlab doctor
#   build      every kernel built (registers, spills, load widths)
#   test       every test (the GPU tests included; compute-sanitizer runs inside them)
#   quick      a small record: the whole pipeline in about a minute
#   record     python -m gemvlab record into $OUT/h200.json (and gemvlab-record.json, for the notebooks)
#   notebooks  every notebook executed live (against gemvlab-record.json when a record ran before)
#   counters   Nsight Compute counters of the stages, the dispatcher and torch.matmul at 2048 x 65,536
#   bits       bench/same_bits.py compare against bench/results/h200-bits.json
#   tune       bench/tune_dispatch.py into $OUT/h200-dispatch.csv
#   decode     the decode study: python -m gemvlab record --decode into $OUT/decode.json, its bar into
#              $OUT/bar.txt (on the H200, the file that replaces gemvlab/results/recorded/h200.json)
#   decode-tune  bench/tune_dispatch.py --decode $DECODE_TUNE (e.g. "--n 1,8 --dtypes bfloat16") into $OUT/decode.csv
#   decode-test  tests/test_gpu_decode.py (compute-sanitizer included)
# The machine has torch, triton, pytest and ninja but no network: gemvlab runs from the checkout
# (PYTHONPATH), the notebook stack comes as wheels in .whl/ (../shared/gpu/), and kernels built here
# beforehand can travel in .gpucache (tools/gpu-cache.sh builds it; carry it; GEMVLAB_CACHE points there when
# it exists).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
[ -d .gpucache ] && export GEMVLAB_CACHE=$PWD/.gpucache
status=0
for step in "$@"; do
  echo "=== $step $(date -u +%H:%M:%S)"
  case $step in
    doctor) nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1 | tee "$OUT/smi.txt"
            python3 -m gemvlab doctor 2>&1 | tee "$OUT/doctor.txt" ;;
    build) python3 -m gemvlab build 2>&1 | tee "$OUT/build.txt" ;;
    test) timeout 560 python3 -m pytest -q -p no:cacheprovider tests --ignore=tests/test_browser.py 2>&1 \
            | tee "$OUT/pytest.txt" | tail -25 ;;
    quick) python3 -m gemvlab record --quick --no-pitfalls --out "$OUT/quick.json" > "$OUT/quick.txt" 2>&1
           rc=$?; tail -30 "$OUT/quick.txt"; [ $rc = 0 ] || { status=$rc; break; } ;;
    record) timeout 570 python3 -m gemvlab record --out gemvlab-record.json > "$OUT/record.txt" 2>&1
            rc=$?; cp gemvlab-record.json "$OUT/h200.json" 2>/dev/null || cp gemvlab-record.json.partial "$OUT/h200.partial.json"
            grep -E "failed|Error|wrote|memory:" "$OUT/record.txt" | cut -c1-300 | tail -12; [ $rc = 0 ] || status=$rc ;;
    notebooks)
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
      export PYTHONPATH=$PYTHONPATH:/tmp/site
      [ -f gemvlab-record.json ] && export GEMVLAB_RECORDED=$PWD/gemvlab-record.json
      timeout 400 python3 tools/execute_notebooks.py --out "$OUT" 2>&1 | tee "$OUT/notebooks.txt" ;;
    counters)
      python3 -c "from gemvlab.measure import counters as c; c.show(c.run(2048, 65536, timeout=300))" 2>&1 \
        | tee "$OUT/counters.txt" | tail -20 ;;
    bits) python3 bench/same_bits.py compare bench/results/h200-bits.json 2>&1 | tee "$OUT/bits.txt" | tail -40 ;;
    tune) python3 bench/tune_dispatch.py --out "$OUT/h200-dispatch.csv" 2>&1 | tee "$OUT/tune.txt" | tail -25 ;;
    decode) timeout 300 python3 -m gemvlab record --decode --out "$OUT/decode.json" > "$OUT/decode.txt" 2>&1
            rc=$?; tail -3 "$OUT/decode.txt"; [ $rc = 0 ] || { status=$rc; continue; }
            python3 -m gemvlab table --decode --bar --file "$OUT/decode.json" > "$OUT/bar.txt" 2>&1; tail -12 "$OUT/bar.txt" ;;
    decode-tune)
      # shellcheck disable=SC2086  # DECODE_TUNE is a list of arguments
      timeout 300 python3 bench/tune_dispatch.py --decode ${DECODE_TUNE:-} --out "$OUT/decode.csv" 2>&1 \
        | tee "$OUT/decode-tune.txt" | tail -5 ;;
    decode-test) timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py 2>&1 \
                   | tee "$OUT/decode-test.txt" | tail -5 ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
  [ "${PIPESTATUS[0]:-0}" = 0 ] || status=1
done
exit $status
