#!/usr/bin/env bash
# The cohort bench (issue 20): >= 40 CT series, the real ones of ../shared plus phantoms of clinical size, labelled
#   1. by voxlabel batch: as given (the defaults: --prefetch 1 --write-behind 1) and again on its complete output
#      (batch_rerun: discovery alone), fully serial (--prefetch 0 --write-behind 0: each series read, labelled and
#      written alone), with --write-behind 0, 2 and 3, --prefetch 2, --jobs 2 (the defaults are chosen from these)
#      and --format nii (the write stage without gzip); RUNS (names below) picks others, e.g. batch_wt8
#      (--write-threads 8) or batch_threads12 (--threads 12: every stage on 12 threads), and LOOPS=0 leaves out 2.
#      and 3.,
#   2. by a shell loop of voxlabel label, one series per call,
#   3. by a shell loop of dcm2niix + a cc3d script (bench/cohort_cc3d_label.py), as users do today,
# all with the bone threshold (>= 300 HU, 26-connected). Prints series per minute for each, the summed
# per-stage seconds of the batch runs (from each series' timings.json) with their CPU seconds (user+system) and
# minor page faults, and the three target ratios:
#   batch / label loop (>= 3), batch / dcm2niix+cc3d loop (>= 10), and batch's labelling wall time over the
#   time to just read and decode the cohort (<= 1.5; the read+decode time is the summed read stage of the
#   serial run, where each series is read with nothing else running). The table also goes to WORK/cohort_bench.md.
# usage: bench/cohort_bench.sh VOXLABEL WORK [PHANTOMS] [--no-peers]
#   PHANTOMS  phantom series to add (default 36; 512x512 with SLICES slices in turn, default "80 120 160 200")
#   --no-peers  only the voxlabel runs; DEVICE=gpu|cpu|auto picks --device
#   the peers: dcm2niix from PATH; BENCH_PYTHON, a python that imports cc3d and nibabel, or else the venv
#   BENCH_VENV (default build/bench-venv, made from PyPI when missing); PEER_SECONDS stops the peer loop early
#   (its series per minute is then over the series it did, the first ones of the same mix of sizes)
set -euo pipefail
voxlabel=$(realpath "$1") work=$2 phantoms=${3:-36}
peers=1
[ "${4:-}" = "--no-peers" ] && peers=0
device=${DEVICE:-auto}
here=$(cd "$(dirname "$0")" && pwd)
shared=$(realpath -m "$here/../../shared/test-data/dicom")
mkdir -p "$work"
work=$(realpath "$work")
root=$work/root
mkdir -p "$root"
report=$work/cohort_bench.md
: > "$report"
say() { echo "$*" | tee -a "$report"; }

# The cohort: the real CT folders (when ../shared is there) and the phantoms.
real_dirs=()
if [ -d "$shared" ]; then
    ln -sfn "$shared" "$root/shared"
    for d in dcmqi_ct_3slice dcm_qa_ct_philips_tilt dcm_qa_ct_philips_study dcm_qa_ct_ge_tilt; do
        [ -d "$shared/$d" ] && real_dirs+=("$root/shared/$d")
    done
fi
read -r -a slices <<< "${SLICES:-80 120 160 200}"
for k in $(seq 1 "$phantoms"); do
    [ -d "$root/phantom_$k" ] || echo "$k ${slices[$((k % ${#slices[@]}))]}"
done | xargs -r -n 2 -P "$(nproc)" sh -c '"$0" phantom -o "$1/phantom_$2" --quiet --seed "$2" --size "512x512x$3"' \
    "$voxlabel" "$root"
series_dirs=("${real_dirs[@]}" "$root"/phantom_*)
options=(--preset bone --on-irregular warn --device "$device")
say "cohort: ${#real_dirs[@]} real CT folders + $phantoms phantoms (512x512 x ${slices[*]} slices); $(nproc) cores; device $device"
say ""
say "| method | series | wall s | series/min | x label loop | x dcm2niix+cc3d loop |"
say "|---|---|---|---|---|---|"

