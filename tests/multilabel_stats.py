"""`voxlabel stats --multilabel` (per-component statistics of a class map, with a `class` column) against cc3d
(connected-components-3d) and numpy:
  - random class maps (u8, u16, i16 raw files; fresh seed every run; classes that touch, single-voxel islands),
    conn 6, 18 or 26: in --order matlab-xy the rows are cc3d's multilabel components in its raster numbering,
    with their class, voxels and centroid_x/y/z equal to numpy's; in --order matlab the same components
    numbered by bwlabeln's rule (minimum z*nx*ny + x*ny + y first); in --order size by size (ties: matlab
    order);
  - the per-class table (the same map without --multilabel) has one row per class value, and each class's
    voxels equal the sum over its components;
  - `voxlabel label --multilabel`'s components.csv is the same table, column for column;
  - --json carries `class`; --columns label,class,voxels gives exactly those;
  - refusals (one error line, exit code, no output): a float map with --multilabel (3), --order without
    --multilabel (2), --columns naming class without --multilabel (2).
usage: multilabel_stats.py VOXLABEL WORKDIR [SEED]"""
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish, refusal_problem  # noqa: E402
from multilabel_maps import random_class_map  # noqa: E402

try:
    import cc3d
except ImportError as error:
    print(f"SKIP: {error} (the oracle venv has cc3d)")
    sys.exit(77)

voxlabel, work = sys.argv[1], sys.argv[2]
seed = int(sys.argv[3]) if len(sys.argv) > 3 else int.from_bytes(os.urandom(4), "little")
print(f"seed {seed} (rerun: {sys.argv[0]} {voxlabel} {work} {seed})")
rng = np.random.default_rng(seed)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
raw_types = {np.uint8: "u8", np.uint16: "u16", np.int16: "i16"}


def voxlabel_run(*args):
    return subprocess.run([voxlabel, *args], capture_output=True, text=True)


def read_rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def random_map(shape, classes, dtype):
    """zyx class map: coarse blocks of random classes (a quarter background) plus 3% single-voxel noise."""
    return random_class_map(rng, shape, classes, dtype, 120 if dtype == np.uint8 else 30000, 5, 0.03)


def expected_components(zyx, conn):
    """cc3d's components (raster numbering = matlab-xy) with class, voxels, centroid (x, y, z) and the minimum
    matlab key of each, index k for label k + 1."""
    labels = cc3d.connected_components(zyx.transpose(2, 1, 0), connectivity=conn).transpose(2, 1, 0)
    n = int(labels.max())
    flat = labels.ravel()
    z, y, x = np.indices(zyx.shape).reshape(3, -1)
    nz, ny, nx = zyx.shape
    sizes = np.bincount(flat, minlength=n + 1)[1:]
    cls = np.zeros(n + 1, dtype=np.int64)
    cls[flat] = zyx.ravel()
    centroid = [np.bincount(flat, weights=a, minlength=n + 1)[1:] / np.maximum(sizes, 1) for a in (x, y, z)]
    key = z * nx * ny + x * ny + y
    min_key = np.full(n + 1, np.iinfo(np.int64).max)
    np.minimum.at(min_key, flat, key)
    return cls[1:], sizes, np.stack(centroid, axis=1), min_key[1:]


def check_rows(rows, order, cls, sizes, centroid, what):
    """rows: the CSV in `order`; the expected arrays in cc3d's numbering."""
    if not check(len(rows) == len(cls), f"{what}: {len(rows)} rows, cc3d {len(cls)} components"):
        return
    got_class = np.array([int(r["class"]) for r in rows], dtype=np.int64)
    got_voxels = np.array([int(r["voxels"]) for r in rows], dtype=np.int64)
    got_centroid = np.array([[float(r[f"centroid_{a}"]) for a in "xyz"] for r in rows]).reshape(-1, 3)
    check([int(r["label"]) for r in rows] == list(range(1, len(rows) + 1)), f"{what}: labels not 1..N")
    # Each row is matched to cc3d's component through the order's permutation.
    check(np.array_equal(got_class, cls[order]), f"{what}: class column differs")
    check(np.array_equal(got_voxels, sizes[order]), f"{what}: voxels column differs")
    check(np.allclose(got_centroid, centroid[order], rtol=0, atol=1e-6), f"{what}: centroids differ")


