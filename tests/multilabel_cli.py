"""`voxlabel label --multilabel` end to end, against cc3d (connected-components-3d) and numpy:
  - random NIfTI class maps (u8, u16; fresh seed every run): labels.nii.gz in --order matlab-xy equal to cc3d's
    multilabel labels, components.csv's class and voxels columns equal to the voxels', summary.json's and
    classes.csv's per-class counts equal to a count by class;
  - clean-up: --largest-per-class K with --min-size / --min-volume against the same rule computed from cc3d's
    labels (per class: islands under the threshold removed, then the K largest kept), cleaned.nii.gz equal to
    the survivors' classes; --fill neighbour never gives an island its own class and keeps the survivors;
  - real data: a class map of HU bands (air, fat, soft tissue, bone) of a real CT series from ../shared
    (made with `voxlabel convert`), labelled and checked against cc3d as above (skipped when absent);
  - refusals, each with one error line, its exit code and no output directory left: a float class map, a
    negative class (i16), --threshold with --multilabel, --fill with a bad value.
usage: multilabel_cli.py VOXLABEL WORKDIR SHARED_DATA [SEED]"""
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
    import nibabel as nib
except ImportError as error:
    print(f"SKIP: {error} (the oracle venv has cc3d; nibabel comes from Debian)")
    sys.exit(77)

voxlabel, work, shared = sys.argv[1], sys.argv[2], sys.argv[3]
seed = int(sys.argv[4]) if len(sys.argv) > 4 else int.from_bytes(os.urandom(4), "little")
print(f"seed {seed} (rerun: {sys.argv[0]} {voxlabel} {work} {shared} {seed})")
rng = np.random.default_rng(seed)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def save(path, xyz, spacing=(0.8, 0.7, 1.5)):
    nib.save(nib.Nifti1Image(np.asfortranarray(xyz), np.diag([*spacing, 1.0])), path)


def load(path):
    return np.asarray(nib.load(path).dataobj)


def run(*args):
    return subprocess.run([voxlabel, "label", *args], capture_output=True, text=True)


def random_map(shape, classes, dtype):
    return random_class_map(rng, shape, classes, dtype, 30000, 6, 0.02)


def expected_cleanup(m, conn, min_size, largest):
    """The survivors' class map by the rule, from cc3d's labels."""
    labels = cc3d.connected_components(m, connectivity=conn)
    sizes = np.bincount(labels.ravel())
    cls = np.zeros(len(sizes), dtype=np.int64)
    cls[labels.ravel()] = m.ravel()
    keep = sizes >= min_size
    keep[0] = False
    if largest:
        # Ties go to the lower label: cc3d numbers in raster order of the x-fastest array, as our matlab-xy.
        ids = np.nonzero(keep)[0]
        ranked = ids[np.lexsort((ids, -sizes[ids], cls[ids]))]
        rank_in_class = np.zeros(len(ranked), dtype=np.int64)
        for i in range(1, len(ranked)):
            rank_in_class[i] = rank_in_class[i - 1] + 1 if cls[ranked[i]] == cls[ranked[i - 1]] else 0
        keep[:] = False
        keep[ranked[rank_in_class < largest]] = True
    table = np.where(keep, cls, 0).astype(m.dtype)
    return table[labels]


