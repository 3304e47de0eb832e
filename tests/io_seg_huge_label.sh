#!/bin/sh
# Issue 16 A4: seg on labels whose largest value is 4294967295 (the u32 maximum) ends, and writes one segment per
# label present (7 and 4294967295), not one per value up to the maximum.
# usage: io_seg_huge_label.sh VOXLABEL PYTHON WORK_DIR
set -u
VOXLABEL=$1
PYTHON=$2
WORK=$3
if ! "$PYTHON" -c "import pydicom" 2>/dev/null; then
    echo "skipped: $PYTHON lacks pydicom (Debian python3-pydicom)"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
"$VOXLABEL" phantom -o ct --size 16x16x6 --quiet || { echo "FAIL: phantom"; exit 1; }
"$VOXLABEL" label ct --preset bone --largest 2 --device cpu -o out --quiet || { echo "FAIL: label"; exit 1; }
"$VOXLABEL" convert out/labels.nii.gz l.nrrd --quiet || { echo "FAIL: convert"; exit 1; }
# Same grid and geometry as the CT, u32 raw data holding two labels: 7 and 2^32-1.
"$PYTHON" - <<'PY' || { echo "FAIL: making big.nrrd"; exit 1; }
import struct
d = open('l.nrrd', 'rb').read(); i = d.index(b'\n\n'); h = d[:i + 2].decode()
h = h.replace('type: uint8', 'type: uint32').replace('encoding: gzip', 'encoding: raw')
v = [0] * (16 * 16 * 6); v[5 + 16 * (5 + 16 * 2)] = 4294967295; v[9 + 16 * (9 + 16 * 3)] = 7
open('big.nrrd', 'wb').write(h.encode() + struct.pack('<%dI' % len(v), *v))
PY
# The timeout only stops a run that would never end (the old loop over every value up to the maximum).
timeout 120 "$VOXLABEL" seg big.nrrd ct -o seg.dcm --quiet
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: seg exit $rc"; exit 1; }
"$PYTHON" - <<'PY' || exit 1
import pydicom, sys
d = pydicom.dcmread('seg.dcm')
labels = [s.SegmentLabel for s in d.SegmentSequence]
if labels != ['component 7', 'component 4294967295'] or int(d.NumberOfFrames) != 2:
    print('FAIL: segments', labels, d.NumberOfFrames); sys.exit(1)
print('ok: two segments,', labels)
PY
