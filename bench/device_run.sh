#!/usr/bin/env bash
# Every GPU check and benchmark in one call on the GPU machine, from the package of scripts/device-package:
#   tests      the ctest `gpu` programs (labeller, z-slabs, > 2^32 voxels, memory pressure, statistics,
#              colour and morphology, device selection) and the real-CT masks
#   sanitizer  compute-sanitizer memcheck and racecheck on the labeller, statistics, morphology and colour
#   bench      the labeller against CuPy, the statistics, the 2D stages
#   cli        the CLI end to end, GPU against CPU byte for byte (bench/cli_device_run.sh)
#   golden     scripts/golden with the package's before/voxlabel against its voxlabel (needs ../shared)
#   AREA[:STEPS]  one area's own script, bench/AREA_device_run.sh BIN OUT/AREA [STEPS, comma-separated]:
#              multilabel, features, forest, graphcut, cohort, python, stats3d (e.g. features:tests,sanitizer)
# usage: bench/device_run.sh PACKAGE OUT_DIR [STAGE...]   (default: the first five)
# Logs go to OUT_DIR; stdout carries the summaries and ends with "device run: N failed step(s)".
set -uo pipefail
package=$1 out=$2
shift 2
stages=${*:-tests sanitizer bench cli golden}
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
tar -C "$root" -xJf "$package"
export LD_LIBRARY_PATH=$root/lib DCMDICTPATH=$root/dicom.dic:$root/private.dic
bin=$root/bin
export PATH=$bin:$PATH
mkdir -p "$out"
failed=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

run_stage() { # NAME COMMAND...: one sub-script; its failure counts once
    local name=$1
    shift
    echo "#### $name"
    "$@" || { failed=$((failed + 1)); echo "#### $name: FAILED"; }
}

for stage in $stages; do
    case $stage in
    tests)
        run_stage labeller "$here/gpu_device_run.sh" "$bin" "$root/data" "$out/label" tests large
        run_stage statistics "$here/stats_device_run.sh" "$bin" "$out/stats" tests
        log=$out/device.log step_dir=$out step_show="FAIL|ERROR|error" status=0
        . "$here/device_step.sh"
        step memory_pressure 300 "$bin/gpu_memory_test"
        step hsv_exhaustive 120 "$bin/image2d_hsv_exhaustive" gpu
        step morphology 300 "$bin/image2d_morph" gpu
        step device_selection 200 bash "$here/../tests/gpu_device_selection.sh" "$root/voxlabel"
        [ "$status" -eq 0 ] || failed=$((failed + 1))
        ;;
    sanitizer)
        run_stage labeller_sanitizer "$here/gpu_device_run.sh" "$bin" "$root/data" "$out/label" sanitizer
        run_stage statistics_sanitizer "$here/stats_device_run.sh" "$bin" "$out/stats" sanitizer
        log=$out/device.log step_dir=$out step_show="ERROR SUMMARY|FAIL" status=0
        . "$here/device_step.sh"
        for tool in memcheck racecheck; do
            step "morphology_$tool" 200 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/image2d_morph" gpu quick
            step "colour_$tool" 200 compute-sanitizer --tool $tool --error-exitcode 9 \
                "$bin/stages2d_bench_gpu" --slices 8 --repeats 1
        done
        [ "$status" -eq 0 ] || failed=$((failed + 1))
        ;;
    bench)
        run_stage labeller_bench "$here/gpu_device_run.sh" "$bin" "$root/data" "$out/label" bench
        [ -f "$out/label/gpu_report.md" ] && cat "$out/label/gpu_report.md"
        run_stage statistics_bench "$here/stats_device_run.sh" "$bin" "$out/stats" bench
        run_stage stages2d_bench "$bin/stages2d_bench_gpu" --slices 400 --repeats 10
        ;;
    cli) run_stage cli "$here/cli_device_run.sh" "$package" ;;
    multilabel* | features* | forest* | graphcut* | cohort* | python* | stats3d*)
        area=${stage%%:*} steps=
        [ "$area" = "$stage" ] || steps=${stage#*:}
        run_stage "$area" "$here/${area}_device_run.sh" "$bin" "$out/$area" ${steps//,/ }
        ;;
    golden)
        if [ -x "$root/before/voxlabel" ]; then
            run_stage golden "$here/../scripts/golden" --before "$root/before/voxlabel" --after "$root/voxlabel"
        else
            echo "#### golden: skipped (the package has no before/voxlabel)"
        fi
        ;;
    esac
done
rm -rf "$root"
echo "device run: $failed failed step(s)"
[ "$failed" -eq 0 ]
