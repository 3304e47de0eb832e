"""Oracle test of `voxlabel stats` against scipy.ndimage and numpy (and ITK / Octave when given).

usage: stats_oracle.py VOXLABEL WORKDIR [--itk ITK_ORACLE] [--octave]

Writes label and HU volumes as NIfTI (anisotropic spacing, an origin), runs `voxlabel stats --stats full --matlab`,
and checks every row against independent computations:
  scipy.ndimage: voxel counts, center_of_mass (plain and HU-weighted), find_objects, minimum, maximum, mean,
                 sum, variance, median;
  numpy:         border voxels, exposed faces, MATLAB EigenValues (population covariance + 1/12), extent,
                 positions through the NIfTI affine (RAS) turned into LPS;
  ITK (--itk):   LabelImageToStatisticsLabelMapFilter via tests/stats_itk_oracle.cxx: physical size, physical
                 centroid, bounding box, pixels on border, principal moments, elongation, flatness, min, max, mean,
                 sum, variance, centre of gravity, and the Crofton perimeter against our surface_area_crofton_mm2;
  Octave (--octave): regionprops Area, Centroid, BoundingBox against our --matlab columns.
"""
import csv
import os
import subprocess
import sys

import nibabel as nib
import numpy as np
from scipy import ndimage

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        if len(failures) <= 30:
            print("FAIL:", message, file=sys.stderr)


def close(a, b, rel=1e-9, abs_=1e-9):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(both_nan | (np.abs(a - b) <= abs_ + rel * np.abs(b))))


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    def value(text):
        return float(text) if text != "" else float("nan")
    return {name: np.array([value(r[name]) for r in rows]) for name in rows[0].keys()} if rows else {}


def save_nifti(path, array_zyx, spacing, origin):
    """array indexed [z, y, x] (x fastest in memory, as voxlabel); NIfTI wants data[x, y, z]."""
    affine = np.diag([spacing[0], spacing[1], spacing[2], 1.0])
    affine[:3, 3] = origin
    image = nib.Nifti1Image(np.ascontiguousarray(array_zyx.transpose(2, 1, 0)), affine)
    image.header.set_qform(affine, code=1)
    image.header.set_sform(affine, code=1)
    nib.save(image, path)


def lps_of(index_xyz, spacing, origin):
    """voxel (x, y, z) -> LPS mm for an axis-aligned RAS affine (NIfTI) read as LPS."""
    ras = np.asarray(origin) + np.asarray(spacing) * np.asarray(index_xyz)
    return np.array([-ras[0], -ras[1], ras[2]])


def blocky_labels(rng, shape, count):
    """Random labels with runs along x (and gaps: some labels never occur)."""
    flat = rng.integers(0, count + 1, size=int(np.prod(shape)))
    flat[rng.random(flat.size) < 0.3] = 0
    keep = rng.random(flat.size) < 0.6
    for i in range(1, flat.size):
        if keep[i]:
            flat[i] = flat[i - 1]
    return flat.reshape(shape)


