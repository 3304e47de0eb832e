#!/usr/bin/env bash
# `--device gpu:N` reaches every stage, under the one policy of src/core/device.c ("gpu:N: no CUDA device N
# (M found)"), for label (morphology, labeller, statistics), stats, color and shapes:
#   >= 2 GPUs  every stage on gpu:1 writes the CPU's outputs byte for byte (summary.json compared without
#              timings_s and device) and summary.json names gpu:1; then, with only the first GPU visible
#              (CUDA_VISIBLE_DEVICES), the one-GPU checks below.
#   1 GPU      every stage on gpu:0 writes the CPU's outputs byte for byte, and --device gpu:1 fails in every
#              stage with exit 5, exactly one line "voxlabel: error: gpu:1: no CUDA device 1 (1 found)" on
#              stderr and no output file: never a silent run on GPU 0.
# The stages: label --open 1 --close 1 --stats full; label --conn 8 --open 1 (a disc per slice, 2D labels);
# label (no morphology: the labeller itself); stats --stats full --intensity; color on a generated PNG and, when
# SHARED_TEST_DATA/dicom/color is there, on a colour DICOM (with --morph and --shapes); shapes on a label volume.
# The GPU count comes from the CUDA driver (cuDeviceGetCount through ctypes), not from voxlabel.
# Exit 77 (skipped) without a usable GPU: `label --device gpu` fails with exit 5 and "gpu:0: ..." (a build
# without CUDA, no driver, no device). Needs only bash and python3 (standard library): bench/device_run.sh
# runs it on the GPU machine as `tests/gpu_device_selection.sh BINARY`.
# usage: tests/gpu_device_selection.sh VOXLABEL [SHARED_TEST_DATA]   (default: ../shared/test-data beside the
#        checkout; VL_PYTHON picks the interpreter, default python3)
set -uo pipefail
voxlabel=$1
here=$(cd "$(dirname "$0")" && pwd)
data=${2:-$here/../../shared/test-data}
python=${VL_PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

check() { # check DESCRIPTION command...
    local what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failed=$((failed + 1)); fi
}

"$voxlabel" phantom -o "$work/ct" --size 64x48x20 --quiet >/dev/null 2>&1 || { echo "FAIL: phantom"; exit 1; }

# A usable GPU at all?
"$voxlabel" label "$work/ct" --threshold 150 --device gpu -o "$work/probe" --quiet >/dev/null 2>"$work/probe.err"
probe=$?
if [ "$probe" -ne 0 ]; then
    if [ "$probe" -eq 5 ] && grep -q '^voxlabel: error: gpu:0: ' "$work/probe.err"; then
        echo "SKIP: no usable GPU: $(cat "$work/probe.err")"
        exit 77
    fi
    echo "FAIL: label --device gpu: exit $probe: $(cat "$work/probe.err")"
    exit 1
fi

gpu_count() { # devices the CUDA driver shows this process (after CUDA_VISIBLE_DEVICES)
    "$python" -c '
import ctypes, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError:
    sys.exit("libcuda.so.1 cannot be loaded")
n = ctypes.c_int(0)
if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(n)) != 0:
    sys.exit("cuInit/cuDeviceGetCount failed")
print(n.value)'
}

# A 160x120 RGB PNG written with zlib alone: a red disc and a red block on green, red speckle for --morph open:1.
"$python" - "$work/frame.png" <<'EOF' || { echo "FAIL: cannot write the PNG"; exit 1; }
import random, struct, sys, zlib
w, h, rnd = 160, 120, random.Random(7)
raw = bytearray()
for y in range(h):
    raw.append(0)
    for x in range(w):
        pixel = (40 + rnd.randrange(20), 120, 40)
        if (x - 40) ** 2 + (y - 40) ** 2 <= 400 or (90 <= x <= 140 and 60 <= y <= 100) or rnd.random() < 0.02:
            pixel = (200 + rnd.randrange(50), rnd.randrange(20), rnd.randrange(20))
        raw += bytes(pixel)
chunk = lambda kind, body: struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
      chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
EOF
# A label volume (3D components, values beyond 1) for stats and shapes, labelled once on the CPU.
"$voxlabel" label "$work/ct" --threshold 150 --device cpu -o "$work/reference" --quiet >/dev/null 2>&1 ||
    { echo "FAIL: reference labels"; exit 1; }
labels=$work/reference/labels.nii.gz
colour=$data/dicom/color/US1_UNCR.dcm
[ -f "$colour" ] || echo "note: $colour absent: the colour DICOM part is skipped"

stages=(label_morphology label_slices label stats color_png shapes)
[ -f "$colour" ] && stages+=(color_dicom)