seconds_of() { # COMMAND...: wall seconds
    local start end
    start=$(date +%s.%N)
    "$@" > /dev/null 2>> "$work/errors.log" || true
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}
declare -A wall count cpu faults pipe
# Wall and CPU seconds (user + system, of the process and its children) of one batch run, and its page faults
# (minor: fresh pages zeroed, or pages mapped from the page cache).
measured_run() { # COMMAND...: prints "WALL USER+SYSTEM FAULTS"
    python3 -c 'import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "a"))
wall = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f %.2f+%.2f %d" % (wall, r.ru_utime, r.ru_stime, r.ru_minflt))' "$work/errors.log" "$@"
}
run_batch() { # NAME OPTIONS...   (NAME batch_rerun: batch again into batch's complete OUT, discovery alone)
    local name=$1 out=$work/$1
    shift
    [ "$name" = batch_rerun ] && out=$work/batch || rm -rf "$out"
    read -r wall[$name] cpu[$name] faults[$name] < <(measured_run "$voxlabel" batch "$root" -o "$out" "${options[@]}" \
        --quiet "$@")
    count[$name]=$(grep -c ',done,' "$out/cohort.csv" || true)
    stages[$name]="$(python3 "$here/cohort_stages.py" "$out") cpu=${cpu[$name]} faults=${faults[$name]}"
    pipe[$name]=$(python3 "$here/cohort_stages.py" "$out" pipeline_wall)
    echo "ran $name: ${count[$name]} series in ${wall[$name]} s, cpu ${cpu[$name]} s" # progress, kept in the log when a limit cuts the run
}
declare -A stages
# RUNS picks some of the batch runs (batch and batch_serial always run: the target ratio needs both); LOOPS=0
# leaves out the label loop and the peers.
batch_runs=(${RUNS:-batch batch_rerun batch_serial batch_write0 batch_write2 batch_write3 batch_prefetch2 batch_jobs2 batch_nii})
for needed in batch batch_serial; do [[ " ${batch_runs[*]} " == *" $needed "* ]] || batch_runs=("$needed" "${batch_runs[@]}"); done
# One untimed run first, so that no measured run pays for warming the page cache, the allocator and the GPU.
"$voxlabel" batch "$root" -o "$work/warm_up" "${options[@]}" --quiet > /dev/null 2>> "$work/errors.log" || true
rm -rf "$work/warm_up"
for name in "${batch_runs[@]}"; do
    case $name in
    batch) run_batch batch ;;
    batch_serial) run_batch batch_serial --prefetch 0 --write-behind 0 ;;
    batch_write0) run_batch batch_write0 --write-behind 0 ;;
    batch_write2) run_batch batch_write2 --write-behind 2 ;;
    batch_write3) run_batch batch_write3 --write-behind 3 ;;
    batch_write2_prefetch2) run_batch batch_write2_prefetch2 --write-behind 2 --prefetch 2 ;;
    batch_prefetch2) run_batch batch_prefetch2 --prefetch 2 ;;
    batch_jobs2) run_batch batch_jobs2 --jobs 2 ;;
    batch_nii) run_batch batch_nii --format nii ;;
    batch_rerun) run_batch batch_rerun ;;
    batch_wt2 | batch_wt8 | batch_wt16) run_batch "$name" --write-threads "${name#batch_wt}" ;;
    batch_threads8 | batch_threads12) run_batch "$name" --threads "${name#batch_threads}" ;;
    *) echo "cohort_bench: unknown run $name" >&2; exit 2 ;;
    esac
done
[ "${LOOPS:-1}" = 0 ] && peers=0

label_loop() {
    local k=0
    for d in "${series_dirs[@]}"; do
        k=$((k + 1))
        "$voxlabel" label "$d" "${options[@]}" -o "$work/label_loop/$k" --quiet || true
    done
}
if [ "${LOOPS:-1}" != 0 ]; then
    rm -rf "$work/label_loop"
    wall[label_loop]=$(seconds_of label_loop)
    count[label_loop]=$(find "$work/label_loop" -name summary.json | wc -l)
    echo "ran label_loop: ${count[label_loop]} series in ${wall[label_loop]} s"
fi

