#!/bin/sh
# Issue 16 C17: `seg L.mat CT_DIR` — a .mat has no geometry; on the CT's grid it takes the CT's (a note says so) and
# gives the same SEG pixels as the NIfTI labels; on another grid it is refused (exit 3) naming the missing geometry,
# not "labels were not made from this series".
# usage: cli_seg_mat.sh VOXLABEL PYTHON WORK_DIR
set -u
VOXLABEL=$1
PYTHON=$2
WORK=$3
if ! "$PYTHON" -c "import pydicom" 2>/dev/null; then
    echo "skipped: $PYTHON lacks pydicom (Debian python3-pydicom)"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
"$VOXLABEL" phantom -o ct --size 32x24x8 --quiet || exit 1
"$VOXLABEL" phantom -o other --size 16x16x6 --quiet || exit 1
"$VOXLABEL" label ct --preset bone --largest 3 --device cpu -o out --quiet || exit 1
"$VOXLABEL" convert out/labels.nii.gz l.mat --quiet || exit 1
"$VOXLABEL" seg out/labels.nii.gz ct -o from_nii.dcm --quiet || fail "seg from NIfTI"
"$VOXLABEL" seg l.mat ct -o from_mat.dcm 2>err.txt || { fail "seg from .mat on the CT's grid"; cat err.txt; }
grep -q "a .mat has no geometry; taking that of ct" err.txt || { fail "no note on the geometry taken"; cat err.txt; }
"$PYTHON" - <<'PY' || fail "SEG pixels differ"
import pydicom, sys
a, b = pydicom.dcmread('from_mat.dcm'), pydicom.dcmread('from_nii.dcm')
sys.exit(0 if a.PixelData == b.PixelData and len(a.SegmentSequence) == len(b.SegmentSequence) else 1)
PY
"$VOXLABEL" seg l.mat other -o wrong.dcm 2>err.txt
rc=$?
[ $rc -eq 3 ] && grep -q "a .mat has no geometry" err.txt && [ "$(grep -c . err.txt)" -eq 1 ] && [ ! -e wrong.dcm ] \
    || { fail "seg .mat on another grid: exit $rc"; cat err.txt; }
exit $((failures > 0))
