# step NAME SECONDS COMMAND...: runs COMMAND under a hard time limit (a hung kernel costs SECONDS, not the whole
# device call), keeps its output in $step_dir/NAME.out and appends it to $log, prints the lines matching
# $step_show and the last two, and sets status=1 when it fails.
# Sourced by bench/gpu_device_run.sh and bench/stats_device_run.sh, which set log, step_dir, step_show, status.
step() {
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    echo "== $name: $*" | tee -a "$log"
    timeout -s KILL "$limit" "$@" > "$step_dir/$name.out" 2>&1
    local rc=$?
    cat "$step_dir/$name.out" >> "$log"
    grep -E "$step_show" "$step_dir/$name.out" | head -n 12
    tail -n 2 "$step_dir/$name.out"
    echo "== $name: rc $rc, $((SECONDS - start)) s"
    [ "$rc" -eq 0 ] || status=1
}
