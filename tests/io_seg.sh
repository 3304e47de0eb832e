#!/bin/sh
# DICOM SEG: phantom CT -> voxlabel label -> voxlabel seg; dciodvfy (dicom3tools) reports no error, pydicom
# reads it back voxel for voxel; the segment limit, a foreign CT series and an existing output are refused.
# usage: io_seg.sh VOXLABEL PYTHON WORK_DIR
set -u
VOXLABEL=$1
PYTHON=$2
WORK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v dciodvfy >/dev/null 2>&1; then
    echo "skipped: dciodvfy is not installed (Debian package dicom3tools)"
    exit 77
fi
if ! "$PYTHON" -c "import nibabel, pydicom" 2>/dev/null; then
    echo "skipped: $PYTHON lacks nibabel or pydicom (Debian python3-nibabel, python3-pydicom)"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$VOXLABEL" phantom -o ct --size 96x80x24 --quiet || fail "phantom"
"$VOXLABEL" label ct --preset bone --largest 6 --device cpu -o out --quiet || fail "label"
"$VOXLABEL" seg out/labels.nii.gz ct -o seg.dcm --quiet || fail "seg"

dciodvfy seg.dcm >dciodvfy.txt 2>&1
if grep -q "^Error" dciodvfy.txt; then
    fail "dciodvfy reports errors"; cat dciodvfy.txt
fi
"$PYTHON" "$HERE/io_seg_readback.py" seg.dcm out/labels.nii.gz ct || fail "read back"

# More components than the limit: a usage-level refusal (exit 2) that names the way out.
"$VOXLABEL" seg out/labels.nii.gz ct -o limited.dcm --max-segments 3 >/dev/null 2>err.txt
[ $? -eq 2 ] && grep -q "exceed the SEG limit of 3" err.txt && grep -q -- "--largest" err.txt && [ ! -e limited.dcm ] \
    || { fail "segment limit"; cat err.txt; }
# CT of another size: no matching source images (input error 3), nothing written.
"$VOXLABEL" phantom -o other --size 64x64x10 --quiet || fail "phantom other"
"$VOXLABEL" seg out/labels.nii.gz other -o foreign.dcm >/dev/null 2>err.txt
[ $? -eq 3 ] && [ ! -e foreign.dcm ] || { fail "foreign series"; cat err.txt; }
# An existing output needs --force (exit 4).
"$VOXLABEL" seg out/labels.nii.gz ct -o seg.dcm >/dev/null 2>err.txt
[ $? -eq 4 ] || { fail "existing output"; cat err.txt; }
"$VOXLABEL" seg out/labels.nii.gz ct -o seg.dcm --force --quiet || fail "--force"
ls -a | grep -q '\.tmp\.' && fail "a temporary file was left behind"

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "DICOM SEG: all checks passed"
