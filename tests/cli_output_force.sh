#!/bin/bash
# Issue 16 B9 + C17: --force replaces only regular files voxlabel would write. A device node, a FIFO, a
# symbolic link (dangling or not) at an output path is never replaced (exit 4, left as it was); a dangling
# link is not replaced without --force either; -o LINK to a directory writes into that directory and keeps
# the link; -o a/b/c creates the missing parents. usage: cli_output_force.sh VOXLABEL WORKDIR
set -u
voxlabel=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() { # expect CODE command...
    want=$1; shift
    "$@" >out.txt 2>err.txt; got=$?
    [ "$got" -eq "$want" ] || { fail "exit $got (want $want): $*"; cat err.txt; }
    [ "$want" -eq 0 ] || [ "$(grep -vc '^voxlabel: note: ' err.txt)" -eq 1 ] || { fail "not one error line: $*"; cat err.txt; }
}

"$voxlabel" phantom -o ct --size 48x48x24 --quiet || exit 1
"$voxlabel" label ct --threshold 100 -o lab --quiet >/dev/null || exit 1

# /dev/null: a character device, never replaced
if [ -c /dev/null ]; then
    expect 4 "$voxlabel" stats lab/labels.nii.gz -o /dev/null --force
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
    ls -A /dev | grep -q '^\.null\.' && fail "a staging file was left in /dev"
fi
# a device node of our own, where we can make one (root)
if mknod dev.nii.gz c 1 3 2>/dev/null; then
    expect 4 "$voxlabel" convert ct dev.nii.gz --force
    [ -c dev.nii.gz ] || fail "the device node dev.nii.gz was replaced"
fi
mkfifo fifo.nii.gz
expect 4 "$voxlabel" convert ct fifo.nii.gz --force
[ -p fifo.nii.gz ] || fail "the FIFO fifo.nii.gz was replaced"
expect 4 "$voxlabel" convert ct fifo.nii.gz

# dangling symbolic link: not replaced without --force, nor with it; its target is not created
ln -s nowhere.nii.gz dangling.nii.gz
expect 4 "$voxlabel" convert ct dangling.nii.gz
expect 4 "$voxlabel" convert ct dangling.nii.gz --force
[ -L dangling.nii.gz ] && [ ! -e nowhere.nii.gz ] || fail "the dangling link was replaced or followed"
# a link to a regular file: --force does not replace the link nor write through it
echo keep >kept.csv
ln -s kept.csv link.csv
expect 4 "$voxlabel" stats lab/labels.nii.gz -o link.csv --force
[ -L link.csv ] && [ "$(cat kept.csv)" = keep ] || fail "the link or its target was changed"
# a regular file is replaced with --force, as before
echo old >regular.csv
expect 0 "$voxlabel" stats lab/labels.nii.gz -o regular.csv --force
grep -q '^label,' regular.csv || fail "--force did not replace a regular file"
# a label output that is a FIFO inside the -o directory
mkdir fifodir && mkfifo fifodir/components.csv
expect 4 "$voxlabel" label ct --threshold 100 -o fifodir --force
[ -p fifodir/components.csv ] && [ ! -e fifodir/labels.nii.gz ] || fail "label --force replaced a FIFO or left outputs"
[ -z "$(ls -A fifodir | grep '^\.')" ] || fail "hidden files left in fifodir"

# -o LINK where LINK points to a directory: the files go into that directory, the link stays
mkdir real && ln -s real linkdir
expect 0 "$voxlabel" label ct --threshold 100 -o linkdir
[ -L linkdir ] && [ -s real/labels.nii.gz ] || fail "-o LINK did not write into the linked directory"
expect 0 "$voxlabel" label ct --threshold 100 -o linkdir --force
[ -L linkdir ] && [ -s real/summary.json ] || fail "-o LINK --force replaced the link or emptied its target"

# C17: -o a/b/c creates the missing parents (mkdir -p); a failure leaves none of them
expect 0 "$voxlabel" label ct --threshold 100 -o a/b/c
[ -s a/b/c/labels.nii.gz ] || fail "-o a/b/c wrote no labels"
# a failing run into new parents removes them again: components.csv is a directory there, so the check fails
mkdir -p e && expect 4 "$voxlabel" label ct --threshold 100 -o e/new/deeper/components.csv/..
[ -z "$(ls -A e)" ] || fail "a failed run left directories: $(ls -R e)"

[ "$failures" -eq 0 ] && echo "cli_output_force: all passed" || echo "cli_output_force: $failures failure(s)"
[ "$failures" -eq 0 ]
