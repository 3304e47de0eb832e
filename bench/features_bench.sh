#!/usr/bin/env bash
# The feature stage's CPU bench (issue 21, item 5): one 512x512 slice and a 300-slice volume, voxlabel SIFT with
# 1 and all threads against OpenCV's SIFT with the same threads, on the same phantom slices.
# usage: bench/features_bench.sh [BUILD_DIR] [SLICES]   (PYTHON=... picks the interpreter with cv2)
set -euo pipefail
build=${1:-build}
slices=${2:-300}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/bench-data/features
mkdir -p "$work"
python=${PYTHON:-/usr/bin/python3}
all=$(nproc)
"$build/bench/features_bench" 512 512 "$slices" cpu 1 1 "$work/slices.u8" >/dev/null
for threads in 1 "$all"; do
    "$build/bench/features_bench" 512 512 1 cpu "$threads" 5
    "$build/bench/features_bench" 512 512 "$slices" cpu "$threads" 1
    "$python" "$here/features_peers.py" "$work/slices.u8" 512 512 "$slices" "$threads" 5
done
