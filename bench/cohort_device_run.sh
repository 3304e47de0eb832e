#!/usr/bin/env bash
# voxlabel batch on the GPU machine (issue 20), from the package of scripts/device-package and, when carried, the
# peers of scripts/cohort-peers-pack (.device/peers); step limits series 40 + 40, equal 25, memcheck 90, e2e 25, gzip 15,
# bench 170, ratio 90 s (all but ratio: about 3 minutes):
#   series      tests/series_gpu (vl_series_label on the GPU, device-resident, == its CPU reference: labels, N,
#               sizes, statistics), then bench/cohort_series_bench on a 512x512x140 phantom: the compute phases of
#               the separate stages and of the resident series, and the write of u8 against u32 labels by threads
#   equal       a phantom cohort through batch --device gpu and --device cpu: every labels.nii.gz and
#               components.csv byte-identical, the same cohort rows (device and seconds aside); and the GPU run
#               again with --write-behind 0 and 3: the same bytes
#   memcheck    compute-sanitizer memcheck on series_gpu --quick, and on a batch of 3 small series on the GPU (one
#               process, one context, series after series, the reader and writer threads working meanwhile)
#   e2e         the issue-17 command end to end (512x512x400 u8 map of 117 classes, --multilabel
#               --largest-per-class 1 --device gpu): wall seconds of 3 runs and each run's stage seconds; the
#               labels and cleaned .nii.gz read by Python's gzip and zlib.decompress, the same bytes with --threads 1;
#               then where a run's wall goes outside its measured total: `voxlabel --version` (start and exit of
#               the process), and a 64^3 label run on the cpu and on the gpu, wall against summary.json's total
#   gzip        bench/cohort_gzip_bench on e2e's labels.nii.gz: deflate candidates per core, the parallel writer
#               at 1, 2, 4, 8, 16 threads, inflate by zlib's gzread and by voxlabel's reader
#   bench       bench/cohort_bench.sh with DEVICE=gpu: batch as given and its rerun (discovery alone), serial,
#               --write-behind 0/2/3, --prefetch 2, --jobs 2, --format nii against a voxlabel label loop and, with
#               the peers, a dcm2niix + cc3d loop (stopped after PEER_SECONDS, default 45: series per minute over the
#               series it did); series per minute, summed stage and CPU seconds, the three target ratios
#   ratio       the bench's batch runs that the labelling-wall target needs (defaults, serial, --write-behind 2
#               and 3, --write-threads 8 and 16, --threads 12, --prefetch 2, --format nii, and the defaults' rerun:
#               discovery alone), without the loops: about a minute; then bench/cohort_read_bench on the same
#               cohort: the wall and CPU seconds of its read and decode alone
# usage: bench/cohort_device_run.sh BIN_DIR OUT_DIR [STEP...]   (default: series equal memcheck e2e gzip bench)
#   BIN_DIR  the package's bin/ (voxlabel itself is BIN_DIR/voxlabel or BIN_DIR/../voxlabel; lib/ and the DCMTK
#            dictionaries beside it are used when LD_LIBRARY_PATH / DCMDICTPATH are not set)
#   PHANTOMS phantom series for the bench (default 40; 512x512 x SLICES, default "80 120 160 200", in turn)
#   PEERS    the peers folder (default .device/peers of this checkout); without it the bench runs --no-peers
#   GPU_DEVICE (default gpu) is the --device of the GPU runs: cpu checks the script itself on a machine without one
set -uo pipefail
bin=$(realpath "$1") out=$2 phantoms=${PHANTOMS:-40}
shift 2
steps=" ${*:-series equal memcheck e2e gzip bench} "
wants() { [[ "$steps" == *" $1 "* ]]; }
export GPU_DEVICE=${GPU_DEVICE:-gpu}
here=$(cd "$(dirname "$0")" && pwd)
package=$(dirname "$bin")
voxlabel=$bin/voxlabel
[ -x "$voxlabel" ] || voxlabel=$package/voxlabel
[ -n "${LD_LIBRARY_PATH:-}" ] || export LD_LIBRARY_PATH=$package/lib
[ -n "${DCMDICTPATH:-}" ] || export DCMDICTPATH=$package/dicom.dic:$package/private.dic
mkdir -p "$out"
out=$(realpath "$out")
export voxlabel bin here work=$(mktemp -d)
log=$out/cohort.log step_dir=$out step_show="FAIL|ERROR SUMMARY|identical|differ|series/min|\| batch|\| label|\| peer|total/read|e2e|target|wall|writer|inflate|overhead|peers:|read\+decode|scan:" status=0
. "$here/device_step.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2> /dev/null), defrag" \
    "$(cat /sys/kernel/mm/transparent_hugepage/defrag 2> /dev/null)" | tee -a "$log"

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
    local behind
    for behind in 0 3; do
        "$voxlabel" batch "$root" -o "$work/eq_gpu_$behind" --preset bone --stats full --device "$GPU_DEVICE" --quiet \
            --write-behind "$behind" || return 1
        while IFS= read -r file; do
            files=$((files + 1))
            cmp -s "$work/eq_gpu/$file" "$work/eq_gpu_$behind/$file" ||
                { echo "$file: --write-behind $behind differs"; differ=1; }
        done < <(cd "$work/eq_gpu" && find . -name labels.nii.gz -o -name components.csv -o -name summary.json)
    done
    echo "series labelled on the gpu: $(grep -c ',gpu,' "$work/eq_gpu/cohort.csv")"
    echo "$files files compared"
    [ "$files" -ge 32 ] && [ "$differ" = 0 ]
}
memcheck_batch() {
    local root=$work/mc
    for k in 1 2 3; do "$voxlabel" phantom -o "$root/p$k" --size 96x96x40 --seed "$k" --quiet || return 1; done
    local sanitizer=(compute-sanitizer --tool memcheck --error-exitcode 9)
    command -v compute-sanitizer > /dev/null || { echo "no compute-sanitizer here: plain run"; sanitizer=(); }
    "${sanitizer[@]}" "$bin/series_gpu" --quick || return 1
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
    # Outside the measured total: process start and exit, and what a GPU run adds to them.
    local start
    for k in 1 2 3; do
        start=$EPOCHREALTIME
        "$voxlabel" --version > /dev/null
        echo "overhead: voxlabel --version wall $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }') s"
    done
    "$voxlabel" phantom -o "$work/tiny" --size 64x64x64 --seed 1 --quiet || return 1
    for device in cpu "$GPU_DEVICE" cpu "$GPU_DEVICE"; do
        start=$EPOCHREALTIME
        "$voxlabel" label "$work/tiny" --preset bone --device "$device" --quiet --force -o "$work/tiny_$device" || return 1
        echo "overhead: 64^3 label --device $device wall $(awk -v a="$start" -v b="$EPOCHREALTIME" \
            'BEGIN { printf "%.3f", b - a }') s, total $(grep -o '"total": [0-9.]*' "$work/tiny_$device/summary.json" | cut -d' ' -f2) s"
    done
}
export -f equal_check memcheck_batch e2e_multilabel
if wants series; then
    step series_gpu_equals_cpu 40 "$bin/series_gpu"
    step series_bench 40 "$bin/cohort_series_bench" 512 512 140 5 "$work" "$GPU_DEVICE"
    cat "$out/series_bench.out"