def check_map(m, what, spacing=(0.8, 0.7, 1.5)):
    """m is x,y,z (NIfTI order); cc3d labels m.T (z,y,x C-order) in raster order = our matlab-xy."""
    path = os.path.join(work, "map.nii.gz")
    save(path, m, spacing)
    out = os.path.join(work, "out")
    conn = int(rng.choice([6, 18, 26]))
    r = run(path, "--multilabel", "--order", "matlab-xy", "--conn", str(conn), "-o", out, "--force", "--quiet")
    if not check(r.returncode == 0, f"{what}: exit {r.returncode}: {r.stderr.strip()}"):
        return
    zyx = np.ascontiguousarray(m.T)
    expected = cc3d.connected_components(zyx, connectivity=conn)
    labels = np.ascontiguousarray(load(os.path.join(out, "labels.nii.gz")).T)
    check(np.array_equal(labels, expected), f"{what} conn {conn}: labels differ from cc3d's")
    with open(os.path.join(out, "components.csv")) as f:
        rows = list(csv.DictReader(f))
    count = int(expected.max())
    check(len(rows) == count, f"{what}: {len(rows)} rows, cc3d {count} components")
    if len(rows) == count and count:
        sizes = np.bincount(expected.ravel(), minlength=count + 1)[1:]
        cls = np.zeros(count + 1, dtype=np.int64)
        cls[expected.ravel()] = zyx.ravel()
        check([int(r["voxels"]) for r in rows] == sizes.tolist(), f"{what}: voxels column differs")
        check([int(r["class"]) for r in rows] == cls[1:].tolist(), f"{what}: class column differs")
        vv = float(np.prod(spacing))
        check(all(abs(float(r["volume_mm3"]) - int(r["voxels"]) * vv) <= 1e-3 * (1 + int(r["voxels"]) * vv)
                  for r in rows), f"{what}: volume_mm3 is not voxels x voxel volume")
    print(f"{what} conn {conn}: {count} components")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    present, per_class = np.unique(zyx[zyx > 0], return_counts=True)
    got = {c["class"]: c for c in summary["per_class"]}
    check(sorted(got) == present.tolist(), f"{what}: summary classes {sorted(got)[:5]}... differ")
    check(all(got.get(int(c), {}).get("voxels") == int(n) for c, n in zip(present, per_class)),
          f"{what}: summary voxels per class differ")
    with open(os.path.join(out, "classes.csv")) as f:
        class_rows = list(csv.DictReader(f))
    components = {int(c): len(np.unique(expected[zyx == c])) for c in present}
    check([int(r["class"]) for r in class_rows] == present.tolist() and
          [int(r["voxels"]) for r in class_rows] == per_class.tolist() and
          [int(r["components"]) for r in class_rows] == [components[int(c)] for c in present],
          f"{what}: classes.csv differs from the count by class")

    # Clean-up against the rule on cc3d's labels.
    min_size = int(rng.integers(1, 20))
    largest = int(rng.integers(0, 3))
    args = ["--min-size", str(min_size)] + (["--largest-per-class", str(largest)] if largest else [])
    # matlab-xy: ties of --largest-per-class go to the lower label, which is cc3d's lower label in this order.
    r = run(path, "--multilabel", "--order", "matlab-xy", "--conn", str(conn), *args, "-o", out, "--force", "--quiet")
    if check(r.returncode == 0, f"{what} {args}: exit {r.returncode}: {r.stderr.strip()}"):
        cleaned = np.ascontiguousarray(load(os.path.join(out, "cleaned.nii.gz")).T)
        check(np.array_equal(cleaned, expected_cleanup(zyx, conn, min_size, largest)),
              f"{what} conn {conn} {args}: cleaned map differs from the rule on cc3d's labels")
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        check(sum(c["kept_voxels"] for c in s["per_class"]) == int((cleaned > 0).sum()),
              f"{what}: summary kept voxels differ from the cleaned map")
    # --min-volume V in mm^3 is --min-size ceil(V / voxel volume).
    vv = float(np.prod(spacing))
    voxels = int(rng.integers(2, 12))
    r = run(path, "--multilabel", "--conn", str(conn), "--min-volume", repr(voxels * vv), "-o", out, "--force",
            "--quiet")
    if check(r.returncode == 0, f"{what} --min-volume: exit {r.returncode}: {r.stderr.strip()}"):
        cleaned = np.ascontiguousarray(load(os.path.join(out, "cleaned.nii.gz")).T)
        check(np.array_equal(cleaned, expected_cleanup(zyx, conn, voxels, 0)),
              f"{what}: --min-volume {voxels} voxels' volume differs from --min-size {voxels}")
    # --fill neighbour: survivors unchanged, removed voxels never keep their own class.
    r = run(path, "--multilabel", "--conn", str(conn), "--min-size", "30", "--fill", "neighbour", "-o", out,
            "--force", "--quiet")
    if check(r.returncode == 0, f"{what} --fill: exit {r.returncode}: {r.stderr.strip()}"):
        filled = np.ascontiguousarray(load(os.path.join(out, "cleaned.nii.gz")).T)
        kept = expected_cleanup(zyx, conn, 30, 0)
        check(np.array_equal(filled[kept > 0], kept[kept > 0]), f"{what}: --fill changed surviving voxels")
        removed = (zyx > 0) & (kept == 0)
        check(not np.any(filled[removed] == zyx[removed]), f"{what}: --fill gave an island its own class")


for case in range(8):
    dtype = [np.uint8, np.uint16][case % 2]
    shape = tuple(int(s) for s in rng.integers(3, 40, size=3))
    classes = int(rng.integers(2, 200 if dtype == np.uint16 else 120))
    check_map(random_map(shape, classes, dtype), f"map {case} {shape} {np.dtype(dtype).name} {classes} classes")

series = os.path.join(shared, "dicom", "dcm_qa_ct_philips_study")
if os.path.isdir(series):
    ct = os.path.join(work, "ct.nii.gz")
    r = subprocess.run([voxlabel, "convert", series, ct, "--force"], capture_output=True, text=True)
    if check(r.returncode == 0, f"convert {series}: {r.stderr.strip()}"):
        img = nib.load(ct)
        hu = np.asarray(img.dataobj).astype(np.float32) * float(img.dataobj.slope or 1) + float(img.dataobj.inter or 0)
        bands = np.digitize(hu, [-900, -200, -30, 100, 300]).astype(np.uint8)  # 0 air .. 5 bone
        bands[bands == 1] = 0                                                    # lung-ish band as background
        check_map(bands, "real CT HU bands", tuple(float(z) for z in img.header.get_zooms()[:3]))
else:
    print(f"note: {series} absent, the real-data case is left out")

# Refusals: one error line, the exit code, nothing written.
bad = os.path.join(work, "bad.nii.gz")
refused = os.path.join(work, "refused")
save(bad, np.full((4, 3, 2), 1.5, dtype=np.float32))
problem = refusal_problem(run(bad, "--multilabel", "-o", refused), 3, refused)
check(problem is None, f"float class map: {problem}")
negative = np.zeros((4, 3, 2), dtype=np.int16)
negative[2, 1, 1] = -4
save(bad, negative)
r = run(bad, "--multilabel", "-o", refused)
problem = refusal_problem(r, 3, refused)
check(problem is None and "(2, 1, 1)" in r.stderr, f"negative class: {problem} {r.stderr.strip()}")
save(bad, np.ones((4, 3, 2), dtype=np.uint8))
problem = refusal_problem(run(bad, "--multilabel", "--threshold", "1", "-o", refused), 2, refused)
check(problem is None, f"--threshold with --multilabel: {problem}")
problem = refusal_problem(run(bad, "--multilabel", "--fill", "nearest", "-o", refused), 2, refused)
check(problem is None, f"--fill nearest: {problem}")
shutil.rmtree(work, ignore_errors=True)
sys.exit(finish())
