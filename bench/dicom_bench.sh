#!/usr/bin/env bash
# voxlabel convert vs dcm2niix, same machine, same run: wall time (best of REPEAT) to turn a DICOM series
# into .nii.gz and .nii, on the real series of ../shared/test-data/dicom and a 500-slice phantom.
# usage: bench/dicom_bench.sh [BUILD_DIR]     (REPEAT=3 by default; needs dcm2niix)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cli=$build/voxlabel
repeat=${REPEAT:-3}
data=$root/../shared/test-data/dicom
command -v dcm2niix >/dev/null || { echo "dicom_bench: dcm2niix is not installed"; exit 1; }
[ -x "$cli" ] || { echo "dicom_bench: $cli not built"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cli" phantom -o "$work/phantom500" --size 512x512x500 --quiet
series=("phantom 512x512x500:$work/phantom500")
[ -d "$data" ] && series+=("GE tilt 512x512x28:$data/dcm_qa_ct_ge_tilt" "Philips tilt 512x512x54:$data/dcm_qa_ct_philips_tilt"
                           "Philips study (5 groups):$data/dcm_qa_ct_philips_study")

best() { # best wall seconds of $repeat runs of the command
    local best_time=
    for _ in $(seq "$repeat"); do
        rm -rf "$work/out" && mkdir -p "$work/out"
        local start end
        start=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; echo "nan"; return; }
        end=$(date +%s.%N)
        best_time=$(echo "$start $end ${best_time:-1e9}" | awk '{t=$2-$1; print (t<$3)?t:$3}')
    done
    echo "$best_time"
}

echo "dicom_bench: $(nproc) cores, $(dcm2niix -v 2>&1 | grep -o 'v[0-9.]*' | head -1 || true) dcm2niix, best of $repeat"
printf "%-28s %-7s %12s %12s %8s\n" series output voxlabel_s dcm2niix_s ratio
for entry in "${series[@]}"; do
    name=${entry%%:*} dir=${entry#*:}
    for ext in nii.gz nii; do
        z=$([ "$ext" = nii.gz ] && echo y || echo n)
        ours=$(best "$cli" convert "$dir" "$work/out/v.$ext" --on-irregular warn --quiet)
        theirs=$(best dcm2niix -z "$z" -b n -o "$work/out" -f d "$dir")
        printf "%-28s %-7s %12.3f %12.3f %8.2f\n" "$name" "$ext" "$ours" "$theirs" \
            "$(echo "$ours $theirs" | awk '{print $1/$2}')"
    done
done
