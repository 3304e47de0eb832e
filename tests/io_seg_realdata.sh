#!/bin/sh
# DICOM SEG on real CT series (shared test data): the 3-slice dcmqi CT and the Philips gantry-tilt series
# (sheared grid; SEG stores per-frame positions). dciodvfy reports no error; pydicom reads every voxel back.
# usage: io_seg_realdata.sh VOXLABEL PYTHON SHARED_DATA WORK_DIR
set -u
VOXLABEL=$1
PYTHON=$2
DATA=$3/dicom
WORK=$4
HERE=$(cd "$(dirname "$0")" && pwd)
for series in dcmqi_ct_3slice dcm_qa_ct_philips_tilt; do
    if [ ! -d "$DATA/$series" ]; then
        echo "skipped: $DATA/$series is absent (shared test data)"
        exit 77
    fi
done
if ! command -v dciodvfy >/dev/null 2>&1 || ! "$PYTHON" -c "import nibabel, pydicom" 2>/dev/null; then
    echo "skipped: needs dciodvfy (dicom3tools) and $PYTHON with nibabel and pydicom"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
failures=0
for series in dcmqi_ct_3slice dcm_qa_ct_philips_tilt; do
    # --on-irregular warn keeps the native sheared grid in the NIfTI (the default deskews it for ITK), which
    # is the grid of the CT's own frames that a SEG references.
    "$VOXLABEL" label "$DATA/$series" --preset bone --largest 20 --device cpu --on-irregular warn -o "$series" \
        --quiet 2>/dev/null &&
        "$VOXLABEL" seg "$series/labels.nii.gz" "$DATA/$series" -o "$series/seg.dcm" --quiet ||
        { echo "FAIL: $series: label or seg"; failures=$((failures + 1)); continue; }
    dciodvfy "$series/seg.dcm" >"$series/dciodvfy.txt" 2>&1
    if grep -q "^Error" "$series/dciodvfy.txt"; then
        echo "FAIL: $series: dciodvfy reports errors"; cat "$series/dciodvfy.txt"; failures=$((failures + 1))
    fi
    "$PYTHON" "$HERE/io_seg_readback.py" "$series/seg.dcm" "$series/labels.nii.gz" "$DATA/$series" ||
        failures=$((failures + 1))
done
[ "$failures" -eq 0 ] && echo "DICOM SEG on real series: all checks passed"
[ "$failures" -eq 0 ]
