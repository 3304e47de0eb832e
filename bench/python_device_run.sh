#!/usr/bin/env bash
# The Python package on the GPU machine (issue 18): CuPy and PyTorch arrays labelled on their device equal
# the CPU (tests/python_gpu.py), compute-sanitizer memcheck and racecheck on a quick run of that test, and
# the CuPy bench (bench/python_gpu_bench.py). Uses the checkout's python/ package and the packaged
# libvoxlabel.so (scripts/device-package puts it in lib/ beside bin/); the device's python3 brings numpy,
# CuPy and PyTorch. At most about 3 minutes.
# usage: bench/python_device_run.sh BIN_DIR OUT_DIR
set -uo pipefail
bin=$(cd "$1" && pwd) out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
library=
for candidate in "$bin/../lib/libvoxlabel.so.0" "$bin/libvoxlabel.so.0" "$bin/libvoxlabel.so"; do
    [ -f "$candidate" ] && { library=$(cd "$(dirname "$candidate")" && pwd)/$(basename "$candidate"); break; }
done
if [ -z "$library" ]; then
    echo "python_device_run: no libvoxlabel.so beside $bin (scripts/device-package copies it into lib/)" >&2
    exit 1
fi
export VOXLABEL_LIBRARY=$library PYTHONPATH=$here/../python PYTHONDONTWRITEBYTECODE=1
export LD_LIBRARY_PATH=$(dirname "$library")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log=$out/python.log step_dir=$out step_show="FAIL|ERROR SUMMARY|SKIP|passed|device:|MISMATCH|^\|" status=0
. "$here/device_step.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
python3 -c 'import voxlabel, cupy; print("voxlabel", voxlabel.__version__, voxlabel.library_path, "cupy", cupy.__version__)' |
    tee -a "$log"

step python_gpu 45 python3 "$here/../tests/python_gpu.py"
step python_gpu_memcheck 50 compute-sanitizer --tool memcheck --error-exitcode 9 python3 "$here/../tests/python_gpu.py" --quick
step python_gpu_racecheck 40 compute-sanitizer --tool racecheck --error-exitcode 9 python3 "$here/../tests/python_gpu.py" --quick
step python_gpu_bench 45 python3 "$here/python_gpu_bench.py" 10
echo "python device run: status $status"
exit $status
