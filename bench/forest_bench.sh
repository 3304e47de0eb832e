#!/usr/bin/env bash
# The forest bench on this machine (CPU) beside scikit-learn: bench/forest_bench.sh BUILD [NX NY NZ [TREES]]
set -euo pipefail
build=$1
nx=${2:-128} ny=${3:-128} nz=${4:-48} trees=${5:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bench/forest_bench" "$nx" "$ny" "$nz" "$trees" cpu 64 "$work/s"
/usr/bin/python3 "$(dirname "$0")/forest_peers.py" "$work/s" $((nx * ny * nz)) "$trees"
