#!/usr/bin/env bash
# The 2D stages bench (issue 6, thesis Tables 3.1-3.3): voxlabel CPU, OpenCV, and voxlabel GPU when built.
# usage: bench/stages2d_bench.sh [BUILD_DIR] [SLICES]   (PYTHON=... picks the interpreter with cv2)
set -euo pipefail
build=${1:-build}
slices=${2:-400}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/bench-data/stages2d
mkdir -p "$work"
python=${PYTHON:-python3}
"$build/bench/stages2d_bench_cpu" --dump "$work" --slices "$slices"
echo
"$python" "$here/stages2d_bench.py" "$work"
if [ -x "$build/bench/stages2d_bench_gpu" ]; then
    echo
    "$build/bench/stages2d_bench_gpu" --slices "$slices"
fi
echo
echo "thesis (Vicenzotti 2010, Core Duo E6400 vs GeForce 8800 GT), total of the three stages without I/O:"
echo "  640x480 95 / 30 ms, 800x600 176 / 45 ms, 1600x1200 713 / 160 ms (CPU / GPU)"