run_stage() { # run_stage NAME DEVICE DIR: one stage's command, exit code in DIR/NAME.rc, stderr in DIR/NAME.err
    local name=$1 device=$2 dir=$3 out=$3/out/$1
    mkdir -p "$dir/out"
    case $name in
    label_morphology) set -- label "$work/ct" --threshold 150 --open 1 --close 1 --stats full -o "$out" --quiet ;;
    label_slices) set -- label "$work/ct" --threshold 150 --conn 8 --open 1 -o "$out" --quiet ;;
    label) set -- label "$work/ct" --threshold 150 --order size -o "$out" --quiet ;;
    stats) set -- stats "$labels" --intensity "$work/ct" --stats full -o "$out.csv" --quiet ;;
    color_png) set -- color "$work/frame.png" --hue 0 --hue-tol 20 --morph open:1 --se ball --shapes -o "$out" ;;
    color_dicom) set -- color "$colour" --mode opencv-full --hue-range 245:45 --smin 120 --vmin 90 --morph close:1 \
                     --conn 4 --shapes -o "$out" ;;
    shapes) set -- shapes "$labels" --conn 4 -o "$out.csv" ;;
    esac
    "$voxlabel" "$@" --device "$device" >/dev/null 2>"$dir/$name.err"
    echo $? >"$dir/$name.rc"
}

same_summary() { # same_summary A B: equal but for timings_s and device
    "$python" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("timings_s", None), d.pop("device", None)
sys.exit(a != b)' "$1" "$2"
}

names_device() { # names_device SUMMARY INDEX: the labeller ran on the GPU it was asked for
    "$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))["device"]
sys.exit(not (d["requested"] == "gpu" and d["used"] == "gpu" and d["name"].endswith("(gpu:%s)" % sys.argv[2])))' "$1" "$2"
}

# equals_cpu INDEX TAG: every stage on gpu:INDEX gives the CPU's files.
equals_cpu() {
    local index=$1 gpu=$work/$2
    for name in "${stages[@]}"; do
        run_stage "$name" "gpu:$index" "$gpu"
        check "$name on gpu:$index: exit $(cat "$gpu/$name.rc"): $(cat "$gpu/$name.err")" test "$(cat "$gpu/$name.rc")" -eq 0
    done
    check "gpu:$index wrote the same set of files as the CPU" \
        diff <(cd "$work/cpu/out" && find . -type f | sort) <(cd "$gpu/out" && find . -type f | sort)
    local file
    while read -r file; do
        [ -f "$gpu/out/$file" ] || continue
        case $file in
        */summary.json)
            check "gpu:$index $file: differs from the CPU's beyond timings and device" \
                same_summary "$work/cpu/out/$file" "$gpu/out/$file"
            check "gpu:$index $file: device is not gpu / (gpu:$index)" names_device "$gpu/out/$file" "$index" ;;
        *) check "gpu:$index $file: differs from the CPU's" cmp -s "$work/cpu/out/$file" "$gpu/out/$file" ;;
        esac
    done < <(cd "$work/cpu/out" && find . -type f | sed 's|^\./||' | sort)
    echo "gpu:$index: ${#stages[@]} stages compared with the CPU"
}

# refuses_missing_gpu FOUND TAG: every stage on gpu:1, of which the driver shows only FOUND = 1 device.
refuses_missing_gpu() {
    local found=$1 dir=$work/$2
    for name in "${stages[@]}"; do
        run_stage "$name" gpu:1 "$dir"
        local rc lines
        rc=$(cat "$dir/$name.rc")
        lines=$(wc -l <"$dir/$name.err")
        check "$name on a missing gpu:1: exit $rc (want 5)" test "$rc" -eq 5
        check "$name on a missing gpu:1: stderr is not one line naming gpu:1: $(cat "$dir/$name.err")" \
            bash -c "[ $lines -eq 1 ] && grep -qx 'voxlabel: error: gpu:1: no CUDA device 1 ($found found)' '$dir/$name.err'"
    done
    check "a refused gpu:1 left output files: $(cd "$dir/out" && find . -type f | tr '\n' ' ')" \
        test -z "$(find "$dir/out" -type f)"
    echo "gpu:1 with $found device(s): refused by ${#stages[@]} stages"
}

for name in "${stages[@]}"; do
    run_stage "$name" cpu "$work/cpu"
    check "$name on the CPU: exit $(cat "$work/cpu/$name.rc"): $(cat "$work/cpu/$name.err")" \
        test "$(cat "$work/cpu/$name.rc")" -eq 0
done
count=$(gpu_count) || { echo "FAIL: cannot count the CUDA devices"; exit 1; }
echo "CUDA devices visible: $count"
if [ "$count" -ge 2 ]; then
    equals_cpu 1 gpu1
    first=${CUDA_VISIBLE_DEVICES:-0}
    export CUDA_VISIBLE_DEVICES=${first%%,*}
    check "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES shows one device" test "$(gpu_count)" = 1
fi
if [ "$count" -ge 1 ]; then
    equals_cpu 0 gpu0
    refuses_missing_gpu 1 missing
else
    check "voxlabel found a GPU that the CUDA driver does not show" false
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
