#!/usr/bin/env bash
# Round 20 on the device tool's H200: the timing round, then the counters under ncu.
# Usage (from the checkout's root, GEMVLAB_CACHE prebuilt): bash tools/explore/round20.sh OUT_DIR
OUT=$1
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/smi.txt"
(cd tools/explore && timeout 400 python3 round20.py "$OUT" > "$OUT/round20.txt" 2>&1; echo "round20.py rc=$?")
METRICS="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,\
l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
echo "METRICS=$METRICS" > "$OUT/counters.txt"
(cd tools/explore && timeout 150 ncu --clock-control none --kernel-name regex:"^(gemv_row_tiles|gemv_split_k)$" \
  --metrics "$METRICS" python3 round20_counters.py >> "$OUT/counters.txt" 2>&1; echo "ncu rc=$?")
tail -3 "$OUT/round20.txt"
