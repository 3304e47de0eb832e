#!/usr/bin/env bash
# Everything the forest stage needs on a GPU machine, in one call (each step under a hard limit, see below):
#   tests      forest_gpu (channels, same seed -> same forest on both backends, also streamed, probabilities
#              and class maps: all bit for bit the CPU's) and forest_sklearn_export.py --device gpu
#              (scikit-learn's predict_proba on the GPU within 1e-6)
#   sanitizer  compute-sanitizer memcheck, then racecheck, on forest_gpu --quick
#   profile    ncu on the training kernels of forest_bench 256x256x120 (10 trees, then 1): launches, time and DRAM
#              bytes per kernel and per tree (bench/forest_ncu_summary.py); not a default stage
#   kernels    ncu on the kernels of the first prediction of forest_bench 512x512x32 (one slab of whole planes, 100
#              trees): launches, time and DRAM bytes per kernel (bench/forest_ncu_summary.py); not a default stage
#   stalls     ncu sections (speed of light, occupancy, warp states) on the largest sigma's kernels and the tree walk
#              of forest_bench 512x512x32; not a default stage
#   bench      forest_bench 512x512x600, 61 features, 100 trees on the GPU (R5), peak device memory sampled by
#              nvidia-smi every 50 ms, the time to read the CT as a DICOM series (written by voxlabel, read back
#              by voxlabel's reader), beside scikit-learn on the same samples with all cores (bench/forest_peers.py)
# usage: bench/forest_device_run.sh BIN_DIR OUT_DIR [STAGE...]   (default: tests sanitizer bench)
#   BIN_DIR  the package's bin/ (forest_gpu, forest_tool, forest_bench); voxlabel in BIN_DIR/.. or BIN_DIR
# Logs go to OUT_DIR/forest.log; stdout carries the summaries.
set -uo pipefail
bin=$(cd "$1" && pwd) out=$2
shift 2
stages=${*:-tests sanitizer bench}
here=$(cd "$(dirname "$0")" && pwd)
voxlabel=$bin/../voxlabel
[ -x "$voxlabel" ] || voxlabel=$bin/voxlabel
# the package's shared libraries, when run outside bench/device_run.sh
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH=$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
log=$out/forest.log
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee -a "$log"

step_dir=$out step_show="FAIL|ERROR|error|passed|failed|voxlabel|scikit|cpu reference|peak|max |training data|start-up|model "
. "$here/device_step.sh"

for stage in $stages; do
    case $stage in
    tests)
        step forest_gpu 150 "$bin/forest_gpu"
        step forest_export_gpu 60 python3 "$here/../tests/forest_sklearn_export.py" "$voxlabel" "$bin/forest_tool" \
            "$out/export" gpu
        ;;
    sanitizer)
        step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/forest_gpu" --quick
        step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/forest_gpu" --quick
        ;;
    profile)
        # the training kernels only (the bench trains 10 trees, then 1)
        step ncu 200 ncu --clock-control none --csv --metrics \
            gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
            --kernel-name regex:"search_kernel|partition_kernel|entries_kernel|bootstrap_kernel|choose_kernel|transpose_kernel" \
            "$bin/forest_bench" 256 256 120 10 gpu 64 "$out/profile_samples"
        python3 "$here/forest_ncu_summary.py" "$out/ncu.out" 11 | tee -a "$log"
        rm -rf "$out"/profile_samples_*
        ;;
    kernels)
        step ncu_predict 200 ncu --clock-control none --csv --metrics \
            gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
            --launch-count 400 --kernel-name regex:"pass_kernel|combine_kernel|eigen_kernel|predict_kernel|offset_kernel|widen_kernel" \
            "$bin/forest_bench" 512 512 32 100 gpu 32 "$out/kernel_samples"
        python3 "$here/forest_ncu_summary.py" "$out/ncu_predict.out" 100 widen_kernel | grep -v "^training kernels" |
            tee -a "$log"
        rm -rf "$out"/kernel_samples_*
        ;;
    stalls)
        # ncu sections on the kernels of the largest sigma and the tree walk (one 512x512x32 slab, launches 145 to
        # 173 of the first prediction): speed of light, occupancy, launch, warp states and the rules' advice
        step ncu_stalls 200 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --launch-skip 145 --launch-count 29 \
            --kernel-name regex:"pass_kernel|combine_kernel|eigen_kernel|predict_kernel|offset_kernel|widen_kernel" \
            "$bin/forest_bench" 512 512 32 100 gpu 32 "$out/stall_samples"
        grep -E "^  [a-z_<>0-9]+.*\(|Duration|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput|Memory Throughput|Warp Cycles Per Issued|[Ss]tall|Block Limit|Theoretical Occupancy" \
            "$out/ncu_stalls.out" | cut -c1-240 | tee -a "$log"
        rm -rf "$out"/stall_samples_*
        ;;
    bench)
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 > "$out/memory.csv" &
        sampler=$!
        before=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1)
        step bench 240 "$bin/forest_bench" 512 512 600 100 gpu 64 "$out/samples"
        kill "$sampler" 2>/dev/null
        wait "$sampler" 2>/dev/null
        peak=$(sort -n "$out/memory.csv" | tail -n 1)
        echo "peak device memory: ${peak:-?} MiB used on the GPU during the bench (${before:-?} MiB before it)" |
            tee -a "$log"
        step peers 200 python3 "$here/forest_peers.py" "$out/samples" $((512 * 512 * 600)) 100
        rm -rf "$out"/samples_*
        ;;
    esac
done
exit $status
