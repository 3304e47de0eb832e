#!/bin/bash
# Issue 16 B7 + C17: a full disk is never reported as success. On a tiny tmpfs every writer (label in each
# --format, convert, stats -o, shapes, color, preview) exits 4 with one error line and leaves the file system
# as it was: no output, no hidden staging file, no directory it created (also for -o a/b/c parents).
# The error names the output asked for, never a staging file. Needs root for mount; skips (77) when the tmpfs cannot be mounted. usage: cli_output_disk_full.sh VOXLABEL WORKDIR
set -u
voxlabel=$1 work=$2
umount "$work/full" 2>/dev/null
rm -rf "$work" && mkdir -p "$work/full" && cd "$work" || exit 1
if ! mount -t tmpfs -o size=64k tmpfs "$work/full" 2>/dev/null; then
    echo "SKIP: cannot mount a tmpfs (needs root)"; exit 77
fi
trap 'umount "$work/full" 2>/dev/null' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$voxlabel" phantom -o ct --size 64x64x40 --quiet || exit 1
"$voxlabel" label ct --threshold 100 -o lab --quiet >/dev/null || exit 1
"$voxlabel" preview ct --labels lab/labels.nii.gz --slice 20 -o colour.png || exit 1
"$voxlabel" color colour.png --hue 0 --hue-tol 40 --device cpu -o col >/dev/null 2>&1 || exit 1

fill() { # fill LEAVE_BYTES: fill the tmpfs, then give back LEAVE_BYTES
    rm -f full/filler
    cat /dev/zero >full/filler 2>/dev/null
    [ "$1" -gt 0 ] && truncate -s "-$1" full/filler
    ls -A full >before.txt
}
# expect_full WHAT command...: exit 4, exactly one error line, the tmpfs as before
expect_full() {
    what=$1; shift
    "$@" >out.txt 2>err.txt; got=$?
    [ "$got" -eq 4 ] || { fail "$what: exit $got (want 4): $*"; cat err.txt; }
    errors=$(grep -c '^voxlabel: error: ' err.txt)
    lines=$(grep -vc '^voxlabel: note: ' err.txt)
    [ "$errors" -eq 1 ] && [ "$lines" -eq 1 ] || { fail "$what: want one error line, got:"; cat err.txt; }
    ! grep -q 'staged-\|\.tmp' err.txt || { fail "$what: the error names a staging file, not the output:"; cat err.txt; }
    ls -A full >after.txt
    cmp -s before.txt after.txt || { fail "$what: the tmpfs changed:"; diff before.txt after.txt; }
    leftovers=$(find full -mindepth 1 ! -name filler | head -5)
    [ -z "$leftovers" ] || fail "$what: left $leftovers"
}

for leave in 0 12288; do
    for format in nii.gz nii nrrd mha raw; do
        fill $leave
        expect_full "label --format $format (free $leave)" "$voxlabel" label ct --threshold 100 --format $format -o full/out
    done
done
fill 0
expect_full "label -o a/b/c" "$voxlabel" label ct --threshold 100 -o full/a/b/c
for ext in nii.gz nii nrrd mha; do
    fill 0
    expect_full "convert .$ext" "$voxlabel" convert ct full/ct.$ext
done
fill 0
expect_full "stats -o" "$voxlabel" stats lab/labels.nii.gz -o full/stats.csv
fill 0
expect_full "shapes" "$voxlabel" shapes col/mask.png --device cpu -o full/shapes.csv
for leave in 0 4096; do
    fill $leave
    expect_full "color (free $leave)" "$voxlabel" color colour.png --hue 0 --hue-tol 40 --shapes --device cpu -o full/c
done
fill 0
expect_full "preview" "$voxlabel" preview ct --labels lab/labels.nii.gz -o full/p.png
fill 0
expect_full "preview --montage" "$voxlabel" preview ct --labels lab/labels.nii.gz --montage 4 -o full/m.png

# With room, the same commands succeed (the test's own sanity).
rm -f full/filler
"$voxlabel" label ct --threshold 100 --format nii.gz -o full/ok --quiet >/dev/null || fail "label with room"
[ -s full/ok/labels.nii.gz ] || fail "label with room wrote no labels"

[ "$failures" -eq 0 ] && echo "cli_output_disk_full: all passed" || echo "cli_output_disk_full: $failures failure(s)"
[ "$failures" -eq 0 ]
