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
[ -z "$(ls -A "$work" | grep '^\.')" ] || { echo "FAIL: temporary entries left: $(ls -A "$work")"; fail=1; }
[ $fail -eq 0 ] && echo "dicom_cli_phantom: all checks passed"
exit $fail
