#!/usr/bin/env bash
# The Python package on the GPU machine (issue 18): CuPy and PyTorch arrays labelled on their device equal
# the CPU (tests/python_gpu.py), compute-sanitizer memcheck and racecheck on a quick run of that test, the
# CuPy bench against cupyx and bkeccl (bench/python_gpu_bench.py), and voxlabel.dask on CuPy chunks
# (tests/python_dask_gpu.py). Uses the checkout's python/ package and the packaged libvoxlabel.so
# (scripts/device-package puts it in lib/ beside bin/); the device's python3 brings numpy, CuPy and PyTorch.
# The device has no internet: bkeccl, dask and dask's pure dependencies come as wheels in the checkout's
# gitignored .whl/ (how to fill it: docs/python.md, Benchmarks; a device call must carry it), installed here
# with --no-deps into a temporary folder put last on PYTHONPATH, only those the device's python lacks; without
# .whl/ the bkeccl column stays empty and the Dask step is skipped, with a message. The step limits add up
# to 245 s, 155 s without the Dask step (90 s).
# usage: bench/python_device_run.sh BIN_DIR OUT_DIR
set -uo pipefail
bin=$(cd "$1" && pwd) out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
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
export VOXLABEL_LIBRARY=$library PYTHONPATH=$root/python PYTHONDONTWRITEBYTECODE=1
export LD_LIBRARY_PATH=$(dirname "$library")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log=$out/python.log step_dir=$out step_show="FAIL|ERROR SUMMARY|SKIP|passed|device:|MISMATCH|^\|" status=0
. "$here/device_step.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
python3 -c 'import voxlabel, cupy; print("voxlabel", voxlabel.__version__, voxlabel.library_path, "cupy", cupy.__version__)' |
    tee -a "$log"

# The peers from .whl/: the distribution of every module the device's python cannot import is installed from
# its wheel, without dependencies and without an index, into $peers, which goes last on PYTHONPATH; as only
# missing modules are installed there, nothing of the device's own is shadowed.
peers=$(mktemp -d)
trap 'rm -rf "$peers"' EXIT
install_peers() {
    local wheels=$root/.whl module dist missing=() file tag
    if ! ls "$wheels"/*.whl > /dev/null 2>&1; then
        echo "python_device_run: no wheels in $wheels (fill it as docs/python.md, Benchmarks, says):" \
             "no bkeccl column, no Dask step" | tee -a "$log"
        return
    fi
    # module:distribution (the wheel file's name starts with the distribution)
    local pairs="bkeccl:bkeccl dask:dask toolz:toolz cloudpickle:cloudpickle partd:partd locket:locket
                 fsspec:fsspec packaging:packaging click:click yaml:pyyaml"
    # dask imports importlib_metadata (which needs zipp and lazy_importer) on pythons before 3.12
    python3 -c 'import importlib.util, sys; sys.exit(sys.version_info >= (3, 12) or bool(importlib.util.find_spec("dask")))' &&
        pairs="$pairs importlib_metadata:importlib_metadata zipp:zipp lazy_importer:lazy_importer"
    for pair in $pairs; do
        module=${pair%%:*} dist=${pair#*:}
        python3 -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$module') is not None)" &&
            missing+=("$dist")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "== peers: the device's python has them all" | tee -a "$log"
        return
    fi
    echo "== peers from .whl: ${missing[*]}" | tee -a "$log"
    if python3 -m pip --version > /dev/null 2>&1; then
        python3 -m pip install --quiet --no-index --no-deps --disable-pip-version-check \
            --find-links "$wheels" --target "$peers" "${missing[@]}" >> "$log" 2>&1 && return
        echo "python_device_run: pip install from $wheels failed (see python.log); unpacking instead" | tee -a "$log"
    fi
    # No pip (or it failed): a wheel is a zip of the installed files; take the pure one or this python's.
    tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
    for dist in "${missing[@]}"; do
        file=$(ls "$wheels/$dist"-*-py3-none-any.whl "$wheels/$dist"-*-py2.py3-none-any.whl \
                  "$wheels/$dist"-*-"$tag"-"$tag"-*.whl 2> /dev/null | head -n 1)
        if [ -n "$file" ]; then
            python3 -m zipfile -e "$file" "$peers" || echo "python_device_run: cannot unpack $file" | tee -a "$log"
        else
            echo "python_device_run: no wheel of $dist for $tag in $wheels" | tee -a "$log"
        fi
    done
}
install_peers
export PYTHONPATH=$PYTHONPATH:$peers
have_dask=0
python3 -c 'import dask.array' > /dev/null 2>&1 && have_dask=1

step python_gpu 35 python3 "$root/tests/python_gpu.py"
step python_gpu_memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 9 python3 "$root/tests/python_gpu.py" --quick
step python_gpu_racecheck 30 compute-sanitizer --tool racecheck --error-exitcode 9 python3 "$root/tests/python_gpu.py" --quick
step python_gpu_bench 50 python3 "$here/python_gpu_bench.py" 5
if [ "$have_dask" = 1 ]; then
    step python_dask_gpu 90 python3 "$root/tests/python_dask_gpu.py"
else
    echo "== python_dask_gpu: skipped, dask is not importable (neither on the device nor from .whl)" | tee -a "$log"
fi
echo "python device run: status $status"
exit $status
