#!/bin/sh
# Issue 16 C17: the DICOM scan follows symbolic links to directories (a series linked into a study folder), and a
# link back up the tree is no loop: the 4-slice series is read once, as 16x16x4.
# usage: dicom_scan_symlinks.sh VOXLABEL WORK_DIR
set -u
VOXLABEL=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK/study" && cd "$WORK" || exit 1
"$VOXLABEL" phantom -o real --size 16x16x4 --quiet || exit 1
ln -s ../real study/series1
ln -s .. study/loop
"$VOXLABEL" convert study out.nrrd 2>err.txt || { echo "FAIL: linked series not found"; cat err.txt; exit 1; }
grep -q "16x16x4" err.txt || { echo "FAIL: want 16x16x4"; cat err.txt; exit 1; }
if grep -q "identical copies" err.txt; then echo "FAIL: files read twice through the loop"; cat err.txt; exit 1; fi
echo "ok: $(tail -1 err.txt)"
