"""Per-slice 2D label ORDER against Octave bwlabeln (conn 6 for 4-connected, 18 for 8-connected, on one
slice; DESIGN §4): labels.png of `voxlabel color` must equal bwlabeln exactly, and on a multi-slice stack
`voxlabel shapes` must number each slice's components 1..N in bwlabeln order (first pixel of label k =
find(L == k, 1) of bwlabeln on that slice). Skips (77) when octave-cli or its image package is missing.
usage: image2d_oracle_order.py VOXLABEL WORKDIR"""
import csv
import os
import shutil
import subprocess
import sys

import cv2
import numpy as np
import scipy.io

voxlabel, workdir = sys.argv[1], sys.argv[2]
os.makedirs(workdir, exist_ok=True)
if not shutil.which("octave-cli"):
    print("SKIP: octave-cli not found")
    sys.exit(77)
rng = np.random.default_rng(6)
failures = []

images = [(rng.random((37, 53)) < p).astype(np.uint8) for p in (0.3, 0.5, 0.65)]
images += [(rng.random((1, 60)) < 0.5).astype(np.uint8), (rng.random((60, 1)) < 0.5).astype(np.uint8)]
stack = (rng.random((29, 41, 4)) < 0.45).astype(np.uint8)  # rows, columns, slices: V(y, x, z)
stack[:, :, 2] = 0  # an empty slice in the middle

names = []
for index, image in enumerate(images):
    name = os.path.join(workdir, f"mask{index}")
    cv2.imwrite(name + ".png", image * 255)
    cv2.imwrite(name + "_rgb.png", np.dstack([image * 255] * 3))
    names.append(name)
scipy.io.savemat(os.path.join(workdir, "stack.mat"), {"V": stack})

script = ["pkg load image"]
for name in names:
    for octave_conn in (6, 18):
        script.append(f"L = bwlabeln(imread('{name}.png') > 0, {octave_conn}); "
                      f"save('-v7', '{name}_oct{octave_conn}.mat', 'L');")
script.append(f"S = load('{workdir}/stack.mat'); V = S.V > 0; F = {{}};")
for octave_conn in (6, 18):
    script.append(f"F = zeros(0, 4); for z = 1:size(V, 3), L = bwlabeln(V(:, :, z), {octave_conn}); "
                  f"for k = 1:max(L(:)), [r, c] = find(L == k, 1); F(end + 1, :) = [z - 1, k, c - 1, r - 1]; end; end; "
                  f"save('-v7', '{workdir}/stack_oct{octave_conn}.mat', 'F');")
result = subprocess.run(["octave-cli", "--no-gui", "-q", "--eval", "\n".join(script)], capture_output=True,
                        text=True)
if result.returncode != 0:
    if "image" in result.stderr and "package" in result.stderr:
        print("SKIP: Octave image package missing")
        sys.exit(77)
    print(result.stderr)
    sys.exit(1)

for name in names:
    for conn, octave_conn in ((4, 6), (8, 18)):
        out = name + f"_c{conn}"
        subprocess.run([voxlabel, "color", name + "_rgb.png", "--mode", "opencv", "--hue-range", "0:179", "--smin",
                        "0", "--vmin", "1", "--conn", str(conn), "--device", "cpu", "--force", "-o", out], check=True,
                       capture_output=True)
        ours = cv2.imread(os.path.join(out, "labels.png"), cv2.IMREAD_UNCHANGED).astype(np.int64)
        theirs = scipy.io.loadmat(name + f"_oct{octave_conn}.mat")["L"].astype(np.int64).reshape(ours.shape)
        if not np.array_equal(ours, theirs):
            failures.append(f"{os.path.basename(name)} conn {conn}: labels differ from bwlabeln(.., {octave_conn})")
        print(f"{os.path.basename(name)} {ours.shape} conn {conn}: {ours.max()} labels, "
              f"{'identical' if np.array_equal(ours, theirs) else 'DIFFERENT'}")

for conn, octave_conn in ((4, 6), (8, 18)):
    csv_path = os.path.join(workdir, f"stack{conn}.csv")
    subprocess.run([voxlabel, "shapes", os.path.join(workdir, "stack.mat"), "--conn", str(conn), "--device", "cpu",
                    "--force", "-o", csv_path], check=True, capture_output=True)
    with open(csv_path) as handle:
        ours = [[int(r["slice"]), int(r["label"]), int(r["first_x"]), int(r["first_y"])] for r in csv.DictReader(handle)]
    theirs = scipy.io.loadmat(os.path.join(workdir, f"stack_oct{octave_conn}.mat"))["F"].astype(int).tolist()
    if ours != theirs:
        failures.append(f"stack conn {conn}: per-slice numbering differs from bwlabeln per slice")
    print(f"stack 41x29x4 conn {conn}: {len(ours)} rows, {'identical' if ours == theirs else 'DIFFERENT'}")

for message in failures:
    print("FAIL:", message)
sys.exit(1 if failures else 0)
