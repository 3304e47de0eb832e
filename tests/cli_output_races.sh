#!/bin/bash
# Issue 16 B8: two runs into one output never both succeed. Two `label` runs (different thresholds, so
# different results) into one new -o directory, and two `convert` runs (different inputs) into one file, are
# started together many times: each time exactly one exits 0, the other exits 4 with one error line, and the
# outputs are all the winner's (summary.json, components.csv and the labels agree; the converted file is
# byte-identical to the winner's input converted alone). usage: cli_output_races.sh VOXLABEL WORKDIR [ROUNDS]
set -u
voxlabel=$1 work=$2 rounds=${3:-25}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$voxlabel" phantom -o ct --size 96x96x48 --quiet || exit 1
"$voxlabel" label ct --threshold 100 -o ref100 --quiet >/dev/null || exit 1
"$voxlabel" label ct --threshold 700 -o ref700 --quiet >/dev/null || exit 1
n100=$(grep -o '"components": [0-9]*' ref100/summary.json | grep -o '[0-9]*$')
n700=$(grep -o '"components": [0-9]*' ref700/summary.json | grep -o '[0-9]*$')
[ "$n100" != "$n700" ] || { echo "the two thresholds give the same count; the test cannot tell the runs apart"; exit 1; }
"$voxlabel" convert ct ref_ct.nii.gz --quiet || exit 1
"$voxlabel" convert ref100/labels.nii.gz ref_lab.nii.gz --quiet || exit 1

# one_of RC_A RC_B WHAT: exactly one 0, the other 4
one_of() {
    if ! { [ "$1" -eq 0 ] && [ "$2" -eq 4 ]; } && ! { [ "$1" -eq 4 ] && [ "$2" -eq 0 ]; }; then
        fail "$3: exits $1 and $2 (want one 0 and one 4)"; cat a.err b.err
    fi
}
for round in $(seq 1 "$rounds"); do
    rm -rf race
    "$voxlabel" label ct --threshold 100 -o race/out --quiet >a.out 2>a.err &
    a=$!
    "$voxlabel" label ct --threshold 700 -o race/out --quiet >b.out 2>b.err &
    b=$!
    wait $a; ra=$?
    wait $b; rb=$?
    one_of $ra $rb "label round $round"
    want=$n100; [ $rb -eq 0 ] && want=$n700
    [ $ra -eq 0 ] && [ $rb -eq 0 ] && continue
    got=$(grep -o '"components": [0-9]*' race/out/summary.json | grep -o '[0-9]*$')
    rows=$(($(wc -l <race/out/components.csv) - 1))
    [ "$got" = "$want" ] && [ "$rows" = "$want" ] || fail "label round $round: summary $got, csv $rows rows, winner's count $want"
    ref=ref100; [ $rb -eq 0 ] && ref=ref700
    cmp -s race/out/labels.nii.gz $ref/labels.nii.gz || fail "label round $round: labels are not the winner's"
    [ -z "$(ls -A race/out | grep '^\.')" ] || fail "label round $round: hidden files left: $(ls -A race/out)"
    for e in a.err b.err; do
        [ "$(grep -vc '^voxlabel: note: ' $e)" -le 1 ] || { fail "label round $round: more than one error line"; cat $e; }
    done

    rm -rf race && mkdir race
    "$voxlabel" convert ct race/x.nii.gz --quiet >a.out 2>a.err &
    a=$!
    "$voxlabel" convert ref100/labels.nii.gz race/x.nii.gz --quiet >b.out 2>b.err &
    b=$!
    wait $a; ra=$?
    wait $b; rb=$?
    one_of $ra $rb "convert round $round"
    ref=ref_ct.nii.gz; [ $rb -eq 0 ] && ref=ref_lab.nii.gz
    cmp -s race/x.nii.gz $ref || fail "convert round $round: the file is not the winner's"
    [ -z "$(ls -A race | grep '^\.')" ] || fail "convert round $round: hidden files left: $(ls -A race)"
done

[ "$failures" -eq 0 ] && echo "cli_output_races: all passed ($rounds rounds)" || echo "cli_output_races: $failures failure(s)"
[ "$failures" -eq 0 ]
