#!/usr/bin/env bash
# voxlabel batch on the GPU machine (issue 20), in at most 3 minutes (step limits 40 + 40 + 100 s), from the package of scripts/device-package:
#   gpu_equals_cpu  a phantom cohort through batch --device gpu and --device cpu: every labels.nii.gz and
#                   components.csv byte-identical, the same cohort rows (device and seconds aside)
#   memcheck        compute-sanitizer memcheck on a batch of 3 small series on the GPU (one process, one context,
#                   series after series, the reader thread decoding meanwhile)
#   bench           bench/cohort_bench.sh --no-peers with DEVICE=gpu: batch at --prefetch 0/1/2 and --jobs 2
#                   against a voxlabel label loop; series per minute, summed stage seconds, total/read
# usage: bench/cohort_device_run.sh BIN_DIR OUT_DIR [PHANTOMS]
#   BIN_DIR  the package's bin/ (voxlabel itself is BIN_DIR/voxlabel or BIN_DIR/../voxlabel; lib/ and the DCMTK
#            dictionaries beside it are used when LD_LIBRARY_PATH / DCMDICTPATH are not set)
#   PHANTOMS phantom series for the bench (default 12; 512x512 x 200/300/400 slices)
#   GPU_DEVICE (default gpu) is the --device of the GPU runs: cpu checks the script itself on a machine without one
set -uo pipefail
bin=$(realpath "$1") out=$2 phantoms=${3:-12}
export GPU_DEVICE=${GPU_DEVICE:-gpu}
here=$(cd "$(dirname "$0")" && pwd)
package=$(dirname "$bin")
voxlabel=$bin/voxlabel
[ -x "$voxlabel" ] || voxlabel=$package/voxlabel
[ -n "${LD_LIBRARY_PATH:-}" ] || export LD_LIBRARY_PATH=$package/lib
[ -n "${DCMDICTPATH:-}" ] || export DCMDICTPATH=$package/dicom.dic:$package/private.dic
mkdir -p "$out"
out=$(realpath "$out")
export voxlabel work=$(mktemp -d)
log=$out/cohort.log step_dir=$out step_show="FAIL|ERROR SUMMARY|differ|series/min|\| batch|\| label|total/read" status=0
. "$here/device_step.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"

equal_check() { # the same small cohort on both devices, compared
    local root=$work/eq
    for k in 1 2 3 4; do
        "$voxlabel" phantom -o "$root/p$k" --size "256x256x$((60 * k))" --seed "$k" --quiet || return 1
    done
    "$voxlabel" batch "$root" -o "$work/eq_gpu" --preset bone --stats full --device "$GPU_DEVICE" --quiet || return 1
    "$voxlabel" batch "$root" -o "$work/eq_cpu" --preset bone --stats full --device cpu --quiet || return 1
    local differ=0 files=0
    while IFS= read -r file; do
        files=$((files + 1))
        cmp -s "$work/eq_gpu/$file" "$work/eq_cpu/$file" || { echo "$file: gpu and cpu differ"; differ=1; }
    done < <(cd "$work/eq_gpu" && find . -name labels.nii.gz -o -name components.csv)
    # cohort rows without the device and seconds columns
    cut -d, -f1-26 "$work/eq_gpu/cohort.csv" > "$work/gpu_rows" && cut -d, -f1-26 "$work/eq_cpu/cohort.csv" > "$work/cpu_rows"
    cmp -s "$work/gpu_rows" "$work/cpu_rows" || { echo "cohort.csv rows: gpu and cpu differ"; differ=1; }
    echo "series labelled on the gpu: $(grep -c ',gpu,' "$work/eq_gpu/cohort.csv")"
    echo "$files files compared"
    [ "$files" -ge 8 ] && [ "$differ" = 0 ]
}
memcheck_batch() {
    local root=$work/mc
    for k in 1 2 3; do "$voxlabel" phantom -o "$root/p$k" --size 96x96x40 --seed "$k" --quiet || return 1; done
    local sanitizer=(compute-sanitizer --tool memcheck --error-exitcode 9)
    command -v compute-sanitizer > /dev/null || { echo "no compute-sanitizer here: plain run"; sanitizer=(); }
    "${sanitizer[@]}" "$voxlabel" batch "$root" -o "$work/mc_out" --preset bone --device "$GPU_DEVICE" --quiet
}
export -f equal_check memcheck_batch
step gpu_equals_cpu 40 bash -c equal_check
step memcheck 40 bash -c memcheck_batch
export DEVICE=$GPU_DEVICE SLICES="200 300 400"
step bench 100 bash "$here/cohort_bench.sh" "$voxlabel" "$work/bench" "$phantoms" --no-peers
cp "$work/bench/cohort_bench.md" "$out/" 2> /dev/null && cat "$out/cohort_bench.md"
rm -rf "$work"
exit $status