fi
wants equal && step gpu_equals_cpu 25 bash -c equal_check
wants memcheck && step memcheck 90 bash -c memcheck_batch
wants e2e && step e2e_multilabel 25 bash -c e2e_multilabel
if wants gzip; then
    [ -f "$work/e2e/labels.nii.gz" ] || { "$voxlabel" phantom -o "$work/gz_ct" --size 512x512x200 --seed 1 --quiet &&
        "$voxlabel" label "$work/gz_ct" --preset bone --quiet -o "$work/e2e"; }
    step gzip_bench 15 "$bin/cohort_gzip_bench" "$work/e2e/labels.nii.gz" "$work" 1 2 6
    cat "$out/gzip_bench.out"
fi
if wants ratio; then
    export DEVICE=$GPU_DEVICE RUNS="batch batch_rerun batch_serial batch_write2 batch_write3 batch_wt8 batch_wt16 batch_threads12 batch_prefetch2 batch_nii" LOOPS=0
    step ratio 90 bash "$here/cohort_bench.sh" "$voxlabel" "$work/ratio" "$phantoms" --no-peers
    cp "$work/ratio/cohort_bench.md" "$out/ratio.md" 2> /dev/null && cat "$out/ratio.md"
    step read_alone 30 "$bin/cohort_read_bench" "$work/ratio/root"
    unset RUNS LOOPS
fi
if wants bench; then
    # The peers: dcm2niix with its two libraries, and cc3d and nibabel installed from their wheels for python3.
    peers=${PEERS:-$here/../.device/peers} peer_flag=--no-peers
    if [ -x "$peers/bin/dcm2niix" ] && ls "$peers"/wheels/*.whl > /dev/null 2>&1 &&
        python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/site" "$peers"/wheels/*.whl; then
        peers=$(realpath "$peers")
        mkdir -p "$work/peer-bin"
        printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' "$peers/lib" \
            "$peers/bin/dcm2niix" > "$work/peer-bin/dcm2niix"
        printf '#!/bin/sh\nPYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} exec python3 "$@"\n' "$work/site" > "$work/peer-python"
        chmod +x "$work/peer-bin/dcm2niix" "$work/peer-python"
        export PATH=$work/peer-bin:$PATH BENCH_PYTHON=$work/peer-python PEER_SECONDS=${PEER_SECONDS:-45}
        peer_flag=
        echo "peers: $peers" | tee -a "$log"
    else
        echo "peers: none at $peers (scripts/cohort-peers-pack makes them): the bench runs --no-peers" | tee -a "$log"
    fi
    export DEVICE=$GPU_DEVICE
    step bench 170 bash "$here/cohort_bench.sh" "$voxlabel" "$work/bench" "$phantoms" $peer_flag
    cp "$work/bench/cohort_bench.md" "$out/" 2> /dev/null && cat "$out/cohort_bench.md"
fi
rm -rf "$work"
exit $status
