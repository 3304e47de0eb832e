#!/usr/bin/env bash
# The CLI end to end on a GPU machine: a phantom CT series, `voxlabel label --stats full --matlab` and
# `voxlabel stats --json` on the GPU and on the CPU, their outputs compared byte for byte; `voxlabel
# label --conn 6 --order size` on both; and the GPU in z-slabs (--gpu-memory) against the CPU.
# usage: bench/cli_device_run.sh PACKAGE [SIZE]
#   PACKAGE  a .tar.xz of voxlabel, the shared libraries it needs beyond glibc and DCMTK's data dictionaries
#            (the device has no DCMTK): mkdir -p p/lib && cp build/voxlabel p &&
#            ldd build/voxlabel | awk '/=>/{print $3}' | grep -v -E '/libc.so|/libm.so|ld-linux|libresolv' |
#            xargs -I{} cp -L {} p/lib && cp /usr/share/libdcmtk17/{dicom,private}.dic p && tar -C p -cJf PACKAGE .
#   SIZE     phantom size (default 512x512x400)
set -u
root=$(mktemp -d)
tar -C "$root" -xJf "$1"
export LD_LIBRARY_PATH=$root/lib DCMDICTPATH=$root/dicom.dic:$root/private.dic
v=$root/voxlabel
size=${2:-512x512x400}
work=$(mktemp -d)
status=0
$v phantom -o "$work/ct" --size "$size" --seed 7 --quiet || exit 1
for device in gpu cpu; do
    /usr/bin/time -f "$device: label + full statistics, wall %e s" $v label "$work/ct" --threshold 64 --conn 26 \
        --stats full --matlab --device $device -o "$work/$device" --quiet || exit 1
    grep -o '"device": {[^}]*}' "$work/$device/summary.json"
    grep -o '"timings_s": {[^}]*}' "$work/$device/summary.json"
done
for file in labels.nii.gz components.csv; do
    if cmp "$work/gpu/$file" "$work/cpu/$file"; then echo "$file: gpu == cpu"; else status=1; fi
done
echo "components: $(($(wc -l < "$work/gpu/components.csv") - 1))"
# The 6-connected labeller (2x2 blocks that may split in two) and the size order, GPU against CPU.
for device in gpu cpu; do
    $v label "$work/ct" --threshold 64 --conn 6 --order size --device $device -o "$work/${device}6" --quiet || exit 1
done
for file in labels.nii.gz components.csv; do
    if cmp "$work/gpu6/$file" "$work/cpu6/$file"; then echo "conn 6, size order, $file: gpu == cpu"; else status=1; fi
done
# z-slabs: 128M of device memory holds 97 slices of 512x512, so the GPU labels a 400-slice phantom in 5 slabs.
$v label "$work/ct" --threshold 64 --conn 26 --stats full --matlab --device gpu --gpu-memory 128M \
    -o "$work/gpu_slabs" --quiet || exit 1
grep -o '"device": {[^}]*}' "$work/gpu_slabs/summary.json"
grep -o '"timings_s": {[^}]*}' "$work/gpu_slabs/summary.json"
for file in labels.nii.gz components.csv; do
    if cmp "$work/gpu_slabs/$file" "$work/cpu/$file"; then echo "z-slabs, $file: gpu == cpu"; else status=1; fi
done
for device in gpu cpu; do
    $v stats "$work/gpu/labels.nii.gz" --intensity "$work/ct" --stats full --json --device $device \
        -o "$work/stats_$device.json" --quiet || exit 1
done
if cmp "$work/stats_gpu.json" "$work/stats_cpu.json"; then echo "stats --json: gpu == cpu"; else status=1; fi
rm -rf "$root" "$work"
exit $status
