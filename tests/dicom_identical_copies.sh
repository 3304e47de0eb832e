#!/bin/sh
# Issue 16 C17 (pydicom_ct_j2k): a directory whose two files are identical copies of one image (same
# SOPInstanceUID) is one image, read as a one-slice volume (exit 0), without a warning that its images share one position.
# usage: dicom_identical_copies.sh VOXLABEL WORK_DIR
set -u
VOXLABEL=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
"$VOXLABEL" phantom -o one --size 16x16x1 --quiet || exit 1
cp one/slice_0001.dcm one/copy_of_slice_0001.dcm
"$VOXLABEL" convert one one.nrrd 2>err.txt || { echo "FAIL: two copies of one image refused"; cat err.txt; exit 1; }
grep -q "16x16x1" err.txt || { echo "FAIL: not a 16x16x1 volume"; cat err.txt; exit 1; }
# The copy dropped, one image remains: no "all 2 images are at one position" warning (stop 24, noticed).
if grep -q "at one position" err.txt; then echo "FAIL: warns of one position after dropping a copy"; cat err.txt; exit 1; fi
echo "ok: $(tail -1 err.txt)"
