"""`voxlabel label --open R / --close R` (cli/cmd_label.c) end to end, on the phantom CT series and on two
hand-made mask volumes (one clear of the faces, one touching all six), under every connectivity:
  (a) exit 0, and labels.nii.gz, components.csv and summary.json written;
  (b) opening never adds a voxel and never raises foreground_voxels (summary.json) over the plain run;
      closing never removes a voxel farther than R from the volume's faces, so foreground_voxels never
      drops on a mask clear of the faces. (Nearer the faces it may: both passes take the outside as
      background, as scipy's border_value=0 does; the exact sets are checked in (c).)
  (c) the labels equal an independent oracle: scipy.ndimage.binary_opening / binary_closing with the same
      ball (dx^2 + dy^2 + dz^2 <= R^2; a disc dx^2 + dy^2 <= R^2 in each slice under --conn 4/8; opening
      first when both are given; border_value=0), then scipy.ndimage.label with the matching structure:
        --order matlab     the same partition (a bijection of labels), and the same numbering as scipy on
                           the array indexed (z, x, y) (docs/design.md section 4: key z*nx*ny + x*ny + y)
        --order matlab-xy  the same numbering as scipy on the array indexed (z, y, x) in C order (raster)
      Also summary.json's components and foreground_voxels equal the oracle's N and voxel count.
  Usage errors: --open 0 and --close 65 (outside 1..64), a 3D radius above 10: exit 2, no output.
NIfTI axes through nibabel: the data array is indexed [x, y, z] (x = DICOM column), so the (z, y, x) array is
its transpose (2, 1, 0), made C-contiguous before scipy sees it.
usage: cli_label_morphology.py VOXLABEL WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np
from scipy import ndimage

from test_check import check, failures, finish

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)



def run(*arguments):
    return subprocess.run([voxlabel, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def zyx(path):
    """A NIfTI file's voxels as a C-contiguous (z, y, x) array."""
    return np.ascontiguousarray(np.asanyarray(nib.load(path).dataobj).transpose(2, 1, 0))


def footprint(radius, per_slice):
    """The ball of src/image2d/morphology.c as a (z, y, x) footprint; one slice thick under --conn 4/8."""
    g = np.indices((2 * radius + 1,) * 3) - radius
    ball = (g ** 2).sum(axis=0) <= radius * radius
    return ball[radius:radius + 1] if per_slice else ball


def structure(connectivity):
    if connectivity in (4, 8):
        s = np.zeros((3, 3, 3), bool)
        s[1] = ndimage.generate_binary_structure(2, 1 if connectivity == 4 else 2)
        return s
    return ndimage.generate_binary_structure(3, {6: 1, 18: 2, 26: 3}[connectivity])


def oracle_mask(mask, open_radius, close_radius, per_slice):
    if open_radius:
        mask = ndimage.binary_opening(mask, footprint(open_radius, per_slice), border_value=0)
    if close_radius:
        mask = ndimage.binary_closing(mask, footprint(close_radius, per_slice), border_value=0)
    return mask


def interior(shape, radius, per_slice):
    """Voxels whose element stays inside the volume."""
    inside = np.zeros(shape, bool)
    rz = 0 if per_slice else radius
    nz, ny, nx = shape
    inside[rz:nz - rz, radius:ny - radius, radius:nx - radius] = True
    return inside


def same_partition(ours, theirs):
    """1 when the two labellings are one partition: same foreground and a bijection between labels."""
    if not np.array_equal(ours > 0, theirs > 0):
        return False
    fg = ours > 0
    pairs = np.unique(np.stack([ours[fg], theirs[fg]]), axis=1) if fg.any() else np.zeros((2, 0))
    return (pairs.shape[1] == len(np.unique(ours[fg])) == len(np.unique(theirs[fg])))


