#!/usr/bin/env python3
"""Oracles for the issue-19 columns of `voxlabel stats --stats full` (docs/csv.md).

Label volumes (balls, tilted ellipsoids, a shell with a cavity, a torus, an L, random blobs) are written as
MHA with anisotropic spacing, an origin and, in one case, a rotated direction matrix; then
  SimpleITK LabelShapeStatisticsImageFilter (Perimeter, Roundness, EquivalentEllipsoidDiameter,
      PerimeterOnBorder, PerimeterOnBorderRatio, FeretDiameter, OrientedBoundingBoxSize)
  scipy.spatial.ConvexHull (qhull) of the voxel corners in LPS mm: convex volume, Feret max (largest vertex
      distance), Feret min (smallest width across facets and, for small hulls, edge pairs) and the vertex set
      that --hull writes, computed independently
  skimage.measure.euler_number at connectivity 1 and 3 against --connectivity 6 and 26, and skimage
      regionprops (euler_number, feret_diameter_max within a voxel, convex_area under our hull volume)
  scipy.stats skew and kurtosis (population, excess) against hu_skewness and hu_kurtosis.
Usage: stats_shape_oracle.py VOXLABEL WORKDIR   (exit 77 when SimpleITK is missing)
"""
import csv
import os
import subprocess
import sys

import numpy as np

try:
    import SimpleITK as sitk
except ImportError:
    print("stats_shape_oracle: SimpleITK missing (scripts/oracle-venv build): skipped")
    sys.exit(77)
from scipy import ndimage, spatial, stats
from skimage import measure

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {name: np.array([float(r[name]) if r[name] != "" else np.nan for r in rows]) for name in rows[0]}


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def shapes(rng, shape):
    nz, ny, nx = shape
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx].astype(float)
    labels = np.zeros(shape, np.uint16)
    # 1: ball, 2: tilted ellipsoid, 3: shell with a cavity, 4: torus, 5: an L touching the border
    labels[(x - 12.3) ** 2 + (y - 12.1) ** 2 + ((z - 8.2) * 2) ** 2 < 64] = 1
    u = (x - 40) * 0.8 + (y - 14) * 0.6
    v = -(x - 40) * 0.6 + (y - 14) * 0.8
    labels[(u / 11) ** 2 + (v / 5) ** 2 + ((z - 8) / 2.5) ** 2 < 1] = 2
    shell = np.maximum(np.maximum(abs(x - 14), abs(y - 38)), abs(z - 9) * 2)
    labels[(shell <= 7) & (shell > 4)] = 3
    ring = (np.hypot(x - 40, y - 40) - 8) ** 2 + ((z - 8) * 2) ** 2
    labels[ring < 9] = 4
    labels[0:4, 50:54, 0:12] = 5
    labels[0:4, 44:54, 0:3] = 5
    # random blobs after them, labelled at 26-connectivity
    blobs = ndimage.binary_dilation(rng.random(shape) < 0.002, iterations=2) & (labels == 0)
    blobs &= (x > 2) & (y > 2)
    extra, n = ndimage.label(blobs, structure=np.ones((3, 3, 3)))
    labels[extra > 0] = extra[extra > 0] + 5
    return labels, 5 + n


def write_mha(path, array_zyx, spacing, origin, direction):
    image = sitk.GetImageFromArray(array_zyx)
    image.SetSpacing(spacing)
    image.SetOrigin(origin)
    image.SetDirection(direction)
    sitk.WriteImage(image, path)
    return image


def corner_points(mask, spacing, origin, direction):
    """The 8 corners of every voxel of mask, in LPS mm (index i maps to origin + D diag(s) (i - 1/2))."""
    zyx = np.argwhere(mask)
    xyz = zyx[:, ::-1].astype(float)
    offsets = np.array([[dx, dy, dz] for dz in (0, 1) for dy in (0, 1) for dx in (0, 1)], float) - 0.5
    corners = (xyz[:, None, :] + offsets[None, :, :]).reshape(-1, 3)
    a = np.asarray(direction).reshape(3, 3) * np.asarray(spacing)[None, :]
    return corners @ a.T + np.asarray(origin)


