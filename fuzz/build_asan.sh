#!/usr/bin/env bash
# Builds the voxlabel CLI with AddressSanitizer and UndefinedBehaviorSanitizer (gcc, CUDA off: the device code
# cannot run here and the readers are all host code) into BUILD (default build-asan) for fuzz/cli_campaign.py.
# usage: fuzz/build_asan.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-asan}
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOXLABEL_CUDA=OFF \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
      -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
nice cmake --build "$build" --target voxlabel_cli -j "${JOBS:-2}"
echo "fuzz: $build/voxlabel built with ASan+UBSan"
