#!/usr/bin/env bash
# The graph-cut and background bench (issue 23, G5) in one run: voxlabel's max-flow (BK on one core, and the
# GPU when there is one) against PyMaxflow on the same graphs, and MOG2 against OpenCV on all cores.
# usage: bench/graphcut_bench.sh [BUILD_DIR] [DEVICE cpu|both]   (PYTHON: interpreter with PyMaxflow and cv2,
#        default BUILD_DIR/oracle-venv/bin/python)
set -uo pipefail
build=${1:-build}
devices=${2:-cpu}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/bench-data/graphcut
mkdir -p "$work"
python=${PYTHON:-$build/oracle-venv/bin/python}
bench=$build/bench/graphcut_bench
graphs=()
for case in "512 512 1 4" "1024 1024 1 4" "512 512 1 8" "128 128 128 6" "256 256 256 6"; do
    set -- $case
    file=$work/graph-$1x$2x$3-c$4.bin
    "$bench" maxflow "$1" "$2" "$3" "$4" 3 "$devices" "$file"
    graphs+=("$file")
done
"$python" "$here/graphcut_peers.py" maxflow "${graphs[@]}"
rm -f "${graphs[@]}"
"$bench" mog2 512 512 500 cpu
[ "$devices" = both ] && "$bench" mog2 512 512 2000 gpu
"$python" "$here/graphcut_peers.py" mog2 512 512 500
