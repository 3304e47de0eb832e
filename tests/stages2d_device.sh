#!/usr/bin/env bash
# GPU checks and bench of the 2D stages on a machine with a GPU but without the project's Debian build
# dependencies (DCMTK, libmatio, libpng): builds only the pieces these programs need with gcc + nvcc.
#   tests/stages2d_device.sh build DIR   build into DIR (can run on a machine without a GPU)
#   tests/stages2d_device.sh run DIR     GPU tests (2^24 HSV, morphology GPU == reference), compute-sanitizer
#                                        memcheck + racecheck, bench (CPU, OpenCV if python3 has cv2, GPU)
set -uo pipefail
mode=$1 dir=$2
root=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}

build() {
    mkdir -p "$dir/obj" && cd "$dir/obj" || exit 1
    local flags="-I$root/include -I$root/src -I$root/cuda -I$root/bench -DVL_HAVE_CUDA=1"
    local c_sources="error volume label label_filter ccl_cpu ccl_runs atomic_file color_hsv morphology morphology_cpu
                     shape_label2d shape_measure shape_csv"
    for s in $c_sources; do echo "gcc -std=c11 -O2 -Wall -Wextra $flags -c $root/src/$s.c -o $s.o"; done > jobs.txt
    for s in "$root"/cuda/ccl_*.cu "$root"/cuda/gpu_device.cu "$root"/cuda/color.cu "$root"/cuda/morphology.cu; do
        echo "$cuda/bin/nvcc -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo $flags -c $s -o cu_$(basename "$s" .cu).o"
    done >> jobs.txt
    xargs -P "$(nproc)" -I{} sh -c '{}' < jobs.txt || exit 1
    ar rcs libstages2d.a ./*.o
    local libs="-L. -lstages2d -L$cuda/lib64 -lcudart_static -lpthread -ldl -lrt -lm -lstdc++"
    for t in stages2d_hsv_exhaustive stages2d_morph stages2d_tool; do
        gcc -std=c11 -O2 $flags "$root/tests/$t.c" $libs -o "../$t" || exit 1
    done
    gcc -std=c11 -O2 $flags "$root/bench/stages2d_bench.c" $libs -o ../stages2d_bench_cpu || exit 1
    "$cuda/bin/nvcc" -O3 -arch=sm_90 $flags "$root/bench/stages2d_bench.cu" $libs -o ../stages2d_bench_gpu || exit 1
    echo "built into $dir"
}

run() {
    cd "$dir" || exit 1
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    local failures=0
    # A binary built elsewhere may not load here: rebuild in place when it cannot start.
    ./stages2d_morph cpu quick >/dev/null 2>&1 || { echo "rebuilding here"; (build) || return 1; cd "$dir" || return 1; }
    echo "== hsv 2^24 on the GPU"; ./stages2d_hsv_exhaustive gpu || failures=$((failures + 1))
    echo "== morphology GPU"; ./stages2d_morph gpu || failures=$((failures + 1))
    local sanitizer="$cuda/bin/compute-sanitizer"
    command -v compute-sanitizer >/dev/null && sanitizer=compute-sanitizer
    # memcheck + racecheck on the morphology kernels (every element, 2D and 3D tiles) and the colour kernel.
    local s=(timeout 90 "$sanitizer" --error-exitcode 9)
    echo "== memcheck morph";  "${s[@]}" --tool memcheck --leak-check full ./stages2d_morph gpu quick | tail -2 || failures=$((failures + 1))
    echo "== racecheck morph"; "${s[@]}" --tool racecheck ./stages2d_morph gpu quick | tail -2 || failures=$((failures + 1))
    echo "== memcheck bench";  "${s[@]}" --tool memcheck ./stages2d_bench_gpu --slices 8 --repeats 1 | tail -4 || failures=$((failures + 1))
    echo "== racecheck bench"; "${s[@]}" --tool racecheck ./stages2d_bench_gpu --slices 8 --repeats 1 | tail -4 || failures=$((failures + 1))
    echo "== bench"
    mkdir -p data
    ./stages2d_bench_cpu --dump data --slices 400 --repeats 5
    python3 -c "import cv2" 2>/dev/null && python3 "$root/bench/stages2d_bench.py" data 5
    ./stages2d_bench_gpu --slices 400 --repeats 10 || failures=$((failures + 1))
    echo "device checks: $failures failure(s)"
    return "$failures"
}

case $mode in
build) build ;;
run) run ;;
*) echo "usage: $0 build|run DIR" >&2; exit 2 ;;
esac