def check_map(zyx, conn, what):
    nz, ny, nx = zyx.shape
    path = os.path.join(work, f"{what}.raw")
    zyx.tofile(path)
    raw = ["--raw-dims", f"{nx},{ny},{nz}", "--raw-type", raw_types[zyx.dtype.type]]
    cls, sizes, centroid, min_key = expected_components(zyx, conn)
    raster = np.arange(len(cls))
    matlab = np.argsort(min_key, kind="stable")
    by_size = matlab[np.argsort(-sizes[matlab], kind="stable")]
    for name, order in (("matlab-xy", raster), ("matlab", matlab), ("size", by_size)):
        out = os.path.join(work, f"{what}_{name}.csv")
        r = voxlabel_run("stats", path, *raw, "--multilabel", "--connectivity", str(conn), "--order", name,
                         "--device", "cpu", "-o", out)
        if check(r.returncode == 0, f"{what} {name}: exit {r.returncode}: {r.stderr.strip()}"):
            rows = read_rows(out)
            check(list(rows[0].keys())[:3] == ["label", "class", "voxels"] if rows else True,
                  f"{what}: columns start {list(rows[0].keys())[:3] if rows else []}")
            check_rows(rows, order, cls, sizes, centroid, f"{what} conn {conn} {name}")
    # Per class: the map itself as labels.
    out = os.path.join(work, f"{what}_classes.csv")
    r = voxlabel_run("stats", path, *raw, "-o", out)
    if check(r.returncode == 0, f"{what} per class: exit {r.returncode}: {r.stderr.strip()}"):
        rows = read_rows(out)
        check("class" not in rows[0], f"{what}: per-class table has a class column")
        per_class = {int(r["label"]): int(r["voxels"]) for r in rows if int(r["voxels"])}
        summed = {}
        for c, n in zip(cls.tolist(), sizes.tolist()):
            summed[c] = summed.get(c, 0) + n
        check(per_class == summed, f"{what}: per-class voxels differ from the sum over components")
    # The same components as `label --multilabel`.
    out_dir = os.path.join(work, f"{what}_label")
    r = voxlabel_run("label", path, *raw, "--multilabel", "--conn", str(conn), "--device", "cpu", "-o", out_dir)
    if check(r.returncode == 0, f"{what} label: exit {r.returncode}: {r.stderr.strip()}"):
        label_rows = read_rows(os.path.join(out_dir, "components.csv"))
        stats_rows = read_rows(os.path.join(work, f"{what}_matlab.csv"))
        check(label_rows == stats_rows,
              f"{what}: label --multilabel's components.csv differs from stats --multilabel "
              f"(columns {list(label_rows[0].keys()) if label_rows else []})")


for case in range(6):
    dtype = [np.uint8, np.uint16, np.int16][case % 3]
    shape = tuple(int(v) for v in rng.integers(3, 28, size=3))
    conn = int(rng.choice([6, 18, 26]))
    check_map(random_map(shape, int(rng.integers(2, 40)), dtype), conn, f"map{case}")

# JSON and an explicit column list.
zyx = random_map((9, 11, 13), 5, np.uint8)
zyx.tofile(os.path.join(work, "small.raw"))
raw = ["--raw-dims", "13,11,9", "--raw-type", "u8"]
small = os.path.join(work, "small.raw")
cls, sizes, _, min_key = expected_components(zyx, 26)
matlab = np.argsort(min_key, kind="stable")
out = os.path.join(work, "small.json")
r = voxlabel_run("stats", small, *raw, "--multilabel", "--device", "cpu", "-o", out)
if check(r.returncode == 0, f"json: exit {r.returncode}: {r.stderr.strip()}"):
    with open(out) as handle:
        rows = json.load(handle)
    check([row["class"] for row in rows] == cls[matlab].tolist(), "json: class differs")
out = os.path.join(work, "columns.csv")
r = voxlabel_run("stats", small, *raw, "--multilabel", "--columns", "label,class,voxels", "--device", "cpu", "-o", out)
if check(r.returncode == 0, f"--columns: exit {r.returncode}: {r.stderr.strip()}"):
    with open(out) as handle:
        check(handle.readline().strip() == "label,class,voxels", "--columns label,class,voxels: other header")

# Refusals.
floats = os.path.join(work, "float.raw")
np.full((3, 4, 5), 1.5, dtype=np.float32).tofile(floats)
refused = os.path.join(work, "refused.csv")
for args, want, what in (
        ([floats, "--raw-dims", "5,4,3", "--raw-type", "f32", "--multilabel"], 3, "a float class map"),
        ([small, *raw, "--order", "size"], 2, "--order without --multilabel"),
        ([small, *raw, "--columns", "label,class"], 2, "--columns class without --multilabel")):
    problem = refusal_problem(voxlabel_run("stats", *args, "-o", refused), want, refused)
    check(problem is None, f"{what}: {problem}")

shutil.rmtree(work, ignore_errors=True)
sys.exit(finish())
