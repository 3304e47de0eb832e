#!/bin/bash
# Issue 16 B10: no staging file outlives a run. SIGTERM or SIGINT during the write removes the hidden staging
# files (and the run still dies of that signal); after kill -9 a later run into the same directory removes
# the dead run's staging files, and nothing else. usage: cli_output_signals.sh VOXLABEL WORKDIR
set -u
set -m # background jobs keep the default SIGINT action (without job control a shell makes them ignore it)
voxlabel=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A volume that takes a while to compress: random int16.
{ printf 'NRRD0004\ntype: short\ndimension: 3\nsizes: 512 512 200\nspacing: 1 1 1\nencoding: raw\nendian: little\n\n'
  head -c $((512 * 512 * 200 * 2)) /dev/urandom; } >big.nrrd || exit 1
"$voxlabel" phantom -o ct --size 32x32x8 --quiet || exit 1

staging() { ls -A "$1" 2>/dev/null | grep -E '^\.(\.?staged-[0-9]+-|.*\.tmp-[0-9]+-)' ; }
# start_caught DIR command...: starts the command in the background and waits until a staging file shows in
# DIR; sets pid, or pid= when the run ended first
start_caught() {
    dir=$1; shift
    "$@" >/dev/null 2>run.err &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
        [ -n "$(staging "$dir")" ] && return 0
    done
    wait $pid; pid=
}
caught=0
for sig in TERM INT; do
    for attempt in 1 2 3 4 5; do
        rm -rf out && mkdir out
        start_caught out "$voxlabel" convert big.nrrd out/x.nii.gz --quiet
        [ -n "$pid" ] || continue
        kill -$sig $pid
        wait $pid; rc=$?
        caught=$((caught + 1))
        [ $rc -gt 128 ] || fail "convert after SIG$sig: exit $rc (want death by the signal)"
        [ -z "$(ls -A out)" ] || fail "convert after SIG$sig left: $(ls -A out)"
        break
    done
    for attempt in 1 2 3 4 5; do
        rm -rf lab
        start_caught lab "$voxlabel" label big.nrrd --threshold 0 --format nii.gz -o lab --quiet
        [ -n "$pid" ] || continue
        kill -$sig $pid
        wait $pid; rc=$?
        caught=$((caught + 1))
        [ $rc -gt 128 ] || fail "label after SIG$sig: exit $rc (want death by the signal)"
        [ ! -e lab ] || [ -z "$(ls -A lab)" ] || fail "label after SIG$sig left: $(ls -A lab)"
        [ ! -e lab ] || fail "label after SIG$sig left the directory it created"
        break
    done
done

# kill -9: the staging files stay; the next run into the directory removes them (only those of dead runs)
for attempt in 1 2 3 4 5; do
    rm -rf out && mkdir out && echo mine >out/.keep.tmp.notours && echo mine >out/.staged-notanumber
    start_caught out "$voxlabel" convert big.nrrd out/x.nii.gz --quiet
    [ -n "$pid" ] || continue
    kill -KILL $pid; wait $pid
    caught=$((caught + 1))
    [ -n "$(staging out)" ] || fail "kill -9 left no staging file (the test did not catch the write)"
    "$voxlabel" convert ct out/y.nii.gz --quiet || fail "the run after kill -9 failed"
    [ -z "$(staging out)" ] || fail "the run after kill -9 kept the dead run's $(staging out)"
    [ -e out/.keep.tmp.notours ] && [ -e out/.staged-notanumber ] || fail "the sweep removed files not its own"
    break
done
for attempt in 1 2 3 4 5; do
    rm -rf lab
    start_caught lab "$voxlabel" label big.nrrd --threshold 0 --format nii.gz -o lab --quiet
    [ -n "$pid" ] || continue
    kill -KILL $pid; wait $pid
    caught=$((caught + 1))
    "$voxlabel" label ct --threshold 100 -o lab --quiet >/dev/null || fail "the label run after kill -9 failed"
    [ -z "$(staging lab)" ] || fail "the label run after kill -9 kept $(staging lab)"
    break
done
rm -f big.nrrd
[ $caught -gt 0 ] || { echo "SKIP: every run ended before a staging file could be seen"; exit 77; }
[ "$failures" -eq 0 ] && echo "cli_output_signals: all passed ($caught runs caught)" || echo "cli_output_signals: $failures failure(s)"
[ "$failures" -eq 0 ]
