#!/bin/bash
# Issue 16 (helper C): clean exit codes and one escaped, uncut error line for bad inputs.
#   A5  compare --raw-dims whose product overflows 64 bits: exit 3, one line
#   A6  a 40000x1x1 volume to NIfTI: refused before any work with exit 3, naming only formats the command takes
#   B11 control characters (esc.mha) never reach the terminal raw; a newline in a path does not split the line;
#       a long path keeps its reason
#   B12 no command: usage plus one error line, exit 2; color --frame 2 on a 2-frame file says "has 2 frame(s)"
#   preview with labels of another size: exit 3, not a crash; shapes on a missing file: "No such file"
# Usage: cli_bad_input_messages.sh VOXLABEL [SHARED_DATA]
set -u
B=$1
SHARED=${2:-$(cd "$(dirname "$0")/../.." && pwd)/shared/test-data}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
fail=0
check() { # NAME EXPECTED_RC ACTUAL_RC
    if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; sed 's/^/  | /' err | head -5; fail=1; else echo "ok $1"; fi
}
one_error_line() { # NAME
    n=$(grep -c '^voxlabel: error: ' err); if [ "$n" != 1 ]; then echo "FAIL $1: $n error lines"; cat -v err | head; fail=1; fi
}
contains() { # NAME TEXT
    if ! grep -qF -- "$2" err; then echo "FAIL $1: stderr lacks '$2'"; cat -v err | head -5; fail=1; fi
}
lacks() { # NAME TEXT
    if grep -qF -- "$2" err; then echo "FAIL $1: stderr has '$2'"; cat -v err | head -5; fail=1; fi
}

# A5
head -c 100 /dev/zero > a.raw
"$B" compare a.raw a.raw --raw-dims 4294967296,4294967296,1 >/dev/null 2>err; check compare_overflow 3 $?
one_error_line compare_overflow; contains compare_overflow "overflow 64 bits"

# A6
printf 'NRRD0004\ntype: uint8\ndimension: 3\nsizes: 40000 1 1\nencoding: raw\nendian: little\n\n' > wide.nrrd
head -c 40000 /dev/zero >> wide.nrrd
"$B" convert wide.nrrd w.nii 2>err; check convert_wide 3 $?
one_error_line convert_wide; contains convert_wide ".nrrd, .mha or .mat"; lacks convert_wide "--format"
[ -e w.nii ] && { echo "FAIL convert_wide: w.nii written"; fail=1; }
"$B" label wide.nrrd --threshold 0 -o lw --quiet 2>err; check label_wide 3 $?
one_error_line label_wide; contains label_wide "use --format nrrd, mha, mat or raw"; lacks label_wide "staged"
[ -e lw ] && { echo "FAIL label_wide: lw left behind"; fail=1; }

# B11
printf 'ObjectType = Image\nNDims = 3\n\033[2J\033]0;owned\007bad line\n' > esc.mha
"$B" convert esc.mha x.nrrd 2>err; check esc_mha 3 $?
one_error_line esc_mha
if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' err; then echo "FAIL esc_mha: raw control bytes"; cat -v err; fail=1; fi
contains esc_mha '\x1b[2J'
nl_name=$'new\nline.nrrd'
"$B" convert "$nl_name" x.nrrd 2>err; check newline_path 3 $?
[ "$(wc -l < err)" = 1 ] || { echo "FAIL newline_path: $(wc -l < err) lines"; cat -v err; fail=1; }
contains newline_path 'new\x0aline.nrrd'
long=$(printf 'd%.0s' $(seq 1 200))
long="$long/$long/$long/$long/$long/$long/missing.nrrd"
"$B" convert "$long" x.nrrd 2>err; check long_path 3 $?
one_error_line long_path; contains long_path "missing.nrrd: "
[ "$(wc -c < err)" -gt 1100 ] || { echo "FAIL long_path: line cut"; fail=1; }

# B12
"$B" >/dev/null 2>err; check no_command 2 $?
one_error_line no_command; contains no_command "no command given"; contains no_command "usage: voxlabel"
if [ -f "$SHARED/dicom/color/SC_rgb_2frame.dcm" ]; then
    "$B" color "$SHARED/dicom/color/SC_rgb_2frame.dcm" --frame 2 -o c 2>err; check color_frame 2 $?
    one_error_line color_frame; contains color_frame "has 2 frame(s)"
