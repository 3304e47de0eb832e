#!/usr/bin/env bash
# Everything the GPU multilabel labeller needs on a GPU machine, in one call (about 3 minutes on an H200, 128 GiB host memory):
#   tests      GPU == CPU on 240 random class maps (+ z-slabs), on 512x512x400 maps of 20 and 117 classes, on a
#              2048x2048x1025 map (over 2^32 voxels, z-slabs) and on the real-CT masks of the package
#              (data/*.raw.gz) cut into touching classes
#   sanitizer  compute-sanitizer memcheck and racecheck on 60 small random class maps
#   bench      multilabel vs our binary labelling of the same foreground (CUDA events), vs a CuPy loop of
#              cupyx.scipy.ndimage.label over the classes, and end to end (host map -> largest per class ->
#              cleaned map) through the library and through `voxlabel label --multilabel` (.nii.gz written)
#              and, with Nsight Compute, the per-kernel time, DRAM bytes, registers, occupancy and instructions of
#              one call (matlab order, conn 26) of the multilabel labeller on the 117-class map and on the same
#              map without islands, and of the binary labeller on its foreground
# usage: bench/multilabel_device_run.sh BIN_DIR OUT_DIR [STAGE...]
#   BIN_DIR  gpu_multilabel_test and multilabel_gpu_bench (linked --as-needed: no DCMTK needed); the package's
#            voxlabel in BIN_DIR/.. and real-CT masks in BIN_DIR/../data when present (scripts/device-package)
# Logs go to OUT_DIR/multilabel.log and OUT_DIR/multilabel_report.md; stdout carries the summaries.
set -uo pipefail
bin=$1 out=$2
shift 2
stages=${*:-tests sanitizer bench}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$out"
log=$out/multilabel.log
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee -a "$log"

step_dir=$work step_show="FAIL|ERROR|error|^ok |identical|multilabel_|binary_|cupy_|e2e"
. "$here/device_step.sh"

for stage in $stages; do
    case $stage in
    tests)
        step random 150 "$bin/gpu_multilabel_test" random
        step large 150 "$bin/gpu_multilabel_test" large
        step huge 150 "$bin/gpu_multilabel_test" huge
        for file in "$bin"/../data/*.raw.gz; do
            [ -e "$file" ] || continue
            dims=$(basename "$file" .raw.gz | sed 's/^[0-9]*_//; s/x/ /g')
            gunzip -c "$file" > "$work/ct.raw"
            step "ct_$(basename "$file" .raw.gz)" 60 "$bin/gpu_multilabel_test" raw "$work/ct.raw" $dims
        done
        ;;
    sanitizer)
        step memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpu_multilabel_test" random --quick
        step racecheck 200 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/gpu_multilabel_test" random --quick
        ;;
    bench)
        python3 "$here/multilabel_maps.py" "$work" 20 117 | tee -a "$log"
        report=$out/multilabel_report.md
        echo "| classes | multilabel ms (matlab) | multilabel ms (size) | binary ms (matlab) | multilabel / binary | CuPy loop ms | CuPy / multilabel | e2e library s | e2e CLI s |" | tee -a "$report"
        echo "|---|---|---|---|---|---|---|---|---|" | tee -a "$report"
        for k in 20 117; do
            map=$work/classes$k.raw
            step "bench_$k" 200 "$bin/multilabel_gpu_bench" "$map" 512 512 400 26 20
            step "cupy_$k" 200 python3 "$here/multilabel_peers.py" gpu "$map" 512 512 400 26 3
            cli_seconds=n/a
            if [ -x "$bin/../voxlabel" ]; then
                start=$EPOCHREALTIME
                step "cli_$k" 120 "$bin/../voxlabel" label "$map" --raw-dims 512,512,400 --raw-type u8 --multilabel \
                    --largest-per-class 1 --device gpu --force -o "$work/cli_$k"
                cli_seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
            fi
            b=$work/bench_$k.out c=$work/cupy_$k.out
            awk -v k="$k" -v cli="$cli_seconds" '
                FILENAME ~ /bench/ && $1 == "multilabel_matlab" { m = $3 }
                FILENAME ~ /bench/ && $1 == "multilabel_size" { s = $3 }
                FILENAME ~ /bench/ && $1 == "binary_matlab" { b = $3 }
                FILENAME ~ /bench/ && $1 == "e2e" { e = $2 }
                FILENAME ~ /cupy/ && $1 == "cupy_loop" { c = $2 * 1000 }
                END { printf "| %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.3f | %s |\n", k, m, s, b, m / b, c, c / m, e, cli }
            ' "$b" "$c" | tee -a "$report"
        done
        # Nsight Compute: every kernel of the first call of the multilabel labeller on the 117-class map and on the
        # same map without islands, and of the binary labeller on its foreground (8 kernels a call each).
        python3 "$here/multilabel_maps.py" "$work" 117solid | tee -a "$log"
        metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread
        metrics=$metrics,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
        for run in multilabel:117 multilabel:117solid binary:117; do
            kind=${run%%:*} map=${run#*:}
            step "ncu_${kind}_$map" 120 ncu --clock-control none --csv --launch-count 8 --metrics "$metrics" \
                "$bin/multilabel_gpu_bench" "$work/classes$map.raw" 512 512 400 26 1 "$kind"
            python3 "$here/gpu_ncu_summary.py" "$work/ncu_${kind}_$map.out" | tee -a "$out/multilabel_report.md"
        done
        ;;
    esac
done
rm -rf "$work"
exit $status
