#!/usr/bin/env bash
# Component statistics benchmark (issue 5 item 7): voxlabel's CPU statistics on the labels of the CT-like
# phantom (512x512x400, HU >= 64 at 26-connectivity: about 170 000 components)
# against ITK's label-map filters and scipy.ndimage, measured in the same run on the same volume.
# With a usable GPU it also reports the device time of the full statistics.
# usage: bench/stats_bench.sh [BUILD_DIR]   (needs the build's bench/stats_bench and, for ITK, tests/stats_itk_oracle)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/bench-data
repeats=${REPEATS:-3}
threads=${THREADS:-$(nproc)}
python=/usr/bin/python3
mkdir -p "$work"
echo "== voxlabel CPU ($threads threads), median of $repeats"
"$build/bench/stats_bench" 512 512 400 64 "$threads" "$repeats" cpu "$work/stats" | tee "$work/stats_cpu.txt"
echo "== scipy.ndimage (1 thread, one run each)"
"$python" "$here/stats_peers.py" "$work/stats_labels.u32" "$work/stats_hu.i16" 512 512 400 "$work/stats" | tee "$work/stats_scipy.txt"
if [ -x "$build/tests/stats_itk_oracle" ]; then
    echo "== ITK 5 LabelImageToShapeLabelMapFilter / LabelImageToStatisticsLabelMapFilter ($threads threads), median of $repeats"
    "$build/tests/stats_itk_oracle" "$work/stats_labels.nii" "$work/stats_hu.nii" --time "$repeats" | tee "$work/stats_itk.txt"
fi
if "$build/bench/stats_bench" 4 4 4 0 1 1 gpu > /dev/null 2>&1; then
    echo "== voxlabel GPU"
    "$build/bench/stats_bench" 512 512 400 64 0 5 gpu
fi
ours() { grep -F "$1" "$work/stats_cpu.txt" | sed -E 's/.*: ([0-9.]+) s.*/\1/'; }
peer() { awk -v k="$1" '$1 == k {print $2}' "$work"/stats_scipy.txt "$work"/stats_itk.txt 2>/dev/null; }
basic=$(ours "basic (count, bbox, centroid)"); full=$(ours "full with HU"); full_plain=$(ours "full without intensity")
echo "== ratios (peer time / voxlabel time)"
awk -v b="$basic" -v s="$(peer scipy_basic)" 'BEGIN { if (s) printf "scipy count+bbox+centroid / voxlabel basic: %.1fx\n", s / b }'
awk -v f="$full_plain" -v i="$(peer itk_shape_perimeter)" 'BEGIN { if (i) printf "ITK shape (perimeter on) / voxlabel full without HU: %.1fx\n", i / f }'
awk -v f="$full" -v i="$(peer itk_shape_statistics)" 'BEGIN { if (i) printf "ITK shape + statistics / voxlabel full with HU: %.1fx\n", i / f }'
