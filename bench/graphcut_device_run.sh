#!/usr/bin/env bash
# Issue 23 on a GPU machine, in one call (about 3 minutes at most): the GPU max-flow and MOG2 against the CPU
# (exact flow and cut energy; identical masks), MOG2 against OpenCV on the GPU (G1, G2), compute-sanitizer
# memcheck and racecheck, and the G5 bench (512^2 4-connected cut at several relabel intervals and with one launch
# per phase, 256^3 6-connected cut against BK on one core, MOG2 frames per second at 512^2, OpenCV's MOG2 on all
# cores), ending with the G5 max-flow lines.
# usage: bench/graphcut_device_run.sh BIN_DIR OUT_DIR [STAGE...]
#   BIN_DIR  graphcut_gpu, background_gpu, background_tool, graphcut_bench (linked --as-needed: no DCMTK needed)
#   STAGE    tests sanitizer bench (default: all three)
# PYTHON: an interpreter with numpy and OpenCV (default python3). The log goes to OUT_DIR/graphcut.log; stdout carries the summaries; exit 1 when a step failed.
set -uo pipefail
bin=$1 out=$2
shift 2
stages=${*:-tests sanitizer bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
log=$out/graphcut.log
status=0
work=$(mktemp -d) # the MOG2 oracle's frames and masks: scratch, kept out of OUT_DIR so that OUT_DIR stays small
trap 'rm -rf "$work"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee -a "$log"

step_dir=$out step_show="FAIL|ERROR|error|flow|speed-up|frames/s|agreement|G2"
. "$here/device_step.sh"

for stage in $stages; do
    case $stage in
    tests)
        step graphcut_gpu 60 "$bin/graphcut_gpu"
        step background_gpu 30 "$bin/background_gpu"
        step background_opencv_gpu 40 "${PYTHON:-python3}" "$here/../tests/background_oracle_mog2.py" "$bin/background_tool" \
            "$work/background" gpu
        ;;
    sanitizer)
        for tool in memcheck racecheck; do
            step "graphcut_$tool" 60 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/graphcut_gpu" quick
            step "background_$tool" 60 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/background_gpu" quick
        done
        ;;
    bench)
        step maxflow_512_c4 30 "$bin/graphcut_bench" maxflow 512 512 1 4 11 both
        for interval in 8 12 48; do
            step "maxflow_512_c4_relabel_$interval" 20 "$bin/graphcut_bench" maxflow 512 512 1 4 11 gpu - $interval
        done
        step maxflow_512_c4_launched 20 "$bin/graphcut_bench" maxflow 512 512 1 4 11 launched
        step maxflow_512_c8 30 "$bin/graphcut_bench" maxflow 512 512 1 8 5 both
        step maxflow_1024_c4 40 "$bin/graphcut_bench" maxflow 1024 1024 1 4 3 both
        step maxflow_1024_c4_launched 20 "$bin/graphcut_bench" maxflow 1024 1024 1 4 3 launched
        step mog2_gpu 30 "$bin/graphcut_bench" mog2 512 512 2000 gpu
        step mog2_cpu 30 "$bin/graphcut_bench" mog2 512 512 500 cpu
        step mog2_opencv 40 "${PYTHON:-python3}" "$here/graphcut_peers.py" mog2 512 512 500
        step maxflow_256cubed_c6 120 "$bin/graphcut_bench" maxflow 256 256 256 6 1 both
        ;;
    esac
done
if [ -f "$out/maxflow_512_c4.out" ] || [ -f "$out/maxflow_256cubed_c6.out" ]; then
    echo "G5 max-flow (targets: 512^2 c4 in at most 10 ms; 256^3 c6 at least 10x BK on one core):"
    grep -h -E "gpu \(relabel|speed-up" "$out/maxflow_512_c4.out" "$out/maxflow_256cubed_c6.out" 2>/dev/null
fi
echo "graphcut device run: status $status (log $log)"
exit $status