if [ "$peers" = 1 ]; then
    python=${BENCH_PYTHON:-}
    if [ -z "$python" ]; then
        venv=${BENCH_VENV:-$here/../build/bench-venv}
        if [ ! -x "$venv/bin/python" ]; then
            python3 -m venv "$venv"
            "$venv/bin/pip" install -q numpy scipy connected-components-3d
        fi
        "$venv/bin/python" -c "import nibabel" 2> /dev/null || "$venv/bin/pip" install -q nibabel
        python=$venv/bin/python
    fi
    "$python" -c "import cc3d, nibabel" || { echo "cohort_bench: $python cannot import cc3d and nibabel" >&2; exit 1; }
    peer_versions="dcm2niix $(dcm2niix --version 2>&1 | grep -o 'v1[.0-9]*' | head -n 1), $("$python" -c '
import sys
from importlib.metadata import version
print("python %d.%d, " % sys.version_info[:2] + ", ".join(
    "%s %s" % (name, version(name)) for name in ("connected-components-3d", "nibabel", "numpy")))')"
    peer_loop() { # stops starting series after PEER_SECONDS (when set): series per minute over those it did
        local k=0 begun=$SECONDS
        for d in "${series_dirs[@]}"; do
            [ -n "${PEER_SECONDS:-}" ] && [ $((SECONDS - begun)) -ge "$PEER_SECONDS" ] && break
            k=$((k + 1))
            mkdir -p "$work/peer_loop/$k"
            dcm2niix -z n -b n -o "$work/peer_loop/$k" -f ct "$d" > /dev/null 2>&1 || continue
            for nii in "$work/peer_loop/$k"/ct*.nii; do
                "$python" "$here/cohort_cc3d_label.py" "$nii" 300 "${nii%.nii}" || true
                break # one volume per series, as voxlabel labels one
            done
        done
    }
    rm -rf "$work/peer_loop"
    wall[peer_loop]=$(seconds_of peer_loop)
    count[peer_loop]=$(find "$work/peer_loop" -name '*_components.csv' | wc -l)
fi

per_minute() { awk -v n="${count[$1]}" -v s="${wall[$1]}" 'BEGIN { printf "%.1f", n * 60 / s }'; }
ratio() { # A B: how many times faster A is than B, per series
    [ -n "${wall[$2]:-}" ] || { echo "-"; return; }
    awk -v n="${count[$1]}" -v s="${wall[$1]}" -v m="${count[$2]}" -v t="${wall[$2]}" \
        'BEGIN { if (m > 0 && n > 0) printf "%.2f", (n / s) / (m / t); else printf "-" }'
}
for name in "${batch_runs[@]}" label_loop peer_loop; do
    [ -n "${wall[$name]:-}" ] || continue
    say "| $name | ${count[$name]} | $(printf %.1f "${wall[$name]}") | $(per_minute "$name") | $(ratio "$name" label_loop) | $(ratio "$name" peer_loop) |"
done
[ -n "${peer_versions:-}" ] && say "" && say "peers: $peer_versions"
say ""
say "summed per-series stage seconds (timings.json; read = read and decode, overlapped with the rest when prefetching;"
say "pipeline_wall = cohort.jsonl start to end, the labelling phase after discovery):"
for name in "${batch_runs[@]}"; do
    say "- $name: ${stages[$name]}"
done
read_alone=$(python3 "$here/cohort_stages.py" "$work/batch_serial" read)
pipeline=${pipe[batch]}
summed=$(python3 "$here/cohort_stages.py" "$work/batch" total)
say ""
say "targets (batch = voxlabel batch with its defaults):"
say "- batch / voxlabel label loop, series per minute: $(ratio batch label_loop) (target >= 3)"
say "- batch / dcm2niix + cc3d loop, series per minute: $(ratio batch peer_loop) (target >= 10)"
say "- batch labelling wall / read+decode alone: $(awk -v a="$pipeline" -v b="$read_alone" 'BEGIN { printf "%.2f", a / b }') ($pipeline s / $read_alone s; target <= 1.5)"
say "- summed per-series seconds / read+decode alone: $(awk -v a="$summed" -v b="$read_alone" 'BEGIN { printf "%.2f", a / b }') ($summed s / $read_alone s)"
[ -s "$work/errors.log" ] && { echo "errors (first 5):"; head -n 5 "$work/errors.log"; }
exit 0
