#!/bin/sh
# Octave round trip: Octave bwlabeln -> save -v7 -> voxlabel label on the same mask -> voxlabel compare.
#   identical (exit 0) in both axis conventions; a permuted labelling and the other convention give
#   "same partition" (exit 1) with the rule named; a one-voxel change gives "different" (exit 2) with its
#   coordinate; Octave's load of our .mat equals its bwlabeln (class double); Octave regionprops equals
#   our --matlab CSV columns through 'voxlabel compare' on the tables.
# usage: compare_octave_roundtrip.sh VOXLABEL WORK_DIR
set -u
VOXLABEL=$1
WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v octave-cli >/dev/null 2>&1; then
    echo "skipped: octave-cli is not installed (Debian packages octave, octave-image)"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
octave-cli --no-gui --quiet "$HERE/compare_octave_roundtrip.m" 2>octave.err || { cat octave.err; exit 1; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect EXIT PATTERN -- voxlabel compare arguments...
expect() {
    want=$1 pattern=$2
    shift 3
    "$VOXLABEL" compare "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "compare $*: exit $got, expected $want"; cat out.txt err.txt
    elif ! grep -qF -- "$pattern" out.txt; then
        fail "compare $*: output lacks '$pattern'"; cat out.txt
    fi
}

label() {
    "$VOXLABEL" label mask.raw --raw-dims 31,23,17 --raw-type u8 --threshold 1 --conn 6 --device cpu --quiet "$@" \
        || fail "voxlabel label $*"
}
label -o ours_matlab
label --order matlab-xy -o ours_xy
label --format mat --matlab -o ours_mat
label --format nrrd -o ours_nrrd
label --format raw -o ours_raw

expect 0 "verdict: identical" -- ours_matlab/labels.nii.gz L.mat
expect 0 "verdict: identical" -- ours_mat/labels.mat L.mat
expect 0 "verdict: identical" -- ours_nrrd/labels.nrrd L.mat
# A raw file takes its dimensions from the other input and its type from its size.
expect 0 "verdict: identical" -- ours_raw/labels.raw L.mat
expect 0 "verdict: identical" -- ours_nrrd/labels.nrrd ours_raw/labels.raw
expect 0 "verdict: identical" -- ours_xy/labels.nii.gz Lxy.mat --order matlab-xy
expect 1 "rule: column-major (matlab) vs raster (matlab-xy) order" -- ours_matlab/labels.nii.gz Lxy.mat --order matlab-xy
expect 1 "arbitrary permutation" -- ours_matlab/labels.nii.gz Lperm.mat
expect 2 "verdict: different" -- ours_matlab/labels.nii.gz Lone.mat
expect 2 "$(cat one_voxel.txt)" -- ours_matlab/labels.nii.gz Lone.mat
expect 2 "background on one side only: 1" -- ours_matlab/labels.nii.gz Lone.mat
# A MATLAB array read in the wrong convention has x and y swapped: the comparison cannot run (input error 3).
"$VOXLABEL" compare ours_matlab/labels.nii.gz L.mat --order matlab-xy >out.txt 2>err.txt
[ $? -eq 3 ] && grep -q swapped err.txt && ! grep -q verdict out.txt || fail "swapped axes: expected exit 3 with a hint"
# Usage errors exit 2 without a verdict line.
"$VOXLABEL" compare ours_matlab/labels.nii.gz >out.txt 2>err.txt
[ $? -eq 2 ] && ! grep -q verdict out.txt || fail "usage error: expected exit 2 and no verdict line"

# Octave loads our .mat (written as bwlabeln's double) and finds its own bwlabeln result.
octave-cli --no-gui --quiet --eval \
    'a = load("ours_mat/labels.mat"); f = fieldnames(a); M = a.(f{1}); b = load("L.mat");
     if strcmp(class(M), "double") && isequal(M, b.L), disp("octave load: equal"); else, disp("octave load: DIFFERENT"); end' \
    >octave_load.txt 2>/dev/null
grep -q "octave load: equal" octave_load.txt || fail "Octave's load of our labels.mat differs from its bwlabeln"

# regionprops (Area, Centroid, BoundingBox) against our --matlab columns, by column name.
expect 0 "verdict: identical" -- ours_mat/components.csv regionprops.csv
expect 0 "Centroid_3" -- ours_mat/components.csv regionprops.csv
expect 0 "BoundingBox_6" -- ours_mat/components.csv regionprops.csv

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "Octave round trip: all checks passed"