def check_case(name, voxlabel, workdir, labels, count, hu, spacing, origin, direction):
    label_path = os.path.join(workdir, name + "_labels.mha")
    hu_path = os.path.join(workdir, name + "_hu.mha")
    image = write_mha(label_path, labels, spacing, origin, direction)
    write_mha(hu_path, hu, spacing, origin, direction)
    results = {}
    hull_path = os.path.join(workdir, name + "_hulls.csv")
    for connectivity in (26, 6):
        out = os.path.join(workdir, f"{name}_{connectivity}.csv")
        subprocess.run([voxlabel, "stats", label_path, "--intensity", hu_path, "--stats", "full", "--connectivity",
                        str(connectivity), "--device", "cpu", "--force", "--quiet", "-o", out, "--hull", hull_path],
                       check=True)
        results[connectivity] = read_csv(out)
    hull_rows = np.loadtxt(hull_path, delimiter=",", skiprows=1, ndmin=2)
    ours = results[26]
    check(len(ours["label"]) == count, f"{name}: {len(ours['label'])} rows for {count} labels")

    shape = sitk.LabelShapeStatisticsImageFilter()
    shape.ComputePerimeterOn()
    shape.ComputeFeretDiameterOn()
    shape.ComputeOrientedBoundingBoxOn()
    shape.Execute(image)
    worst = {}

    def note(what, error):
        worst[what] = max(worst.get(what, 0.0), error)

    for label in shape.GetLabels():
        k = label - 1
        itk_perimeter = shape.GetPerimeter(label)
        note("perimeter", relative(ours["surface_area_itk_mm2"][k], itk_perimeter))
        note("roundness", relative(ours["roundness"][k], shape.GetRoundness(label)))
        note("perimeter_on_border", abs(ours["perimeter_on_border_mm2"][k] - shape.GetPerimeterOnBorder(label)))
        note("perimeter_on_border_ratio",
             abs(ours["perimeter_on_border_ratio"][k] - shape.GetPerimeterOnBorderRatio(label)))
        # ITK's moments of a flat or single-voxel component are rounding noise (1e-15), and so are its ellipsoid
        # and box: compare where every moment is real.
        moments = np.sort(shape.GetPrincipalMoments(label))
        solid = moments[0] > 1e-9
        if solid:
            mine = np.sort([ours[f"equivalent_ellipsoid_diameter_{i}_mm"][k] for i in (1, 2, 3)])
            theirs = np.sort(shape.GetEquivalentEllipsoidDiameter(label))
            note("ellipsoid", float(np.max(np.abs(mine - theirs) / theirs)))
        # ITK measures Feret between voxel centres, we between corners: ours exceeds it by at most a voxel diagonal.
        diagonal = float(np.linalg.norm(spacing))
        feret = ours["feret_max_mm"][k]
        check(shape.GetFeretDiameter(label) - 1e-9 <= feret <= shape.GetFeretDiameter(label) + diagonal + 1e-9,
              f"{name}: label {label} Feret {feret} vs ITK {shape.GetFeretDiameter(label)}")
        # The box follows the principal axes, which are arbitrary within a plane of equal moments: compare
        # only where the three moments are distinct.
        if solid and np.all(np.diff(moments) > 1e-6 * moments[-1]):
            mine = np.sort([ours[f"obb_size_{i}_mm"][k] for i in (1, 2, 3)])
            theirs = np.sort(shape.GetOrientedBoundingBoxSize(label))
            note("obb", float(np.max(np.abs(mine - theirs))))

        mask = labels == label
        points = corner_points(mask, spacing, origin, direction)
        hull = spatial.ConvexHull(points)
        note("convex_volume", relative(ours["convex_volume_mm3"][k], hull.volume))
        vertices = points[hull.vertices]
        # --hull: the vertex set (LPS mm) equals qhull's, and the MATLAB coordinates map to the same points.
        listed = hull_rows[hull_rows[:, 0] == label]
        mine = {tuple(np.round(v, 6)) for v in listed[:, 4:7]}
        check(mine == {tuple(np.round(v, 6)) for v in vertices} and len(mine) == len(listed),
              f"{name}: label {label} --hull lists {len(listed)} vertices, qhull {len(vertices)}")
        matlab = (listed[:, 1:4] - 1) @ (np.asarray(direction).reshape(3, 3) * np.asarray(spacing)).T + origin
        note("hull_matlab", float(np.abs(matlab - listed[:, 4:7]).max()))
        feret_max = spatial.distance.pdist(vertices).max()
        note("feret_max", relative(feret, feret_max))
        # Minimum width: across qhull's facets, and for hulls of at most 16 vertices also across every pair of hull edges.
        directions = [hull.equations[:, :3]]
        if len(hull.vertices) <= 16:
            edges = {tuple(sorted((s[i], s[(i + 1) % 3]))) for s in hull.simplices for i in range(3)}
            edges = np.array(sorted(edges))
            d = points[edges[:, 1]] - points[edges[:, 0]]
            i, j = np.triu_indices(len(d), 1)
            n = np.cross(d[i], d[j])
            length = np.linalg.norm(n, axis=1)
            directions.append(n[length > 1e-9] / length[length > 1e-9, None])
        n = np.concatenate(directions)
        projections = vertices @ n.T
        width = float((projections.max(axis=0) - projections.min(axis=0)).min())
        note("feret_min", relative(ours["feret_min_mm"][k], width))
        note("feret_min_ends", abs(np.linalg.norm([ours[f"feret_min_a_{a}_mm"][k] - ours[f"feret_min_b_{a}_mm"][k]
                                                   for a in "lps"]) - width))
        note("solidity", relative(ours["solidity"][k], mask.sum() * np.prod(spacing) / hull.volume))

        for connectivity, sk in ((26, 3), (6, 1)):
            euler = measure.euler_number(np.pad(mask, 1), connectivity=sk)
            check(results[connectivity]["euler_number"][k] == euler,
                  f"{name}: label {label} Euler {results[connectivity]['euler_number'][k]} vs skimage {euler} "
                  f"(connectivity {connectivity})")
        values = hu[mask].astype(float)
        if values.size > 1 and values.std() > 0:
            note("skewness", abs(ours["hu_skewness"][k] - stats.skew(values)))
            note("kurtosis", abs(ours["hu_kurtosis"][k] - stats.kurtosis(values)))

    limits = {"perimeter": 1e-9, "roundness": 1e-9, "perimeter_on_border": 1e-9, "perimeter_on_border_ratio": 1e-9,
              "ellipsoid": 1e-9, "obb": 1e-6, "convex_volume": 1e-9, "feret_max": 1e-10, "feret_min": 1e-9,
              "feret_min_ends": 1e-9, "hull_matlab": 1e-9, "solidity": 1e-9, "skewness": 1e-9, "kurtosis": 1e-9}
    for what, error in sorted(worst.items()):
        check(error <= limits[what], f"{name}: {what} differs by {error:.3g} (limit {limits[what]:g})")
    print(f"stats_shape_oracle: {name}: {len(shape.GetLabels())} labels; largest differences " +
          ", ".join(f"{w} {e:.2g}" for w, e in sorted(worst.items())))


