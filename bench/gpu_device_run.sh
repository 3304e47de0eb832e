#!/usr/bin/env bash
# Everything the GPU labeller needs on a GPU machine, in one call: exactness tests, real-CT masks,
# compute-sanitizer memcheck + racecheck, the > 2^32-voxel test and the bench with its CuPy peer.
# usage: bench/gpu_device_run.sh BIN_DIR DATA_DIR OUT_DIR [STAGE...]
#   BIN_DIR  gpu_label_test, gpu_large_test, gpu_bench (linked --as-needed: no DCMTK needed there)
#   DATA_DIR NN_<nx>x<ny>x<nz>.raw.gz masks from `gpu_label_dicom --export` (real CT, read where DCMTK is)
#   STAGE    tests design sanitizer large bench profile (default: all but profile)
# Logs go to OUT_DIR/gpu.log, the bench table to OUT_DIR/gpu_report.md; stdout carries the summaries.
set -uo pipefail
bin=$1 data=$2 out=$3
shift 3
stages=${*:-tests design sanitizer large bench}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$out"
log=$out/gpu.log
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv | tee -a "$log"

step_dir=$work step_show="FAIL|ERROR|error"
. "$(dirname "$0")/device_step.sh"

for stage in $stages; do
    case $stage in
    tests)
        step random 180 "$bin/gpu_label_test" random
        for file in "$data"/*.raw.gz; do
            [ -e "$file" ] || continue
            dims=$(basename "$file" .raw.gz | sed 's/^[0-9]*_//; s/x/ /g')
            gunzip -c "$file" > "$work/ct.raw"
            step "ct_$(basename "$file" .raw.gz)" 60 "$bin/gpu_label_test" raw "$work/ct.raw" $dims
        done
        ;;
    design) step design 400 "$bin/gpu_label_test" design ;;
    sanitizer)
        step memcheck 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpu_label_test" random --quick
        step racecheck 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/gpu_label_test" random --quick
        ;;
    large) step large 120 "$bin/gpu_large_test" ;;
    bench)
        step bench 300 "$bin/gpu_bench" --write "$work" 20
        step cupy 200 python3 "$here/gpu_cupy_peer.py" "$work" 20
        python3 "$here/gpu_report.py" "$work/bench.out" "$work/cupy.out" | tee -a "$out/gpu_report.md"
        ;;
    profile)
        for config in "noise50 26" "noise50 6" "noise20 18" "ct 26" "ct 18"; do
            step "ncu_${config/ /_}" 120 ncu --clock-control none --csv --metrics \
                gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum "$bin/gpu_bench" --only $config
            python3 "$here/gpu_ncu_summary.py" "$work/ncu_${config/ /_}.out" | tee -a "$out/gpu_report.md"
        done
        ;;
    esac
done
rm -rf "$work"
exit $status
