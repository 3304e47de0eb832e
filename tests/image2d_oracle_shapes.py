"""Shape stage and 2D labels against OpenCV and scikit-image (issue 6, item 4; docs/stages2d.md S1-S5, M2).

Draws a mask with a few hundred components (disks, ellipses, rotated boxes, polygons with holes, lines,
single pixels, border-touching blobs), runs `voxlabel shapes` and `voxlabel color` on it, and checks:
  - labels.png partitions = cv2.connectedComponents (conn 4 and 8), up to a permutation;
  - area, bbox and centroid identical to cv2.connectedComponentsWithStats;
  - raw moments identical, central/normalised moments <= 1e-12 relative, Hu <= 1e-10 relative
    (<= 1e-15 absolute where |h| <= 1e-12) to cv2.moments(binaryImage=True) / cv2.HuMoments;
  - perimeters, orientation, eccentricity, axes, Euler number, extent <= 1e-9 of skimage regionprops;
  - convex_area = lattice points in the scipy ConvexHull of the pixel centres;
  - the contour histogram against a numpy re-implementation, JM = sqrt(2) * HISTCMP_BHATTACHARYYA.
usage: image2d_oracle_shapes.py VOXLABEL WORKDIR"""
import csv
import math
import os
import subprocess
import sys

import cv2
import numpy as np
from scipy.spatial import ConvexHull
from skimage.measure import regionprops

voxlabel, workdir = sys.argv[1], sys.argv[2]
os.makedirs(workdir, exist_ok=True)
rng = np.random.default_rng(20100)
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def close(a, b, rel, absolute=0.0):
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), absolute)


def draw_mask(height, width):
    mask = np.zeros((height, width), np.uint8)
    for _ in range(70):
        kind = rng.integers(0, 6)
        cx, cy = int(rng.integers(0, width)), int(rng.integers(0, height))
        if kind == 0:
            cv2.circle(mask, (cx, cy), int(rng.integers(2, 25)), 1, -1)
        elif kind == 1:
            cv2.ellipse(mask, (cx, cy), (int(rng.integers(3, 30)), int(rng.integers(2, 15))),
                        float(rng.uniform(0, 180)), 0, 360, 1, -1)
        elif kind == 2:
            box = cv2.boxPoints(((cx, cy), (float(rng.uniform(3, 40)), float(rng.uniform(3, 25))),
                                 float(rng.uniform(0, 90))))
            cv2.fillPoly(mask, [np.intp(box)], 1)
        elif kind == 3:
            points = np.array([[cx + rng.integers(-25, 25), cy + rng.integers(-25, 25)] for _ in range(5)])
            cv2.fillPoly(mask, [points.astype(np.int32)], 1)
            cv2.circle(mask, (cx, cy), int(rng.integers(1, 5)), 0, -1)  # a hole, sometimes
        elif kind == 4:
            cv2.line(mask, (cx, cy), (cx + int(rng.integers(-40, 40)), cy + int(rng.integers(-40, 40))), 1, 1)
        else:
            mask[cy, cx] = 1
    mask[rng.random(mask.shape) < 0.004] = 1  # scattered single pixels and pairs
    mask[0:6, 0:9] = 1  # border-touching corners
    mask[-4:, -7:] = 1
    return mask


def run(*args):
    result = subprocess.run([voxlabel, *args], capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout, result.stderr)
        sys.exit(1)


def read_rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def histogram_reference(component, cx, cy):
    padded = np.pad(component, 1)
    inner = padded[1:-1, 1:-1].astype(bool)
    neighbours = padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:]
    ys, xs = np.nonzero(inner & ~neighbours.astype(bool))
    d = np.sqrt((xs - cx) ** 2 + (ys - cy) ** 2)
    largest = d.max()
    bins = np.zeros(100) if largest == 0 else None
    if largest == 0:
        bins[0] = len(d)
    else:
        bins = np.bincount(np.minimum((d / largest * 100).astype(int), 99), minlength=100).astype(float)
    kernel = np.exp(-0.5 * np.arange(-3, 4) ** 2)
    kernel /= kernel.sum()
    smoothed = np.convolve(bins, kernel, mode="same")
    return smoothed / smoothed.sum()


def lattice_points_in_hull(ys, xs):
    points = np.column_stack([xs, ys]).astype(float)
    if len(points) == 1:
        return 1
    centred = points - points.mean(axis=0)
    if np.linalg.matrix_rank(centred, tol=1e-9) < 2:  # collinear: a digital segment
        span = points.max(axis=0) - points.min(axis=0)
        return math.gcd(int(span[0]), int(span[1])) + 1
    hull = ConvexHull(points)
    x0, y0 = points.min(axis=0)
    x1, y1 = points.max(axis=0)
    gx, gy = np.meshgrid(np.arange(x0, x1 + 1), np.arange(y0, y1 + 1))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    inside = np.all(grid @ hull.equations[:, :2].T + hull.equations[:, 2] <= 1e-9, axis=1)
    return int(inside.sum())


mask = draw_mask(384, 512)
cv2.imwrite(os.path.join(workdir, "mask.png"), mask * 255)
# The same mask as a colour image: every nonzero pixel passes an all-hue, V >= 1 window.
cv2.imwrite(os.path.join(workdir, "mask_rgb.png"), np.dstack([mask * 200] * 3))

