#!/usr/bin/env bash
# Issue-19 columns benchmark: voxlabel stats on the CT-like phantom's labels (512x512x400, HU >= 64,
# 26-connectivity: about 171 000 components) with each expensive column group and with every column,
# against ITK's shape label map with Perimeter and the oriented box on, with and without the Feret diameter
# (SimpleITK), and skimage regionprops (euler_number, solidity, feret_diameter_max), on the same labels.
# Wall and CPU seconds are both printed: on a shared machine the CPU seconds compare fairly.
# usage: bench/stats_shape_bench.sh [BUILD_DIR [LIMIT_SECONDS]]   (THREADS=N to pin the thread count)
set -euo pipefail
build=${1:-build}
limit=${2:-1800}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/bench-data
threads=${THREADS:-$(nproc)}
python=$build/oracle-venv/bin/python
[ -x "$python" ] || python=/usr/bin/python3
mkdir -p "$work"
[ -f "$work/stats_labels.u32" ] || "$build/bench/stats_bench" 512 512 400 64 1 0 cpu "$work/stats" > /dev/null
labels=(stats "$work/stats_labels.u32" --raw-dims 512,512,400 --raw-type u32 --intensity "$work/stats_hu.i16"
        --intensity-raw-type i16 --device cpu --threads "$threads" --force --quiet -o "$work/shape.csv")
echo "== voxlabel stats, $threads threads, wall seconds (including reading 630 MB of raw volumes)"
for columns in label,voxels label,euler_number label,hu_skewness,perimeter_on_border_mm2 label,surface_area_mm2 \
               label,convex_volume_mm3,feret_max_mm,feret_min_mm,obb_size_1_mm; do
    /usr/bin/time -f "voxlabel --columns $columns %e s (user %U s)" "$build/voxlabel" "${labels[@]}" --columns "$columns"
done
/usr/bin/time -f "voxlabel --stats full (every column) %e s (user %U s)" "$build/voxlabel" "${labels[@]}" --stats full
echo "== peers ($threads threads where they take it; stopped after $limit s)"
"$python" "$here/stats_shape_peers.py" "$work/stats_labels.u32" 512 512 400 "$threads" "$limit"
