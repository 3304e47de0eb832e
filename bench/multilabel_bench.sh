#!/usr/bin/env bash
# CPU multilabel bench (issue 17): voxlabel's multilabel labelling and per-class clean-up against cc3d's
# multilabel mode, dust and a cc3d-based largest-per-class, on one thread, on the 512x512x400 class maps of
# bench/multilabel_maps.py (20 and 117 classes), conn 26, median of REPEATS (default 3). The GPU part runs on
# the GPU machine: bench/multilabel_device_run.sh.
# usage: bench/multilabel_bench.sh [BUILD_DIR]   (cc3d from the bench venv that bench/run makes)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/bench-data/multilabel
venv=$build/bench-venv
repeats=${REPEATS:-3}
if [ ! -x "$venv/bin/python" ]; then
    echo "bench: creating $venv with numpy, scipy, connected-components-3d (PyPI, bench only)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q numpy scipy connected-components-3d
fi
"$venv/bin/python" "$here/multilabel_maps.py" "$work" 20 117
echo "CPU multilabel, one thread, conn 26, 512x512x400 u8, median of $repeats: process CPU seconds (wall in brackets)"
echo "label = components of every class + matlab-order numbering + sizes + classes;"
echo "dust = label + islands under 100 voxels removed + cleaned map; largest = label + largest per class + cleaned map"
printf '%-7s %16s %16s %16s %16s %16s %16s %7s %9s\n' classes "vox label" "vox dust" "vox largest" "cc3d label" \
    "cc3d dust" "cc3d largest" N "cc3d/vox"
for k in 20 117; do
    map=$work/classes$k.raw
    ours=$("$build/bench/multilabel_bench" "$map" 512 512 400 u8 "$repeats" 1 100)
    peers=$(OMP_NUM_THREADS=1 "$venv/bin/python" "$here/multilabel_peers.py" cpu "$map" 512 512 400 26 "$repeats" 100)
    n_ours=$(awk '$1 == "label" {print $4}' <<<"$ours")
    n_cc3d=$(awk '$1 == "cc3d_label" {print $4}' <<<"$peers")
    if [ "$n_ours" != "$n_cc3d" ]; then
        echo "bench: component counts disagree on $k classes: voxlabel $n_ours cc3d $n_cc3d" >&2
        exit 1
    fi
    awk -v k="$k" -v n="$n_ours" '
        { wall[$1] = $2; cpu[$1] = $3 }
        function cell(name) { return sprintf("%7.3f (%6.3f)", cpu[name], wall[name]) }
        END {
            printf "%-7s %16s %16s %16s %16s %16s %16s %7s %9.2f\n", k, cell("label"), cell("dust"), cell("largest"),
                cell("cc3d_label"), cell("cc3d_dust"), cell("cc3d_largest"), n, cpu["cc3d_label"] / cpu["label"]
        }
    ' <(echo "$ours") <(echo "$peers")
done