for conn in (8, 4):
    csv_path = os.path.join(workdir, f"shapes{conn}.csv")
    run("shapes", os.path.join(workdir, "mask.png"), "-o", csv_path, "--conn", str(conn), "--match-ref", "0:1",
        "--device", "cpu", "--force")
    rows = read_rows(csv_path)
    count, cv_labels, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=conn, ltype=cv2.CV_32S)
    check(len(rows) == count - 1, f"conn {conn}: {len(rows)} rows, OpenCV {count - 1} components")
    print(f"conn {conn}: {len(rows)} components")

    out_dir = os.path.join(workdir, f"color{conn}")
    run("color", os.path.join(workdir, "mask_rgb.png"), "--mode", "opencv", "--hue-range", "0:179", "--smin", "0",
        "--vmin", "1", "--conn", str(conn), "--device", "cpu", "-o", out_dir, "--force")
    ours = cv2.imread(os.path.join(out_dir, "labels.png"), cv2.IMREAD_UNCHANGED).astype(np.int64)
    pairs = set(zip(ours[mask > 0].tolist(), cv_labels[mask > 0].tolist()))
    check(len(pairs) == count - 1 == len({p[0] for p in pairs}) == len({p[1] for p in pairs}),
          f"conn {conn}: labels.png is not a relabelling of cv2.connectedComponents")
    check(ours.max() == count - 1 and np.all((ours > 0) == (mask > 0)), f"conn {conn}: labels.png not 1..N on the mask")

    first_keys = []
    props = {p.label: p for p in regionprops(cv_labels)}
    reference_hist = None
    worst = {"hu": 0.0, "mu": 0.0}
    for row in rows:
        fx, fy = int(row["first_x"]), int(row["first_y"])
        first_keys.append(fx * mask.shape[0] + fy)
        k = int(cv_labels[fy, fx])
        label = int(row["label"])
        check(np.array_equal(ours == label, cv_labels == k), f"conn {conn} label {label}: labels.png differs")
        left, top, width, height, area = (int(v) for v in stats[k])
        got = [int(row[c]) for c in ("bbox_left", "bbox_top", "bbox_width", "bbox_height", "area")]
        check(got == [left, top, width, height, area], f"conn {conn} label {label}: stats {got} vs {stats[k]}")
        check(float(row["centroid_x"]) == centroids[k][0] and float(row["centroid_y"]) == centroids[k][1],
              f"conn {conn} label {label}: centroid differs")
        component = (cv_labels == k).astype(np.uint8)
        m = cv2.moments(component, binaryImage=True)
        for name in ("m00", "m10", "m01", "m20", "m11", "m02", "m30", "m21", "m12", "m03"):
            check(float(row[name]) == m[name], f"conn {conn} label {label}: {name} {row[name]} vs {m[name]}")
        for name in ("mu20", "mu11", "mu02", "mu30", "mu21", "mu12", "mu03", "nu20", "nu11", "nu02", "nu30", "nu21",
                     "nu12", "nu03"):
            ok = close(float(row[name]), m[name], 1e-12, 1e-15)
            check(ok, f"conn {conn} label {label}: {name} {row[name]} vs {m[name]}")
        hu = cv2.HuMoments(m).ravel()
        for i in range(7):
            a, b = float(row[f"hu{i + 1}"]), hu[i]
            if max(abs(a), abs(b)) > 1e-12:
                worst["hu"] = max(worst["hu"], abs(a - b) / max(abs(a), abs(b)))
            check(close(a, b, 1e-10, 1e-15), f"conn {conn} label {label}: hu{i + 1} {a} vs {b}")
        p = props[k]
        for ours_name, value, tolerance in (("perimeter_weighted", p.perimeter, 1e-9),
                                            ("perimeter_crofton", p.perimeter_crofton, 1e-9),
                                            ("orientation", p.orientation, 1e-9),
                                            ("eccentricity", p.eccentricity, 1e-7),
                                            ("major_axis", p.axis_major_length, 1e-9),
                                            ("minor_axis", p.axis_minor_length, 1e-7),
                                            ("extent", p.extent, 1e-12)):
            check(close(float(row[ours_name]), value, tolerance, 1e-7),
                  f"conn {conn} label {label}: {ours_name} {row[ours_name]} vs skimage {value}")
        check(int(row["euler_number"]) == p.euler_number,
              f"conn {conn} label {label}: euler {row['euler_number']} vs skimage {p.euler_number}")
        ys, xs = np.nonzero(component)
        check(int(row["convex_area"]) == lattice_points_in_hull(ys, xs),
              f"conn {conn} label {label}: convex_area {row['convex_area']} vs hull count")
        hist = np.array([float(row[f"hist_{i:03d}"]) for i in range(100)])
        want = histogram_reference(component, m["m10"] / m["m00"], m["m01"] / m["m00"])
        check(np.max(np.abs(hist - want)) <= 1e-12, f"conn {conn} label {label}: histogram differs")
        if reference_hist is None:
            reference_hist = hist
        jm = float(row["jm_reference"])
        check(close(jm, math.sqrt(np.sum((np.sqrt(hist) - np.sqrt(reference_hist)) ** 2)), 1e-12, 1e-15),
              f"conn {conn} label {label}: JM differs from its formula")
        cv_jm = math.sqrt(2) * cv2.compareHist(hist.astype(np.float32), reference_hist.astype(np.float32),
                                               cv2.HISTCMP_BHATTACHARYYA)
        check(abs(jm - cv_jm) <= 2e-6, f"conn {conn} label {label}: JM {jm} vs sqrt2*Bhattacharyya {cv_jm}")
    check(first_keys == sorted(first_keys), f"conn {conn}: rows are not in MATLAB order")
    print(f"conn {conn}: worst Hu relative difference to OpenCV {worst['hu']:.3g}")

for message in failures[:20]:
    print("FAIL:", message)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
