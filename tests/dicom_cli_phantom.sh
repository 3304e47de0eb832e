#!/usr/bin/env bash
# voxlabel phantom: usage errors (exit 2), refusal of a non-empty directory (exit 4), --force, --help.
set -u
cli=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail=0
expect() { # expect CODE PATTERN -- command...
    local code=$1 pattern=$2; shift 3
    local err; err=$("$@" 2>&1 >/dev/null); local got=$?
    if [ "$got" -ne "$code" ] || ! grep -q -- "$pattern" <<<"$err"; then
        echo "FAIL: $* -> exit $got (want $code), stderr: $err"; fail=1
    fi
}
expect 2 "required" -- "$cli" phantom
expect 2 "unknown option" -- "$cli" phantom -o "$work/a" --bogus
expect 2 "needs a value" -- "$cli" phantom -o
expect 2 "NXxNYxNZ" -- "$cli" phantom -o "$work/a" --size 12x12
expect 2 "NXxNYxNZ" -- "$cli" phantom -o "$work/a" --size 0x4x4
expect 2 "not a whole number" -- "$cli" phantom -o "$work/a" --seed x
expect 2 "PIXEL,SLICE" -- "$cli" phantom -o "$work/a" --spacing -1,2
"$cli" phantom --help | grep -q "examples:" || { echo "FAIL: --help has no examples"; fail=1; }
expect 0 "" -- "$cli" phantom -o "$work/a" --size 32x24x5 --quiet
[ "$(ls "$work/a" | wc -l)" -eq 5 ] || { echo "FAIL: expected 5 files"; fail=1; }
expect 4 "not empty" -- "$cli" phantom -o "$work/a" --size 32x24x5
expect 0 "" -- "$cli" phantom -o "$work/a" --size 32x24x3 --force --quiet
[ "$(ls "$work/a" | wc -l)" -eq 3 ] || { echo "FAIL: --force did not replace the series"; fail=1; }
touch "$work/file"
expect 4 "not a directory" -- "$cli" phantom -o "$work/file" --size 8x8x2
# Issue 16 B9: -o LINK --force, LINK a symlink to a series directory: the series is replaced in the directory
# the link names and the link stays; a directory holding anything phantom did not write is never replaced.
mkdir -p "$work/links"
"$cli" phantom -o "$work/links/real" --size 16x16x4 --quiet
ln -s real "$work/links/link"
expect 0 "" -- "$cli" phantom -o "$work/links/link" --size 16x16x2 --force --quiet
[ -L "$work/links/link" ] || { echo "FAIL: --force replaced the symlink itself"; fail=1; }
[ "$(ls "$work/links/real" | wc -l)" -eq 2 ] || { echo "FAIL: the linked directory holds $(ls "$work/links/real" | wc -l) files, want 2"; fail=1; }
[ "$(ls -A "$work/links" | wc -l)" -eq 2 ] || { echo "FAIL: leftovers beside the link: $(ls -A "$work/links")"; fail=1; }
echo keep >"$work/links/real/notes.txt"
expect 4 "notes.txt" -- "$cli" phantom -o "$work/links/link" --size 16x16x2 --force
[ -f "$work/links/real/notes.txt" ] && [ "$(ls "$work/links/real" | wc -l)" -eq 3 ] ||
    { echo "FAIL: --force touched a directory holding a file phantom did not write"; fail=1; }
ln -s nowhere "$work/links/dangling"
expect 4 "symbolic link" -- "$cli" phantom -o "$work/links/dangling" --size 8x8x2 --force
[ -L "$work/links/dangling" ] || { echo "FAIL: a dangling link was replaced"; fail=1; }
[ -z "$(ls -A "$work" | grep '^\.')" ] || { echo "FAIL: temporary entries left: $(ls -A "$work")"; fail=1; }
[ $fail -eq 0 ] && echo "dicom_cli_phantom: all checks passed"
exit $fail
