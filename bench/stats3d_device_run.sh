#!/usr/bin/env bash
# Issue 19 on a GPU machine, in one call (under 3 minutes on an H200 host): GPU == CPU for every column,
# issue-19 ones included (tests/stats_gpu.c compares whole records: the Euler number from
# cuda/stats/stats_euler_gpu.cu against the CPU's, the hull, surface and voxel groups run on the host for both),
# compute-sanitizer memcheck and racecheck on the same test, then the statistics bench on the CT-like phantom
# (512x512x400, HU >= 64, about 171 000 components) with the GPU, one line per column group.
# usage: bench/stats3d_device_run.sh BIN_DIR OUT_DIR
#   BIN_DIR  stats_gpu and stats_bench (prebuilt; scripts/device-package lays them out, with LD_LIBRARY_PATH set
#            as bench/device_run.sh sets it)
# Logs go to OUT_DIR/stats3d.log; stdout carries the summaries.
set -uo pipefail
bin=$1 out=$2
mkdir -p "$out"
log=$out/stats3d.log
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee -a "$log"

step_dir=$out step_show="FAIL|ERROR|error|identical|gpu |cpu "
. "$(dirname "$0")/device_step.sh"

step stats3d_gpu_equals_cpu 150 "$bin/stats_gpu"
step stats3d_memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/stats_gpu" --quick
step stats3d_racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/stats_gpu" --quick
# GPU end to end per column group (the hull, surface and voxel groups are CPU time on the host's cores;
# "full with HU + Euler" minus "full with HU (exact median)" is the GPU Euler kernel with its download).
step stats3d_bench_gpu 150 "$bin/stats_bench" 512 512 400 64 0 3 gpu
exit $status