else
    echo "skip color_frame: $SHARED/dicom/color/SC_rgb_2frame.dcm absent"
fi

# preview with labels of another size; shapes on a missing file
"$B" phantom -o ct --quiet >/dev/null 2>&1 || { echo "FAIL phantom"; exit 1; }
"$B" convert wide.nrrd wl.nrrd --quiet >/dev/null 2>&1
"$B" preview ct --labels wl.nrrd -o p.png 2>err; check preview_mismatch 3 $?
one_error_line preview_mismatch; contains preview_mismatch "labels are 40000x1x1"
# summary.json stays valid UTF-8 (and JSON) when the input path is not UTF-8: \xff becomes \ufffd
bad=$'ct\xff\x1b'
cp -r ct "$bad"
"$B" label "$bad" --preset bone -o sj --quiet 2>err; check label_bad_utf8 0 $?
if ! grep -qF '"path": "ct\ufffd\u001b"' sj/summary.json; then echo "FAIL summary_utf8: path not escaped"; grep path sj/summary.json; fail=1; fi
if ! iconv -f UTF-8 -t UTF-8 sj/summary.json >/dev/null 2>&1; then echo "FAIL summary_utf8: not valid UTF-8"; fail=1; fi
# C14: stats of a .mat label file (no geometry) with --intensity on the same grid takes the CT's geometry
"$B" label ct --preset bone -o lm --format mat --quiet 2>err; check label_mat 0 $?
"$B" stats lm/labels.mat --intensity ct -o s_mat.csv 2>err; check stats_mat 0 $?
contains stats_mat "holds no geometry: positions and mm columns use the geometry of ct"
if [ "$(sed -n 2p s_mat.csv | cut -d, -f1-9)" != "$(sed -n 2p lm/components.csv | cut -d, -f1-9)" ]; then
    echo "FAIL stats_mat: mm columns differ from label's own table"; sed -n 2p s_mat.csv lm/components.csv; fail=1
fi
# C16: compare hints when the reference is ours transposed in x/y or flipped in z; verdict and exit code stay
python3 - <<'PY'
nx, ny, nz = 6, 6, 4
def vol(f):
    return bytes(f(x, y, z) for z in range(nz) for y in range(ny) for x in range(nx))
shape = lambda x, y, z: 1 if (x < 2 and y < 4 and z < 3) else (2 if x == 5 and z == 0 else 0)
for name, f in (('a6', shape), ('t6', lambda x, y, z: shape(y, x, z)), ('f6', lambda x, y, z: shape(x, y, nz - 1 - z))):
    open(name + '.nrrd', 'wb').write(b'NRRD0004\ntype: uint8\ndimension: 3\nsizes: 6 6 4\nencoding: raw\nendian: little\n\n' + vol(f))
PY
"$B" compare a6.nrrd t6.nrrd > out 2>err; check compare_swap 2 $?
grep -q '^verdict: different' out && grep -q '^hint: the reference is ours with x and y swapped (then: identical)' out ||
    { echo "FAIL compare_swap: no hint"; cat out; fail=1; }
"$B" compare a6.nrrd f6.nrrd > out 2>err; check compare_flip 2 $?
grep -q '^hint: the reference is ours with its slices in reverse order (z flipped) (then: identical)' out ||
    { echo "FAIL compare_flip: no hint"; cat out; fail=1; }
"$B" convert t6.nrrd t6.mat --quiet 2>err
"$B" compare a6.nrrd t6.mat > out 2>err; check compare_swap_mat 2 $?
grep -q 'compare with --order matlab-xy' out || { echo "FAIL compare_swap_mat: hint"; cat out; fail=1; }
"$B" compare a6.nrrd t6.mat --order matlab-xy > out 2>err; check compare_swap_mat_followed 0 $?
"$B" compare a6.nrrd a6.nrrd > out 2>err; check compare_same 0 $?
grep -q '^hint' out && { echo "FAIL compare_same: hint on identical"; fail=1; }
"$B" shapes missing.png -o s.csv 2>err; check shapes_missing 3 $?
one_error_line shapes_missing; contains shapes_missing "missing.png: No such file"

[ $fail = 0 ] && echo "all passed"
exit $fail