def label_case(name, source, hu, threshold, connectivity, open_radius, close_radius, plain):
    """Labels SOURCE with one morphology setting in both orders; checks (a), (b), (c). Returns the
    matlab-order foreground for later comparisons."""
    per_slice = connectivity in (4, 8)
    mask = hu >= threshold
    want = oracle_mask(mask, open_radius, close_radius, per_slice)
    want_xy, want_n = ndimage.label(want, structure(connectivity))
    # The matlab key is the raster order of the (z, x, y) array.
    want_zxy, _ = ndimage.label(np.ascontiguousarray(want.transpose(0, 2, 1)), structure(connectivity))
    want_matlab = want_zxy.transpose(0, 2, 1)
    morph = (["--open", str(open_radius)] if open_radius else []) + (["--close", str(close_radius)] if close_radius else [])
    what = f"{name} conn {connectivity} {' '.join(morph) or 'plain'}"
    got = {}
    for order in ("matlab", "matlab-xy"):
        out = os.path.join(work, f"{name}_c{connectivity}_o{open_radius}_c{close_radius}_{order}")
        r = run("label", source, "--threshold", str(threshold), "--conn", str(connectivity), "--order", order,
                *morph, "--device", "cpu", "-o", out, "--quiet")
        check(r.returncode == 0, f"{what} --order {order}: exit {r.returncode}: {r.stderr.strip()}")
        files = [os.path.join(out, f) for f in ("labels.nii.gz", "components.csv", "summary.json")]
        check(all(os.path.isfile(f) and os.path.getsize(f) > 0 for f in files), f"{what} --order {order}: outputs missing")
        if r.returncode != 0 or not all(os.path.isfile(f) for f in files):
            continue
        labels = zyx(files[0])
        summary = json.load(open(files[2]))
        check(labels.shape == hu.shape, f"{what}: labels shape {labels.shape}, CT {hu.shape}")
        if labels.shape != hu.shape:
            continue
        check(summary.get("morphology") == {"open_radius": open_radius, "close_radius": close_radius,
                                            "structuring_element": "ball", "per_slice": connectivity in (4, 8)},
              f"{what} --order {order}: summary.json morphology {summary.get('morphology')}")
        check(summary["components"] == want_n, f"{what} --order {order}: {summary['components']} components, oracle {want_n}")
        check(summary["foreground_voxels"] == int(want.sum()) == int((labels > 0).sum()),
              f"{what} --order {order}: foreground_voxels {summary['foreground_voxels']}, labels file "
              f"{int((labels > 0).sum())}, oracle {int(want.sum())}")
        check(np.array_equal(labels > 0, want), f"{what} --order {order}: the mask after morphology differs from scipy "
              f"in {int(((labels > 0) != want).sum())} voxels")
        if order == "matlab":
            check(same_partition(labels, want_xy), f"{what}: not the partition of scipy.ndimage.label")
            check(np.array_equal(labels, want_matlab), f"{what} --order matlab: numbering differs from scipy on (z, x, y)")
        else:
            check(np.array_equal(labels, want_xy), f"{what} --order matlab-xy: numbering differs from scipy's raster "
                  f"order in {int((labels != want_xy).sum())} voxels")
        got[order] = (labels, summary["foreground_voxels"])
    if "matlab" not in got or plain is None:
        return got.get("matlab")
    labels, foreground = got["matlab"]
    plain_labels, plain_foreground = plain
    if open_radius and not close_radius:
        check(not np.any((labels > 0) & ~(plain_labels > 0)), f"{what}: opening added voxels")
        check(foreground <= plain_foreground, f"{what}: foreground_voxels {foreground} > plain {plain_foreground}")
    if close_radius and not open_radius:
        inside = interior(hu.shape, close_radius, per_slice)
        check(not np.any((plain_labels > 0) & inside & ~(labels > 0)),
              f"{what}: closing removed voxels farther than {close_radius} from the faces")
        if not np.any(mask & ~inside):
            check(foreground >= plain_foreground, f"{what}: foreground_voxels {foreground} < plain {plain_foreground}")
    return got["matlab"]


