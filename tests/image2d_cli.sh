#!/bin/sh
# CLI contract of voxlabel color / shapes / preview: exit codes, outputs, colour DICOM input (skips that part
# when ../shared/test-data is absent). usage: image2d_cli.sh VOXLABEL PYTHON WORKDIR DATA_DIR
set -u
voxlabel=$1 python=$2 work=$3 data=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
expect() { # expect CODE command...
    want=$1; shift
    "$@" >out.txt 2>err.txt; got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: exit $got (want $want): $*"; cat err.txt; failures=$((failures + 1))
    fi
}
"$python" -c "
import cv2, numpy as np
img = np.full((120, 160, 3), (40, 120, 40), np.uint8)
cv2.circle(img, (40, 40), 20, (0, 0, 255), -1)
cv2.rectangle(img, (90, 60), (140, 100), (0, 0, 230), -1)
cv2.imwrite('frame.png', img); cv2.imwrite('frame.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, 95])
ref = np.zeros((64, 64), np.uint8); cv2.circle(ref, (32, 32), 20, 255, -1); cv2.imwrite('disk.png', ref)
" || exit 1

expect 0 "$voxlabel" color --help
expect 2 "$voxlabel" color frame.png --bogus -o c
expect 2 "$voxlabel" color frame.png --mode opencv --hue 200 -o c
expect 2 "$voxlabel" color frame.png --mode thesis --hue-range 1:2 -o c
expect 2 "$voxlabel" color frame.png
expect 3 "$voxlabel" color missing.png -o c
expect 0 "$voxlabel" color frame.png --hue 0 --hue-tol 20 --morph thesis --conn 4 --shapes --device cpu -o c
grep -q "2 component" out.txt || { echo "FAIL: expected 2 components: $(cat out.txt)"; failures=$((failures + 1)); }
for f in mask.png labels.png overlay.png shapes.csv; do [ -s "c/$f" ] || { echo "FAIL: c/$f missing"; failures=$((failures + 1)); }; done
expect 4 "$voxlabel" color frame.png -o c
expect 0 "$voxlabel" color frame.jpg --mode opencv-full --hue 0 --hue-tol 15 --device cpu --force -o c
grep -q "2 component" out.txt || { echo "FAIL: JPEG: expected 2 components: $(cat out.txt)"; failures=$((failures + 1)); }

expect 0 "$voxlabel" shapes --help
expect 2 "$voxlabel" shapes c/mask.png -o s.csv --conn 6
expect 0 "$voxlabel" shapes c/mask.png -o s.csv --match-ref disk.png --device cpu
"$python" -c "
import csv, sys
rows = list(csv.DictReader(open('s.csv')))
circle = [r for r in rows if int(r['bbox_width']) < 50][0]
square = [r for r in rows if int(r['bbox_width']) >= 50][0]
# the disk reference matches the red disk far better than the square
sys.exit(0 if len(rows) == 2 and float(circle['jm_reference']) < float(square['jm_reference']) else 1)
" || { echo "FAIL: shapes.csv / jm_reference"; failures=$((failures + 1)); }
expect 2 "$voxlabel" shapes c/mask.png -o s2.csv --match-ref 0:9

expect 0 "$voxlabel" preview --help
expect 0 "$voxlabel" phantom -o ct --size 64x64x24 --quiet
expect 0 "$voxlabel" label ct --preset bone --device cpu -o lab --quiet
expect 0 "$voxlabel" preview ct --labels lab/labels.nii.gz --montage 4 -o montage.png
expect 0 "$voxlabel" preview ct --labels lab/labels.nii.gz --orthogonal --outline --window bone -o ortho.png
expect 0 "$voxlabel" preview ct --slice 3 --window -600:1500 -o slice.png
expect 2 "$voxlabel" preview ct --slice 3 --window nonsense -o x.png
expect 2 "$voxlabel" preview ct --slice 999 -o x.png
expect 4 "$voxlabel" preview ct --slice 3 -o slice.png
"$python" -c "
import cv2, sys
m, o, s = (cv2.imread(p) for p in ('montage.png', 'ortho.png', 'slice.png'))
sys.exit(0 if m.shape[2] == 3 and o.shape[1] > o.shape[0] and s.shape[:2] == (64, 64) else 1)
" || { echo "FAIL: preview PNG sizes"; failures=$((failures + 1)); }

if [ -f "$data/dicom/color/US1_UNCR.dcm" ]; then
    expect 0 "$voxlabel" color "$data/dicom/color/US1_UNCR.dcm" --mode opencv-full --hue-range 245:45 --smin 120 \
        --vmin 90 --device cpu -o us
    expect 0 "$voxlabel" color "$data/dicom/color/SC_rgb_2frame.dcm" --frame 1 --device cpu -o sc2
    expect 2 "$voxlabel" color "$data/dicom/color/SC_rgb_2frame.dcm" --frame 5 --device cpu -o sc5
else
    echo "note: $data/dicom/color absent, colour DICOM part skipped"
fi
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