def check_skimage(voxlabel, workdir, labels):
    """skimage regionprops (unit spacing): feret_diameter_max comes from marching cubes on its convex image,
    so it differs from the corner hull's by less than a voxel; area_convex counts the voxel centres inside a
    hull, while convex_volume_voxels is the corner hull's exact volume, which contains those voxels' centres."""
    path = os.path.join(workdir, "unit_labels.mha")
    write_mha(path, labels, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (1, 0, 0, 0, 1, 0, 0, 0, 1))
    out = os.path.join(workdir, "unit.csv")
    subprocess.run([voxlabel, "stats", path, "--columns", "label,voxels,feret_max_mm,convex_volume_voxels,euler_number",
                    "--force", "--quiet", "-o", out], check=True)
    ours = read_csv(out)
    for region in measure.regionprops(labels):
        k = region.label - 1
        try:  # skimage 0.19 cannot contour a convex image without background (a box-shaped component)
            feret = region.feret_diameter_max
        except ValueError:
            feret = None
        if feret is not None:
            check(abs(ours["feret_max_mm"][k] - feret) < 1.0,
                  f"skimage: label {region.label} Feret {ours['feret_max_mm'][k]} vs {feret}")
        check(region.convex_area <= ours["convex_volume_voxels"][k] + 1e-9,
              f"skimage: label {region.label} convex voxels {region.convex_area} > hull {ours['convex_volume_voxels'][k]}")
        check(ours["euler_number"][k] == region.euler_number,
              f"skimage: label {region.label} Euler {ours['euler_number'][k]} vs {region.euler_number}")


def main():
    voxlabel, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    rng = np.random.default_rng(19)
    labels, count = shapes(rng, (18, 56, 56))
    hu = np.clip(rng.normal(60, 200, size=labels.shape).round(), -1024, 3071).astype(np.int16)
    check_case("anisotropic", voxlabel, workdir, labels, count, hu, (0.7, 0.8, 2.5), (-30.0, 12.5, 40.0),
               (1, 0, 0, 0, 1, 0, 0, 0, 1))
    c, s = np.cos(0.5), np.sin(0.5)
    check_case("rotated", voxlabel, workdir, labels, count, hu, (0.45, 0.45, 1.0), (5.0, -7.0, 3.0),
               (c, -s, 0, s, c, 0, 0, 0, 1))
    check_skimage(voxlabel, workdir, labels)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
