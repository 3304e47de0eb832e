#!/usr/bin/env bash
# Everything the feature stage needs on a GPU machine, in one call (issue 21): GPU == CPU (F1 pyramid levels,
# keypoints, descriptors, matches), compute-sanitizer memcheck and racecheck, and the bench: voxlabel SIFT on
# the GPU per 512x512 slice and per 300-slice volume (F6), voxlabel on the CPU, OpenCV SIFT on all cores with
# the ratio of its time to ours on the GPU (the 20x target), kornia's SIFT on the same GPU (PyTorch) when its
# wheels are carried in .whl/ (otherwise that step is left out, noted in the log only), and a per-kernel
# profile (Nsight Compute: time, launches and DRAM bytes of each kernel; Nsight Systems, where present: the CUDA API
# and copy summaries of a 300-slice volume).
# usage: bench/features_device_run.sh BIN_DIR OUT_DIR [STAGE...]
#   BIN_DIR  features_gpu and features_bench (linked --as-needed: no DCMTK needed on the device)
#   STAGE    tests sanitizer bench profile (default: all four; under 3 minutes on an H200 host)
# Logs go to OUT_DIR/features.log; stdout carries the summaries.
set -uo pipefail
bin=$1 out=$2
shift 2
stages=${*:-tests sanitizer bench profile}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mkdir -p "$out"
log=$out/features.log
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee -a "$log"

step_dir=$out step_show="FAIL|ERROR|error|F1|keypoints|matching|voxlabel SIFT|OpenCV|kornia"
. "$here/device_step.sh"

# at_least VERSION MINIMUM
at_least() { [ "$(printf '%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }

# install_kornia: kornia and kornia_rs from the carried wheels into a temporary folder on PYTHONPATH (the device
# has no network). kornia 0.9 wants PyTorch >= 2.5.1 and Python >= 3.11; otherwise kornia 0.8 (which also needs
# packaging); pip picks the kornia_rs wheel of the device's python. Returns 1, with a line, when skipped.
install_kornia() {
    if ! ls "$root"/.whl/kornia-*.whl > /dev/null 2>&1; then
        echo "kornia: no wheels in $root/.whl; kornia step left out" >> "$log"
        return 1
    fi
    local versions spec=kornia
    versions=$(timeout 60 python3 -c \
        'import sys, torch; print(torch.__version__.split("+")[0], "%d.%d" % sys.version_info[:2])' 2> /dev/null) || {
        echo "kornia: python3 cannot import torch; kornia step skipped" | tee -a "$log"
        return 1
    }
    set -- $versions
    at_least "$1" 2.5.1 && at_least "$2" 3.11 || spec='kornia<0.9'
    kornia_site=$(mktemp -d)
    step kornia_install 60 python3 -m pip install --no-index --no-deps --find-links "$root/.whl" \
        --target "$kornia_site" "$spec" kornia_rs packaging
    [ -d "$kornia_site/kornia" ]
}

cores=$(nproc)
for stage in $stages; do
    case $stage in
    tests) step features_gpu 120 "$bin/features_gpu" ;;
    sanitizer)
        step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/features_gpu" quick
        step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/features_gpu" quick
        ;;
    bench)
        step gpu_slice 60 "$bin/features_bench" 512 512 1 gpu 0 10
        step gpu_volume 120 "$bin/features_bench" 512 512 300 gpu 0 3 "$out/slices.u8"
        step cpu_volume 150 "$bin/features_bench" 512 512 300 cpu "$cores" 1
        step opencv 150 python3 "$here/features_peers.py" "$out/slices.u8" 512 512 300 "$cores" 5
        if install_kornia; then
            PYTHONPATH=$kornia_site${PYTHONPATH:+:$PYTHONPATH} \
                step kornia 60 python3 "$here/features_kornia.py" "$out/slices.u8" 512 512 300 --seconds 8
        fi
        [ -z "${kornia_site:-}" ] || rm -rf "$kornia_site"
        rm -f "$out/slices.u8"
        # ms/slice of ours on the GPU (300-slice volume) and of OpenCV on all cores, and their ratio.
        ours=$(sed -n 's/.*= \([0-9.]*\) ms\/slice.*/\1/p' "$out/gpu_volume.out" | tail -n 1)
        opencv=$(sed -n 's/.*= \([0-9.]*\) ms\/slice.*/\1/p' "$out/opencv.out" | tail -n 1)
        if [ -n "$ours" ] && [ -n "$opencv" ]; then
            awk -v a="$opencv" -v b="$ours" -v c="$cores" 'BEGIN {
                printf "ratio: OpenCV on %d cores %.3f ms/slice / voxlabel GPU %.3f ms/slice = %.1fx (target >= 20x)\n",
                       c, a, b, a / b }' | tee -a "$log"
        fi
        echo "published: CudaSift 1280x960 0.7 ms, 1920x1080 1.0 ms (GTX 1080 Ti); Kumar et al. full SIFT < 25 ms" \
             "for high-resolution images (Tesla C2075)" | tee -a "$log"
        ;;
    profile)
        # Kernel times of a 32-slice volume (one batch) run twice (warm-up and one timed run).
        step ncu 90 ncu --clock-control none --csv --metrics \
            gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum "$bin/features_bench" 512 512 32 gpu 0 1
        python3 "$here/features_ncu_summary.py" "$out/ncu.out" 64 | tee -a "$log"
        # Where a 300-slice volume's wall time goes besides kernels (allocations, copies, waits), when the
        # machine has Nsight Systems: its CUDA API and memory-copy summaries.
        if command -v nsys > /dev/null; then
            step nsys 90 nsys profile --force-overwrite true -o "$out/features_timeline" --stats=true \
                "$bin/features_bench" 512 512 300 gpu 0 1
            awk '/cuda_api_sum|cuda_gpu_mem_time_sum|cuda_gpu_kern_sum/ { show = 1; shown = 0 }
                 show && /^ *$/ && shown > 3 { show = 0 }
                 show && shown < 18 { print; shown++ }' "$out/nsys.out" | cut -c1-160 | tee -a "$log"
            rm -f "$out"/features_timeline.*
        else
            echo "nsys: not on this machine; timeline left out" | tee -a "$log"
        fi
        ;;
    esac
done
exit $status
