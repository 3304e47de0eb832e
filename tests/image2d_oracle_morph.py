"""Morphology against OpenCV (cv2.erode/dilate, BORDER_CONSTANT 0) and scipy.ndimage (border_value 0),
2D and 3D, every operation, box/cross/ball radius 1..3 and the thesis pair, random masks of density
0.1..0.9 including 1xN and Nx1 (docs/stages2d.md M1). Also the HSV conversion against cv2.cvtColor on all
2^24 RGB triples (COLOR_RGB2HSV and COLOR_RGB2HSV_FULL).
usage: image2d_oracle_morph.py IMAGE2D_TOOL WORKDIR"""
import os
import subprocess
import sys

import cv2
import numpy as np
from scipy import ndimage

tool, workdir = sys.argv[1], sys.argv[2]
os.makedirs(workdir, exist_ok=True)
rng = np.random.default_rng(2010)
failures = []


def element(shape, radius, ndim):
    grid = np.indices((2 * radius + 1,) * ndim) - radius
    if shape == "box":
        return np.ones((2 * radius + 1,) * ndim, bool)
    if shape == "cross":
        return (np.count_nonzero(grid, axis=0) <= 1)
    return (grid ** 2).sum(axis=0) <= radius * radius


def ours(op, shape, radius, per_slice, volume):
    nz, ny, nx = volume.shape
    source, target = os.path.join(workdir, "in.raw"), os.path.join(workdir, "out.raw")
    volume.astype(np.uint8).tofile(source)
    subprocess.run([tool, "morph", op, shape, str(radius), str(per_slice), str(nx), str(ny), str(nz), source, target,
                    "cpu"], check=True)
    return np.fromfile(target, np.uint8).reshape(volume.shape)


def opencv(op, kernel_erode, kernel_dilate, image):
    def erode(x):
        return cv2.erode(x, kernel_erode.astype(np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)

    def dilate(x):
        return cv2.dilate(x, kernel_dilate.astype(np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)
    steps = {"erode": [erode], "dilate": [dilate], "open": [erode, dilate], "close": [dilate, erode]}[op]
    for step in steps:
        image = step(image)
    return image


def scipy_op(op, footprint_erode, footprint_dilate, volume):
    def erode(x):
        return ndimage.binary_erosion(x, footprint_erode, border_value=0)

    def dilate(x):
        return ndimage.binary_dilation(x, footprint_dilate, border_value=0)
    steps = {"erode": [erode], "dilate": [dilate], "open": [erode, dilate], "close": [dilate, erode]}[op]
    for step in steps:
        volume = step(volume)
    return volume.astype(np.uint8)


cases = 0
for shape2d in ((48, 64), (1, 40), (40, 1), (61, 97)):
    for density in (0.1, 0.5, 0.9):
        image = (rng.random(shape2d) < density).astype(np.uint8)
        for op in ("erode", "dilate", "open", "close"):
            configurations = [(s, r) for s in ("box", "cross", "ball") for r in (1, 2, 3)] + [("thesis", 0)]
            for shape, radius in configurations:
                if shape == "thesis":
                    kernel_erode, kernel_dilate = element("cross", 2, 2), element("cross", 1, 2)
                else:
                    kernel_erode = kernel_dilate = element(shape, radius, 2)
                got = ours(op, shape, radius, 1, image[None])[0]
                want_cv = opencv(op, kernel_erode, kernel_dilate, image)
                want_scipy = scipy_op(op, kernel_erode, kernel_dilate, image.astype(bool))
                cases += 1
                if not np.array_equal(got, want_cv) or not np.array_equal(got, want_scipy):
                    failures.append(f"2D {shape2d} density {density} {op} {shape} r={radius}")

for shape3d in ((5, 13, 7), (9, 20, 18)):
    for density in (0.2, 0.6, 0.9):
        volume = (rng.random(shape3d) < density).astype(np.uint8)
        for op in ("erode", "dilate", "open", "close"):
            for shape in ("box", "cross", "ball"):
                for radius in (1, 2):
                    footprint = element(shape, radius, 3)
                    got = ours(op, shape, radius, 0, volume)
                    want = scipy_op(op, footprint, footprint, volume.astype(bool))
                    cases += 1
                    if not np.array_equal(got, want):
                        failures.append(f"3D {shape3d} density {density} {op} {shape} r={radius}")
print(f"morphology: {cases} cases, {len(failures)} failures")

all_rgb = np.arange(1 << 24, dtype=np.uint32)
image = np.stack([(all_rgb >> 16) & 255, (all_rgb >> 8) & 255, all_rgb & 255], axis=-1).astype(np.uint8)
image = image.reshape(4096, 4096, 3)
for mode, code in (("opencv", cv2.COLOR_RGB2HSV), ("opencv-full", cv2.COLOR_RGB2HSV_FULL)):
    path = os.path.join(workdir, "hsv.raw")
    subprocess.run([tool, "hsv", mode, path], check=True)
    got = np.fromfile(path, np.uint8).reshape(4096, 4096, 3)
    want = cv2.cvtColor(image, code)
    differing = int(np.count_nonzero(np.any(got != want, axis=-1)))
    print(f"hsv {mode}: {differing} of 16777216 triples differ from cv2.cvtColor")
    if differing:
        failures.append(f"hsv {mode}: {differing} triples differ")
    os.remove(path)

for message in failures[:20]:
    print("FAIL:", message)
sys.exit(1 if failures else 0)
