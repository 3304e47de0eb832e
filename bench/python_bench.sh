#!/usr/bin/env bash
# The Python package's benchmarks (issue 18) on this machine's CPU: call overhead against cc3d
# (bench/python_overhead.py), then Dask on a two-worker LocalCluster against dask-image's ndmeasure.label
# (bench/python_dask_bench.py). The peers come from PyPI into BUILD/python-bench-venv (benchmarks only; the
# package itself needs only Debian's python3-numpy). The GPU half is bench/python_device_run.sh.
# usage: bench/python_bench.sh [BUILD_DIR] [SIDE CHUNK [CONN MEMORY_LIMIT OPTION...]]   (Dask array SIDE^3 in
# CHUNK^3 chunks; default 128 32 26 6GB, small because dask-image's time grows steeply with the array on a small
# machine). Labels larger than the machine's memory, streamed to zarr and checked (python_dask_bench.py):
#   bench/python_bench.sh build 2048 256 26 4GB --store /tmp/labels.zarr --peer-minutes 10
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
side=${2:-128} chunk=${3:-32} conn=${4:-26} memory_limit=${5:-6GB}
shift $(($# < 5 ? $# : 5))
here=$(cd "$(dirname "$0")" && pwd)
venv=$build/python-bench-venv
if ! "$venv/bin/python" -c 'import cc3d, dask_image, distributed, psutil, zarr' 2>/dev/null; then
    echo "python_bench: creating $venv with cc3d, dask, distributed, dask-image, psutil, zarr (PyPI, bench only)"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check numpy scipy connected-components-3d "dask[array]" \
        distributed dask-image psutil "zarr<3"
fi
export PYTHONPATH=$here/../python VOXLABEL_LIBRARY=$build/libvoxlabel.so PYTHONDONTWRITEBYTECODE=1
echo "## call overhead: voxlabel.label vs cc3d.connected_components (median wall time)"
"$venv/bin/python" "$here/python_overhead.py" 5
echo
echo "## Dask: voxlabel.dask.label vs dask_image.ndmeasure.label"
"$venv/bin/python" "$here/python_dask_bench.py" "$side" "$chunk" "$conn" "$memory_limit" "$@"
