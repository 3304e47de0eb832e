#!/usr/bin/env bash
# Builds the DICOM fuzzer with clang and runs it for FUZZ_SECONDS (default 300), seeded with the shared
# DICOM test files (../shared/test-data/dicom) and a small phantom series. Findings land in BUILD/findings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-300}
command -v clang++ >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 1; }
CC=clang CXX=clang++ cmake -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
seeds="$build/seeds"
mkdir -p "$seeds" "$build/corpus" "$build/findings"
shared="$root/../shared/test-data/dicom"
if [ -d "$shared" ]; then
    find "$shared" -type f -size -2M ! -name '*.txt' ! -name 'LICENSE*' | while read -r f; do
        cp "$f" "$seeds/$(echo "$f" | md5sum | cut -c1-16)"
    done
else
    echo "fuzz: no shared test data at $shared; seeding with the phantom only"
fi
if [ -x "$root/build/voxlabel" ]; then
    "$root/build/voxlabel" phantom -o "$build/phantom" --size 24x16x2 --force --quiet && cp "$build/phantom"/* "$seeds/"
fi
"$build/dicom_fuzz" -max_total_time="$seconds" -max_len=1048576 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$build/findings/" "$build/corpus" "$seeds"
