#!/usr/bin/env bash
# make python's installer (scripts/install-python) into a scratch site folder: the installed package must
# import from anywhere with Debian's python3, with no PYTHONPATH to the source and no VOXLABEL_LIBRARY, load
# the copied libvoxlabel.so and label; a second install over the first must leave one working package.
# usage: python_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1 build=$2
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
"$source_dir/scripts/install-python" "$build" "$site" >/dev/null 2>&1 || { echo "FAIL: install-python"; exit 1; }
"$source_dir/scripts/install-python" "$build" "$site" >/dev/null 2>&1 || { echo "FAIL: second install-python"; exit 1; }
leftovers=$(find "$site" -mindepth 1 -maxdepth 1 ! -name voxlabel | wc -l)
[ "$leftovers" -eq 0 ] || { echo "FAIL: $leftovers leftovers beside $site/voxlabel"; exit 1; }
cd /
env -u VOXLABEL_LIBRARY PYTHONPATH="$site" /usr/bin/python3 - "$site" <<'PY'
import sys
import numpy
import voxlabel
site = sys.argv[1]
assert voxlabel.__file__.startswith(site), voxlabel.__file__
assert voxlabel.library_path == site + "/voxlabel/libvoxlabel.so", voxlabel.library_path
labels, n = voxlabel.label(numpy.eye(4, dtype=bool)[None], connectivity=4)
assert n == 4 and labels.max() == 4, (n, labels)
print("installed package imports from", site, "and labels")
PY