def phantom_like(rng, shape):
    """A body ellipsoid with bright spheres and noise, thresholded and labelled at 26-connectivity."""
    nz, ny, nx = shape
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx].astype(float)
    body = ((x - nx / 2) / (0.45 * nx)) ** 2 + ((y - ny / 2) / (0.4 * ny)) ** 2 < 1
    hu = np.where(body, 40.0, -1000.0)
    for _ in range(12):
        c = rng.uniform([0.2 * nz, 0.3 * ny, 0.3 * nx], [0.8 * nz, 0.7 * ny, 0.7 * nx])
        r = rng.uniform(2, 7)
        hu[(z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2 < r * r] = rng.uniform(200, 1200)
    hu += rng.normal(0, 25, size=shape)
    hu = np.clip(np.round(hu), -1024, 3071).astype(np.int16)
    labels, n = ndimage.label(hu >= 90, structure=np.ones((3, 3, 3)))
    return labels, hu, n


def faces_of(mask):
    padded = np.pad(mask, 1)
    return int(sum(np.count_nonzero(np.diff(padded.astype(np.int8), axis=a)) for a in range(3)))


def check_case(name, voxlabel, workdir, labels, hu, spacing, origin, itk, octave):
    count = int(labels.max())
    spacing = tuple(float(np.float32(v)) for v in spacing)  # NIfTI stores float32
    origin = tuple(float(np.float32(v)) for v in origin)
    label_path = os.path.join(workdir, name + "_labels.nii.gz")
    hu_path = os.path.join(workdir, name + "_hu.nii.gz")
    out_path = os.path.join(workdir, name + ".csv")
    save_nifti(label_path, labels.astype(np.uint16 if count < 65536 else np.uint32), spacing, origin)
    save_nifti(hu_path, hu, spacing, origin)
    subprocess.run([voxlabel, "stats", label_path, "--intensity", hu_path, "--stats", "full", "--matlab",
                    "--device", "cpu", "--force", "--quiet", "-o", out_path], check=True)
    ours = read_csv(out_path)
    check(len(ours["label"]) == count, f"{name}: {len(ours['label'])} rows for {count} labels")
    index = np.arange(1, count + 1)
    ones = np.ones(labels.shape)
    voxels = ndimage.sum(ones, labels, index)
    present = voxels > 0
    check(np.array_equal(ours["voxels"], voxels), f"{name}: voxel counts")
    check(close(ours["volume_mm3"], voxels * np.prod(spacing)), f"{name}: volume_mm3")
    values = hu.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        centroid = np.array(ndimage.center_of_mass(ones, labels, index))[:, ::-1]  # (z,y,x) -> (x,y,z)
        weighted = np.array(ndimage.center_of_mass(values, labels, index))[:, ::-1]
    for axis, letter in enumerate("xyz"):
        check(close(ours["centroid_" + letter][present], centroid[present, axis]), f"{name}: centroid_{letter}")
        check(close(ours["Centroid_%d" % (axis + 1)][present], centroid[present, axis] + 1), f"{name}: Centroid_{axis + 1}")
        check(close(ours["weighted_centroid_" + letter][present], weighted[present, axis], rel=1e-8),
              f"{name}: weighted_centroid_{letter}")
        check(close(ours["WeightedCentroid_%d" % (axis + 1)][present], weighted[present, axis] + 1, rel=1e-8),
              f"{name}: WeightedCentroid_{axis + 1}")
    lps = np.array([lps_of(c, spacing, origin) for c in centroid[present]])
    for axis, letter in enumerate("lps"):
        check(close(ours["centroid_%s_mm" % letter][present], lps[:, axis], abs_=1e-7), f"{name}: centroid_{letter}_mm")
    objects = ndimage.find_objects(labels, max_label=count)
    for k in np.nonzero(present)[0]:
        box = objects[k][::-1]  # (x, y, z) slices
        for axis, letter in enumerate("xyz"):
            check(ours["bbox_min_" + letter][k] == box[axis].start and ours["bbox_max_" + letter][k] == box[axis].stop - 1,
                  f"{name}: label {k + 1} bbox {letter}")
            check(ours["BoundingBox_%d" % (axis + 1)][k] == box[axis].start + 0.5 and
                  ours["BoundingBox_%d" % (axis + 4)][k] == box[axis].stop - box[axis].start,
                  f"{name}: label {k + 1} BoundingBox")
    scipy_intensity = {
        "hu_min": ndimage.minimum(values, labels, index), "hu_max": ndimage.maximum(values, labels, index),
        "hu_mean": ndimage.mean(values, labels, index), "hu_sum": ndimage.sum(values, labels, index),
        "hu_median": ndimage.median(values, labels, index),
    }
    for column, expected in scipy_intensity.items():
        check(close(ours[column][present], np.asarray(expected)[present]), f"{name}: {column}")
    variance = np.asarray(ndimage.variance(values, labels, index))
    check(close(ours["hu_std"][present] ** 2, variance[present], rel=1e-8, abs_=1e-6), f"{name}: hu_std^2 vs variance")
    check(close(ours["MinIntensity"][present], np.asarray(scipy_intensity["hu_min"])[present]), f"{name}: MinIntensity")
    # numpy: border, faces, MATLAB eigenvalues, extent, equivalent diameter.
    nz, ny, nx = labels.shape
    for k in np.nonzero(present)[0]:
        mask = labels == k + 1
        zz, yy, xx = np.nonzero(mask)
        border = np.count_nonzero((xx == 0) | (xx == nx - 1) | (yy == 0) | (yy == ny - 1) | (zz == 0) | (zz == nz - 1))
        check(ours["border_voxels"][k] == border, f"{name}: label {k + 1} border_voxels")
        check(ours["surface_faces"][k] == faces_of(mask), f"{name}: label {k + 1} surface_faces")
        coords = np.stack([xx, yy, zz]).astype(float)
        matlab = np.cov(coords, bias=True) + np.eye(3) / 12 if coords.shape[1] > 1 else np.eye(3) / 12
        eig = np.sort(np.linalg.eigvalsh(matlab))[::-1]
        got = np.array([ours["EigenValues_%d" % i][k] for i in (1, 2, 3)])
        check(close(got, eig, rel=1e-8, abs_=1e-10), f"{name}: label {k + 1} EigenValues {got} vs {eig}")
        check(close([ours["PrincipalAxisLength_%d" % i][k] for i in (1, 2, 3)], 2 * np.sqrt(5 * eig), rel=1e-8),
              f"{name}: label {k + 1} PrincipalAxisLength")
        box_volume = np.prod([c.max() - c.min() + 1 for c in (xx, yy, zz)])
        check(close(ours["Extent"][k], len(xx) / box_volume), f"{name}: label {k + 1} Extent")
        check(close(ours["EquivDiameter"][k], (6 * len(xx) / np.pi) ** (1 / 3)), f"{name}: label {k + 1} EquivDiameter")
    checked = ["scipy (counts, centroids, bbox, min/max/mean/sum/variance/median, weighted centroid)",
               "numpy (border, faces, EigenValues, axis lengths, extent, EquivDiameter, LPS)"]
    if itk:
        check_itk(name, itk, label_path, hu_path, ours, isotropic=len(set(spacing)) == 1)
        checked.append("ITK")
    if octave:
        check_octave(name, workdir, labels, ours)
        checked.append("Octave regionprops")
    print(f"{name}: {count} labels ({int(present.sum())} present) checked against " + ", ".join(checked))


def check_itk(name, itk, label_path, hu_path, ours, isotropic):
    text = subprocess.run([itk, label_path, hu_path], check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(text.splitlines()))
    ratios = []
    for row in rows:
        k = int(row["label"]) - 1
        n = float(row["voxels"])
        check(ours["voxels"][k] == n, f"{name}/itk: label {k + 1} voxels")
        check(close(ours["volume_mm3"][k], float(row["physical_size"])), f"{name}/itk: label {k + 1} physical size")
        for axis, letter in enumerate("lps"):
            check(close(ours["centroid_%s_mm" % letter][k], float(row["centroid_%d" % axis]), abs_=1e-6),
                  f"{name}/itk: label {k + 1} centroid {letter}")
            check(close(ours["weighted_centroid_%s_mm" % letter][k], float(row["gravity_%d" % axis]), rel=1e-7, abs_=1e-6),
                  f"{name}/itk: label {k + 1} centre of gravity {letter}")
        for axis, letter in enumerate("xyz"):
            check(ours["bbox_min_" + letter][k] == float(row["bbox_min_%d" % axis]) and
                  ours["bbox_max_" + letter][k] == float(row["bbox_max_%d" % axis]), f"{name}/itk: label {k + 1} bbox")
        check(ours["border_voxels"][k] == float(row["border_voxels"]), f"{name}/itk: label {k + 1} border")
        itk_moments = sorted((float(row["moment_%d" % i]) for i in range(3)), reverse=True)
        check(close([ours["principal_moment_%d_mm2" % i][k] for i in (1, 2, 3)], itk_moments, rel=1e-7, abs_=1e-9),
              f"{name}/itk: label {k + 1} principal moments")
        if itk_moments[2] > 1e-9:  # both define flatness/elongation only for non-degenerate moments
            check(close(ours["elongation"][k], float(row["elongation"]), rel=1e-6), f"{name}/itk: label {k + 1} elongation")
            check(close(ours["flatness"][k], float(row["flatness"]), rel=1e-6), f"{name}/itk: label {k + 1} flatness")
        for column, itk_column in (("hu_min", "minimum"), ("hu_max", "maximum"), ("hu_mean", "mean"), ("hu_sum", "sum")):
            check(close(ours[column][k], float(row[itk_column])), f"{name}/itk: label {k + 1} {column}")
        if n > 1:  # ITK's variance divides by n - 1
            check(close(ours["hu_std"][k] ** 2 * n / (n - 1), float(row["variance"]), rel=1e-7, abs_=1e-6),
                  f"{name}/itk: label {k + 1} variance")
        if n >= 27:
            ratios.append(ours["surface_area_crofton_mm2"][k] / float(row["perimeter"]))
    if ratios:
        ratios = np.array(ratios)
        # Both are 13-direction Crofton estimates; on an isotropic grid they coincide. With anisotropic spacing
        # the direction weights differ (ours: solid angles of the physical directions) and irregular shapes
        # differ by up to ~20%; the ball case below checks both against the true area.
        if isotropic:
            check(close(ratios, 1, rel=1e-4), f"{name}/itk: surface_area_crofton_mm2 / ITK perimeter {ratios.min():.6f}..{ratios.max():.6f}")
        print(f"{name}/itk: surface_area_crofton_mm2 / ITK Perimeter over {len(ratios)} components of >= 27 voxels: "
              f"median {np.median(ratios):.4f}, range {ratios.min():.4f}..{ratios.max():.4f}")


def check_ball(voxlabel, workdir, itk):
    """A digital ball of radius 20 mm on an anisotropic grid: the Crofton area within 2% of 4 pi r^2, the
    face count about 1.5x (the mean of |n_x| + |n_y| + |n_z| over the sphere), MATLAB-style moments r^2/5."""
    radius, spacing = 20.0, (0.7, 0.8, 2.5)
    spacing = tuple(float(np.float32(v)) for v in spacing)
    sizes = [int(2 * radius / s) + 6 for s in spacing]
    axes = [(np.arange(n) - n / 2) * s for n, s in zip(sizes, spacing)]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    labels = (x * x + y * y + z * z <= radius * radius).astype(np.uint16)
    label_path = os.path.join(workdir, "ball_labels.nii.gz")
    hu_path = os.path.join(workdir, "ball_hu.nii.gz")
    out_path = os.path.join(workdir, "ball.csv")
    save_nifti(label_path, labels, spacing, (0.0, 0.0, 0.0))
    save_nifti(hu_path, labels.astype(np.int16), spacing, (0.0, 0.0, 0.0))
    subprocess.run([voxlabel, "stats", label_path, "--stats", "full", "--force", "--quiet", "-o", out_path], check=True)
    ours = read_csv(out_path)
    true_area = 4 * np.pi * radius * radius
    ratio = ours["surface_area_mm2"][0] / true_area
    faces = ours["surface_area_faces_mm2"][0] / true_area
    check(abs(ratio - 1) < 0.02, f"ball: surface_area_mm2 / 4 pi r^2 = {ratio:.4f}")
    check(1.4 < faces < 1.6, f"ball: surface_area_faces_mm2 / 4 pi r^2 = {faces:.4f}")
    check(abs(ours["sphericity"][0] - 1) < 0.03, f"ball: sphericity {ours['sphericity'][0]:.4f}")
    for i in (1, 2, 3):
        check(abs(ours["principal_moment_%d_mm2" % i][0] / (radius * radius / 5) - 1) < 0.02, f"ball: moment {i}")
    line = f"ball r=20 mm, spacing {spacing}: Crofton/true {ratio:.4f}, faces/true {faces:.4f}"
    if itk:
        text = subprocess.run([itk, label_path, hu_path], check=True, capture_output=True, text=True).stdout
        perimeter = float(list(csv.DictReader(text.splitlines()))[0]["perimeter"])
        check(abs(perimeter / true_area - 1) < 0.02, f"ball: ITK perimeter / 4 pi r^2 = {perimeter / true_area:.4f}")
        line += f", ITK Perimeter/true {perimeter / true_area:.4f}"
    print(line)


def check_octave(name, workdir, labels, ours):
    from scipy.io import savemat
    mat = os.path.join(workdir, name + "_octave.mat")
    out = os.path.join(workdir, name + "_octave.csv")
    # MATLAB's V(row, column, page) = voxlabel's (y, x, z): regionprops' x is the column, as ours.
    savemat(mat, {"V": labels.transpose(1, 2, 0).astype(np.double)})
    script = (f"pkg load image; load('{mat}'); s = regionprops(V, 'Area', 'Centroid', 'BoundingBox');"
              f"m = [[s.Area]' reshape([s.Centroid], 3, [])' reshape([s.BoundingBox], 6, [])'];"
              f"dlmwrite('{out}', m, 'precision', '%.17g');")
    subprocess.run(["octave", "--no-gui", "--quiet", "--eval", script], check=True)
    m = np.loadtxt(out, delimiter=",", ndmin=2)
    present = m[:, 0] > 0
    check(np.array_equal(ours["Volume"][: len(m)][present], m[present, 0]), f"{name}/octave: Area")
    for i in range(3):
        check(close(ours["Centroid_%d" % (i + 1)][: len(m)][present], m[present, 1 + i], rel=1e-12),
              f"{name}/octave: Centroid_{i + 1}")
    for i in range(6):
        check(close(ours["BoundingBox_%d" % (i + 1)][: len(m)][present], m[present, 4 + i], rel=1e-12),
              f"{name}/octave: BoundingBox_{i + 1}")


def main():
    voxlabel, workdir = sys.argv[1], sys.argv[2]
    itk = sys.argv[sys.argv.index("--itk") + 1] if "--itk" in sys.argv else None
    octave = "--octave" in sys.argv
    os.makedirs(workdir, exist_ok=True)
    rng = np.random.default_rng(20261129)
    labels = blocky_labels(rng, (14, 17, 23), 40)
    hu = rng.integers(-1024, 3000, size=labels.shape).astype(np.int16)
    check_case("random", voxlabel, workdir, labels, hu, (0.7, 0.8, 2.5), (10.0, -20.0, 30.0), itk, octave)
    labels, hu, _ = phantom_like(rng, (40, 80, 96))
    check_case("phantom", voxlabel, workdir, labels, hu, (0.78, 0.78, 1.25), (-37.0, -31.0, -100.0), itk, octave)
    labels = blocky_labels(rng, (9, 11, 13), 6)
    hu = (rng.normal(0, 300, size=labels.shape)).astype(np.float32)
    check_case("float_hu", voxlabel, workdir, labels, hu, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), itk, False)
    check_ball(voxlabel, workdir, itk)
    if failures:
        print(f"stats_oracle: {len(failures)} failures", file=sys.stderr)
        return 1
    print("stats_oracle: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
