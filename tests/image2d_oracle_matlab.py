#!/usr/bin/env python3
"""`voxlabel shapes --matlab` against Octave's regionprops (octave-image), the MATLAB conventions of issue 19.

A mask with ellipses at many angles, thin and diagonal lines, rectangles with holes, discs, single pixels
and random blobs is labelled by Octave's bwlabeln with an 8-connected mask and measured by regionprops;
components are paired by area and centroid. Checked, component by component:
  Area, BoundingBox, EulerNumber exactly; Centroid, MajorAxisLength, MinorAxisLength, Eccentricity,
  EquivDiameter, Extent, Perimeter within 1e-9; Orientation within 1e-7 degrees (90 and -90 are one angle);
  ConvexArea within 2 % + 4 pixels and Solidity accordingly (Octave's poly2mask rounds boundary sub-pixels
  its own way: docs/stages2d.md).
usage: image2d_oracle_matlab.py VOXLABEL WORKDIR   (exit 77 without octave)"""
import csv
import os
import shutil
import subprocess
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

OCTAVE_SCRIPT = r"""
pkg load image
BW = imread('%s') > 0;
L = bwlabeln(BW, true(3));
p = regionprops(L, 'Area', 'Centroid', 'BoundingBox', 'MajorAxisLength', 'MinorAxisLength', 'Eccentricity', ...
                'Orientation', 'ConvexArea', 'EulerNumber', 'EquivDiameter', 'Solidity', 'Extent', 'Perimeter');
f = fopen('%s', 'w');
for k = 1:numel(p)
  fprintf(f, '%%.17g ', p(k).Area, p(k).Centroid, p(k).BoundingBox, p(k).MajorAxisLength, p(k).MinorAxisLength, ...
          p(k).Eccentricity, p(k).Orientation, p(k).ConvexArea, p(k).EulerNumber, p(k).EquivDiameter, ...
          p(k).Solidity, p(k).Extent, p(k).Perimeter);
  fprintf(f, '\n');
end
fclose(f);
"""
NAMES = ["Area", "Centroid_1", "Centroid_2", "BoundingBox_1", "BoundingBox_2", "BoundingBox_3", "BoundingBox_4",
         "MajorAxisLength", "MinorAxisLength", "Eccentricity", "Orientation", "ConvexArea", "EulerNumber",
         "EquivDiameter", "Solidity", "Extent", "Perimeter"]


def draw(rng):
    mask = np.zeros((220, 300), np.uint8)
    for i in range(12):  # ellipses at 15-degree steps
        cv2.ellipse(mask, (25 + 45 * (i % 6), 25 + 45 * (i // 6)), (18, 7 + i % 4), 15 * i, 0, 360, 255, -1)
    mask[110, 10:13] = 255                       # a 3-pixel line
    mask[115:118, 20] = 255                      # a vertical one
    cv2.line(mask, (30, 112), (60, 135), 255, 1)  # a thin diagonal
    mask[140:200, 10:90] = 255                   # a rectangle with a hole
    mask[155:185, 30:70] = 0
    mask[150:160, 100:160] = 255                 # with two holes
    mask[152:158, 105:115] = 0
    mask[152:158, 140:150] = 0
    cv2.circle(mask, (200, 150), 20, 255, -1)
    mask[5, 290] = 255                           # single pixels
    mask[215, 0] = 255
    for _ in range(25):                          # random blobs
        y, x = rng.integers(100, 215), rng.integers(230, 295)
        mask[y:y + rng.integers(1, 6), x:x + rng.integers(1, 6)] = 255
    blobs = (rng.random((40, 60)) < 0.45).astype(np.uint8) * 255
    mask[170:210, 160:220] = blobs
    return mask


def main():
    voxlabel, workdir = sys.argv[1], sys.argv[2]
    if not shutil.which("octave"):
        print("image2d_oracle_matlab: octave not installed: skipped")
        return 77
    os.makedirs(workdir, exist_ok=True)
    mask_path = os.path.join(workdir, "mask.png")
    cv2.imwrite(mask_path, draw(np.random.default_rng(19)))
    ours_path = os.path.join(workdir, "ours.csv")
    subprocess.run([voxlabel, "shapes", mask_path, "--matlab", "--force", "-o", ours_path], check=True,
                   stdout=subprocess.DEVNULL)
    theirs_path = os.path.join(workdir, "octave.txt")
    script = os.path.join(workdir, "oracle.m")
    with open(script, "w") as f:
        f.write(OCTAVE_SCRIPT % (mask_path, theirs_path))
    subprocess.run(["octave", "--no-gui", "--quiet", script], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    theirs = np.loadtxt(theirs_path, ndmin=2)
    with open(ours_path, newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == len(theirs), f"{len(rows)} components, Octave {len(theirs)}")
    worst = {}
    # Components are matched by area and centroid, so that the comparison does not depend on label order.
    octave = {(int(t[0]), round(t[1], 6), round(t[2], 6)): dict(zip(NAMES, t)) for t in theirs}
    for row in rows:
        o = {name: float(row[name]) if row[name] != "" else float("nan") for name in NAMES}
        t = octave.get((int(o["Area"]), round(o["Centroid_1"], 6), round(o["Centroid_2"], 6)))
        if not check(t is not None, f"label {row['Label']}: no Octave component of area {o['Area']} at "
                                    f"({o['Centroid_1']}, {o['Centroid_2']})"):
            continue
        label = row["Label"]
        for name in ("Area", "BoundingBox_1", "BoundingBox_2", "BoundingBox_3", "BoundingBox_4", "EulerNumber"):
            check(o[name] == t[name], f"label {label}: {name} {o[name]} vs Octave {t[name]}")
        for name in ("Centroid_1", "Centroid_2", "MajorAxisLength", "MinorAxisLength", "Eccentricity", "EquivDiameter",
                     "Extent", "Perimeter"):
            error = abs(o[name] - t[name])
            worst[name] = max(worst.get(name, 0), error)
            check(error <= 1e-9 * max(1, abs(t[name])), f"label {label}: {name} {o[name]} vs Octave {t[name]}")
        angle = abs(o["Orientation"] - t["Orientation"])
        angle = min(angle, abs(angle - 180))
        check(angle <= 1e-7, f"label {label}: Orientation {o['Orientation']} vs Octave {t['Orientation']}")
        convex = abs(o["ConvexArea"] - t["ConvexArea"])
        worst["ConvexArea"] = max(worst.get("ConvexArea", 0), convex / t["ConvexArea"])
        check(convex <= 0.02 * t["ConvexArea"] + 4,
              f"label {label}: ConvexArea {o['ConvexArea']} vs Octave {t['ConvexArea']}")
        check(abs(o["Solidity"] - o["Area"] / o["ConvexArea"]) < 1e-12, f"label {label}: Solidity")
    print("image2d_oracle_matlab: %d components; largest differences %s" %
          (len(rows), ", ".join(f"{k} {v:.2g}" for k, v in sorted(worst.items()))))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
