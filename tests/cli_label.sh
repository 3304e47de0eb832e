#!/usr/bin/env bash
# CLI contract of `voxlabel label` (DESIGN §6-8): help, bad arguments, missing input, unwritable and existing
# outputs, exit codes 2/3/4, one-line messages, and no partial file left behind.
# usage: cli_label.sh VOXLABEL
set -uo pipefail
voxlabel=$1
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
passed=0 failed=0

# expect CODE PATTERN -- command...: runs it, checks the exit code and that stderr matches PATTERN.
expect() {
    local code=$1 pattern=$2
    shift 3
    "$@" >"$work/stdout" 2>"$work/stderr"
    local got=$?
    if [ "$got" -ne "$code" ] || { [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$work/stderr"; }; then
        echo "FAIL: $* -> exit $got (want $code), stderr: $(cat "$work/stderr")"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}
check() { # check DESCRIPTION command...
    local what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failed=$((failed + 1)); fi
}

"$voxlabel" phantom -o "$work/ct" --size 48x40x12 --quiet >/dev/null 2>&1 || { echo "phantom failed"; exit 1; }
"$voxlabel" label "$work/ct" --preset bone -o "$work/out_bone" --quiet >/dev/null 2>&1 || { echo "label failed"; exit 1; }

expect 0 '' -- "$voxlabel" label --help
check "help shows examples" grep -q "examples:" "$work/stdout"
expect 0 '' -- "$voxlabel" --help
expect 2 '^voxlabel: error: label: missing INPUT' -- "$voxlabel" label
expect 2 'unknown option' -- "$voxlabel" label "$work/ct" --preset bone -o "$work/o" --bogus
expect 2 'error: --conn: 7 is not one of' -- "$voxlabel" label "$work/ct" --preset bone --conn 7 -o "$work/o"
expect 2 "error: --threshold: 'abc' is not a number" -- "$voxlabel" label "$work/ct" --threshold abc -o "$work/o"
expect 2 'is empty' -- "$voxlabel" label "$work/ct" --threshold 500:100 -o "$work/o"
expect 2 "preset: 'bones' is not one of" -- "$voxlabel" label "$work/ct" --preset bones -o "$work/o"
expect 2 'give --threshold' -- "$voxlabel" label "$work/ct" -o "$work/o"
expect 2 'missing -o DIR' -- "$voxlabel" label "$work/ct" --preset bone
expect 2 "order: 'abc'" -- "$voxlabel" label "$work/ct" --preset bone --order abc -o "$work/o"
expect 2 "device: 'tpu'" -- "$voxlabel" label "$work/ct" --preset bone --device tpu -o "$work/o"
expect 2 "gpu-memory: '12X' is not a size" -- "$voxlabel" label "$work/ct" --preset bone --gpu-memory 12X -o "$work/o"
expect 2 "gpu-memory: '0' is not a size above 0" -- "$voxlabel" label "$work/ct" --preset bone --gpu-memory 0 -o "$work/o"
expect 2 "gpu-memory: '-1G' is not a size" -- "$voxlabel" label "$work/ct" --preset bone --gpu-memory -1G -o "$work/o"
expect 2 'unknown command' -- "$voxlabel" labl
check "no output dir after usage errors" test ! -e "$work/o"

expect 3 'error: .*nowhere: no such file or directory' -- "$voxlabel" label "$work/nowhere" --preset bone -o "$work/o"
check "no output dir after a missing input" test ! -e "$work/o"
printf 'not dicom' > "$work/junk.nii.gz"
expect 3 '^voxlabel: error: ' -- "$voxlabel" label "$work/junk.nii.gz" --preset bone -o "$work/o"
check "no output dir after a bad input" test ! -e "$work/o"

mkdir "$work/readonly" && chmod a-w "$work/readonly"
if [ "$(id -u)" -ne 0 ]; then
    expect 4 'not writable|cannot create' -- "$voxlabel" label "$work/ct" --preset bone -o "$work/readonly/o"
fi
# Missing parents of -o are made (mkdir -p, tests/cli_output_force.sh); a parent that is a file cannot be.
printf x > "$work/afile"
expect 4 'cannot create the output directory' -- "$voxlabel" label "$work/ct" --preset bone -o "$work/afile/sub/o"
check "nothing made under a file parent" test -f "$work/afile"
expect 4 'exists and is not a directory' -- "$voxlabel" label "$work/ct" --preset bone -o "$work/afile"

expect 0 '' -- "$voxlabel" label "$work/ct" --preset bone -o "$work/out" --quiet
check "three outputs written" test -s "$work/out/labels.nii.gz" -a -s "$work/out/components.csv" -a -s "$work/out/summary.json"
check "quiet prints nothing" test ! -s "$work/stdout"
cp "$work/out/components.csv" "$work/before.csv"
expect 4 'components.csv|labels.nii.gz.*already exists \(use --force' -- "$voxlabel" label "$work/ct" --threshold 0 -o "$work/out"
check "existing outputs untouched without --force" cmp -s "$work/out/components.csv" "$work/before.csv"
expect 0 '' -- "$voxlabel" label "$work/ct" --threshold 0 -o "$work/out" --force --quiet
check "--force replaces outputs" bash -c "! cmp -s '$work/out/components.csv' '$work/before.csv'"
check "no staged or temporary files left" bash -c "[ -z \"\$(ls -A '$work/out' | grep -v -E '^(labels.nii.gz|components.csv|summary.json)$')\" ]"
expect 0 'selects no voxels' -- "$voxlabel" label "$work/ct" --threshold 5000 -o "$work/empty"
check "empty threshold still writes a valid table" test "$(wc -l < "$work/empty/components.csv")" -eq 1
expect 0 '' -- "$voxlabel" label "$work/ct" --preset bone --format mat --order size --min-size 5 --largest 3 -o "$work/mat" --quiet
check "mat output" test -s "$work/mat/labels.mat"
expect 2 "mat-class: 'int8'" -- "$voxlabel" label "$work/ct" --preset bone --format mat --mat-class int8 -o "$work/m2"
expect 0 '' -- "$voxlabel" label "$work/ct" --preset bone --format mat --mat-class uint32 -o "$work/m3" --quiet
check "uint32 mat output" test -s "$work/m3/labels.mat"

# Other inputs: NIfTI from convert, and raw with --raw-dims/--raw-type give the same table as DICOM.
expect 0 '' -- "$voxlabel" convert "$work/ct" "$work/ct.nii.gz" --quiet
expect 0 '' -- "$voxlabel" label "$work/ct.nii.gz" --preset bone -o "$work/from_nifti" --quiet
# NIfTI keeps geometry in float32, so only the voxel columns (label, voxels, centroid and bbox in voxels) compare.
voxel_columns() { cut -d, -f1,2,4-6,10-15 "$1"; }
check "NIfTI input gives the DICOM labels" cmp -s <(voxel_columns "$work/out_bone/components.csv") <(voxel_columns "$work/from_nifti/components.csv")
"$voxlabel" convert "$work/ct" "$work/ct.nii" --quiet >/dev/null 2>&1
tail -c +353 "$work/ct.nii" > "$work/ct.raw" # the 352-byte NIfTI-1 header off: i16, x fastest
expect 0 '' -- "$voxlabel" label "$work/ct.raw" --raw-dims 48,40,12 --raw-type i16 --preset bone -o "$work/from_raw" --quiet
check "raw input gives the same labels" cmp -s <(voxel_columns "$work/out_bone/components.csv") <(voxel_columns "$work/from_raw/components.csv")
# 30K of device memory holds 2 of these 48x40 slices: on a GPU, z-slabs; on the CPU the option changes nothing.
expect 0 '' -- "$voxlabel" label "$work/ct" --preset bone --gpu-memory 30K -o "$work/slabs" --quiet
check "labels in z-slabs are the whole volume's" cmp -s "$work/out_bone/components.csv" "$work/slabs/components.csv"
expect 2 'raw-dims' -- "$voxlabel" label "$work/ct.raw" --raw-dims 48,40 --preset bone -o "$work/bad_raw"
expect 3 '' -- "$voxlabel" label "$work/ct.raw" --raw-dims 480,40,12 --raw-type i16 --preset bone -o "$work/short_raw"
check "no output after a short raw file" test ! -e "$work/short_raw"
expect 0 "using the series' window 40:400" -- "$voxlabel" preview "$work/ct" -o "$work/preview.png"
expect 0 '' -- "$voxlabel" label "$work/ct" --preset bone --preview -o "$work/pv" --quiet
check "label --preview writes both PNGs" test -s "$work/pv/preview.png" -a -s "$work/pv/preview_orthogonal.png"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