def label_all(name, source, hu, threshold):
    settings = [(1, 0), (0, 1), (2, 0), (0, 2), (1, 2)]
    for connectivity in (26, 18, 6, 8, 4):
        plain = label_case(name, source, hu, threshold, connectivity, 0, 0, None)
        for open_radius, close_radius in settings:
            label_case(name, source, hu, threshold, connectivity, open_radius, close_radius, plain)


def write_mask(path, volume):
    """A (z, y, x) array as NIfTI: nibabel's data array is [x, y, z]."""
    nib.save(nib.Nifti1Image(np.asfortranarray(volume.transpose(2, 1, 0)), np.eye(4)), path)


def hand_mask(shape, margin, rng):
    """Balls, speckle, and lines along each axis, nonzero values 1..255, kept `margin` voxels off the faces."""
    nz, ny, nx = shape
    v = np.zeros(shape, np.uint8)
    g = np.indices(shape)
    for _ in range(7):
        c = [rng.uniform(margin, n - 1 - margin) for n in shape]
        r = rng.uniform(1.0, 3.2)
        v[((g[0] - c[0]) ** 2 + (g[1] - c[1]) ** 2 + (g[2] - c[2]) ** 2) <= r * r] = rng.integers(1, 256)
    v[rng.random(shape) < 0.12] = 1
    v[nz // 2, ny // 3, :] = 2            # a line along x, one voxel thick: opening removes it
    v[:, ny // 2, nx // 4] = 3            # along z
    v[nz // 3, :, nx // 2] = 200          # along y
    hole = (slice(nz // 2 - 1, nz // 2 + 2), slice(ny - 8, ny - 3), slice(nx - 8, nx - 3))
    v[hole] = 9                           # a block with a one-voxel hole: closing fills it
    v[nz // 2, ny - 6, nx - 6] = 0
    if margin:
        keep = np.zeros(shape, bool)
        keep[margin:nz - margin, margin:ny - margin, margin:nx - margin] = True
        v[~keep] = 0
    return v


rng = np.random.default_rng(2024)
# Phantom: labelled from its DICOM series; the oracle thresholds the same HU read back through NIfTI.
ct = os.path.join(work, "ct")
r = run("phantom", "-o", ct, "--size", "64x56x16", "--quiet")
check(r.returncode == 0, f"phantom: exit {r.returncode}: {r.stderr.strip()}")
r = run("convert", ct, os.path.join(work, "ct.nii.gz"), "--quiet")
check(r.returncode == 0, f"convert: exit {r.returncode}: {r.stderr.strip()}")
if not failures:
    hu = zyx(os.path.join(work, "ct.nii.gz"))
    check(hu.shape == (16, 56, 64), f"phantom HU shape {hu.shape}")
    label_all("phantom", ct, hu, 150)

for name, margin in (("clear", 3), ("touching", 0)):
    volume = hand_mask((11, 19, 23), margin, rng)
    path = os.path.join(work, f"{name}.nii.gz")
    write_mask(path, volume)
    if margin == 0:
        check(all(np.any(np.take(volume, i, axis=a)) for a in range(3) for i in (0, -1)), "touching mask misses a face")
    label_all(name, path, volume.astype(np.int32), 1)

# Usage errors leave nothing behind.
for arguments, pattern in ((["--open", "0"], "--open: 0 is outside 1..64"), (["--close", "65"], "--close: 65 is outside"),
                           (["--close", "11"], "radius 11 is outside 0..10 for a 3D element")):
    out = os.path.join(work, "refused")
    r = run("label", ct, "--threshold", "150", *arguments, "-o", out)
    check(r.returncode == 2 and pattern in r.stderr and r.stderr.count("\n") == 1 and not os.path.exists(out),
          f"{' '.join(arguments)}: exit {r.returncode} (want 2), stderr {r.stderr.strip()!r}, output left: {os.path.exists(out)}")

sys.exit(finish())
