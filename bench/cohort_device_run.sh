#!/usr/bin/env bash
# voxlabel batch on the GPU machine (issue 20), in at most 3 minutes (step limits 25 + 30 + 20 + 15 + 90 s), from the package of scripts/device-package:
#   gpu_equals_cpu  a phantom cohort through batch --device gpu and --device cpu: every labels.nii.gz and
#                   components.csv byte-identical, the same cohort rows (device and seconds aside)
#   memcheck        compute-sanitizer memcheck on a batch of 3 small series on the GPU (one process, one context,
#                   series after series, the reader thread decoding meanwhile)
#   e2e_multilabel  the issue-17 command end to end (512x512x400 u8 map of 117 classes, --multilabel
#                   --largest-per-class 1 --device gpu): wall seconds of 3 runs and each run's stage seconds; the
#                   labels and cleaned .nii.gz read by Python's gzip and zlib.decompress, the same bytes with --threads 1
#   gzip_bench      bench/cohort_gzip_bench on e2e_multilabel's labels.nii.gz: deflate candidates per core, the
#                   parallel writer at 1, 2, 4, 8, 16 threads, inflate by zlib's gzread and by voxlabel's reader
#   bench           bench/cohort_bench.sh --no-peers with DEVICE=gpu: batch as given, --prefetch 0/2, --jobs 2/4,
#                   --format nii against a voxlabel label loop; series per minute, summed stage seconds, target ratios
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
export voxlabel here work=$(mktemp -d)
log=$out/cohort.log step_dir=$out step_show="FAIL|ERROR SUMMARY|differ|series/min|\| batch|\| label|total/read|e2e|target|wall|writer|inflate" status=0
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
e2e_multilabel() { # voxlabel label MAP --multilabel --largest-per-class 1: the whole command, three times
    python3 "$here/multilabel_maps.py" "$work/maps" 117 || return 1
    local map=$work/maps/classes117.raw
    local run=(label "$map" --raw-dims 512,512,400 --raw-type u8 --multilabel --largest-per-class 1 --quiet --force)
    for k in 1 2 3; do
        local start=$EPOCHREALTIME
        "$voxlabel" "${run[@]}" --device "$GPU_DEVICE" -o "$work/e2e" || return 1
        echo "e2e run $k: wall $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }') s;" \
            "$(grep -o '"timings_s": {[^}]*}' "$work/e2e/summary.json")"
    done
    "$voxlabel" "${run[@]}" --device "$GPU_DEVICE" --threads 1 -o "$work/e2e_1" || return 1
    for f in labels.nii.gz cleaned.nii.gz; do
        cmp "$work/e2e/$f" "$work/e2e_1/$f" || { echo "$f: differs between all threads and --threads 1"; return 1; }
    done
    python3 - "$work/e2e" << 'EOF' || return 1
import gzip, sys, zlib
for name in ("labels.nii.gz", "cleaned.nii.gz"):
    data = open(sys.argv[1] + "/" + name, "rb").read()
    whole = gzip.decompress(data)
    assert whole == zlib.decompress(data, 31) and len(whole) == 352 + 512 * 512 * 400, name
    print("%s: %d bytes, %d voxels, python gzip == zlib.decompress" % (name, len(data), len(whole) - 352))
EOF
}
export -f equal_check memcheck_batch e2e_multilabel
step gpu_equals_cpu 25 bash -c equal_check
step memcheck 30 bash -c memcheck_batch
step e2e_multilabel 20 bash -c e2e_multilabel
step gzip_bench 15 "$bin/cohort_gzip_bench" "$work/e2e/labels.nii.gz" "$work" 1 2 6
cat "$out/gzip_bench.out"
export DEVICE=$GPU_DEVICE SLICES="200 300 400"
step bench 90 bash "$here/cohort_bench.sh" "$voxlabel" "$work/bench" "$phantoms" --no-peers
cp "$work/bench/cohort_bench.md" "$out/" 2> /dev/null && cat "$out/cohort_bench.md"
rm -rf "$work"
exit $status
