#!/bin/bash
# Issue 16 B7 (writers of helper A): on a full disk, `convert` to .mat, `seg` and `phantom` exit 4 with one error
# line and leave nothing in the output directory (libmatio ignores short writes; DCMTK's status is checked).
# Runs on a 256 KiB tmpfs, filled up to a few KiB; skips (77) where mounting is not permitted.
# usage: cli_writers_disk_full.sh VOXLABEL WORK_DIR
set -u
voxlabel=$1
work=$2
rm -rf "$work" && mkdir -p "$work/full" && cd "$work" || exit 1
if ! mount -t tmpfs -o size=256k tmpfs full 2>/dev/null; then
    echo "skipped: cannot mount a tmpfs here (needs root)"
    exit 77
fi
trap 'umount "$work/full"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$voxlabel" phantom -o ct --size 64x64x20 --quiet || exit 1
"$voxlabel" label ct --preset bone --largest 3 --device cpu -o lab --quiet || exit 1

# Fills the tmpfs but for $1 bytes.
fill_leaving() {
    rm -f full/.filler
    dd if=/dev/zero of=full/.filler bs=4k status=none 2>/dev/null
    local size
    size=$(stat -c %s full/.filler)
    truncate -s $((size > $1 ? size - $1 : 0)) full/.filler
}

expect_full() { # name command...
    local name=$1
    shift
    "$@" >out.txt 2>err.txt
    local rc=$?
    local lines
    lines=$(grep -c . err.txt)
    local left
    left=$(ls -A full | grep -v '^\.filler$')
    if [ $rc -ne 4 ]; then
        fail "$name: exit $rc, want 4"; cat err.txt
    elif [ "$lines" -ne 1 ] || ! grep -q '^voxlabel: error: ' err.txt; then
        fail "$name: want one error line"; cat err.txt
    elif [ -n "$left" ]; then
        fail "$name: left $left"
    else
        echo "ok: $name: $(cat err.txt)"
    fi
    find full -mindepth 1 ! -name .filler -exec rm -rf {} + 2>/dev/null
}

for leave in 0 4096 20000; do
    fill_leaving $leave
    expect_full "convert to .mat (free $leave)" "$voxlabel" convert ct full/ct.mat
    # the compressed label map is a few KiB: only a full disk refuses it
    [ $leave -eq 0 ] && expect_full "convert labels to .mat (free $leave)" "$voxlabel" convert lab/labels.nii.gz full/l.mat
    expect_full "seg (free $leave)" "$voxlabel" seg lab/labels.nii.gz ct -o full/seg.dcm
    expect_full "phantom (free $leave)" "$voxlabel" phantom -o full/ph --size 64x64x20
done
rm -f full/.filler
"$voxlabel" convert ct full/ct.mat --quiet || fail "convert to .mat with room"
"$voxlabel" convert full/ct.mat back.nrrd --quiet || fail "reading back the .mat written with room"
exit $((failures > 0))
