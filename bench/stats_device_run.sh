#!/usr/bin/env bash
# Everything the GPU statistics need on a GPU machine, in one call: GPU == CPU tests, compute-sanitizer memcheck +
# racecheck, the bench on the CT-like phantom and an Nsight Compute profile of its kernels.
# usage: bench/stats_device_run.sh BIN_DIR OUT_DIR [STAGE...]
#   BIN_DIR  stats_gpu and stats_bench (linked --as-needed: they need no DCMTK on the device)
#   STAGE    tests sanitizer bench profile (default: tests sanitizer bench)
# Logs go to OUT_DIR/stats.log, the profile to OUT_DIR/stats_profile.txt; stdout carries the summaries.
set -uo pipefail
bin=$1 out=$2
shift 2
stages=${*:-tests sanitizer bench}
mkdir -p "$out"
log=$out/stats.log
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee -a "$log"

step_dir=$out step_show="FAIL|ERROR|error|gpu "
. "$(dirname "$0")/device_step.sh"

for stage in $stages; do
    case $stage in
    tests) step stats_gpu 300 "$bin/stats_gpu" ;;
    sanitizer)
        step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/stats_gpu" --quick
        step racecheck 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/stats_gpu" --quick
        ;;
    bench) step bench 300 "$bin/stats_bench" 512 512 400 64 0 20 gpu ;;
    profile)
        step ncu 300 ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
            --section WarpStateStats -k "regex:stats_|keys|median|Onesweep|Histogram|Scan" \
            "$bin/stats_bench" 512 512 400 64 0 1 gpu
        mv "$out/ncu.out" "$out/stats_profile.txt"
        ;;
    esac
done
exit $status
