"""Irregular stacks made from a phantom series with pydicom: gaps, duplicate positions (identical copies
and different images), gantry tilt (shear) and variable spacing, through `voxlabel convert` with each
--on-irregular policy. Resampling is checked exactly on a tilt of one whole pixel per slice, where the
un-sheared grid must hold each native slice shifted by k pixels.
usage: dicom_irregular.py VOXLABEL WORK_DIR"""
import glob
import os
import shutil
import subprocess
import sys

import nibabel
import numpy as np
import pydicom
from pydicom.uid import generate_uid

from test_check import check, finish

cli, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
base = os.path.join(work, "base")
subprocess.run([cli, "phantom", "-o", base, "--size", "40x32x10", "--spacing", "2,3", "--quiet"], check=True)



def variant(name, edit):
    """Copies the base series and lets `edit(datasets)` change/add/remove datasets (list of (name, ds))."""
    directory = os.path.join(work, name)
    os.makedirs(directory)
    datasets = [(os.path.basename(p), pydicom.dcmread(p)) for p in sorted(glob.glob(os.path.join(base, "*.dcm")))]
    datasets = edit(datasets)
    for file_name, ds in datasets:
        ds.save_as(os.path.join(directory, file_name))
    return directory


def convert(directory, policy=None):
    out = os.path.join(work, os.path.basename(directory) + f"_{policy}.nii")
    arguments = [cli, "convert", directory, out, "--force"] + (["--on-irregular", policy] if policy else [])
    result = subprocess.run(arguments, capture_output=True, text=True)
    return result, (nibabel.load(out) if result.returncode == 0 else None)


def expect(directory, policy, code, text, slices=None):
    result, image = convert(directory, policy)
    ok = result.returncode == code and text in result.stderr
    check(ok, f"{os.path.basename(directory)} --on-irregular {policy}: exit {result.returncode} (want {code}), "
              f"'{text}' in: {result.stderr.strip()}")
    if image is not None and slices is not None:
        check(image.shape[2] == slices, f"{os.path.basename(directory)} {policy}: {image.shape[2]} slices, want {slices}")
    return image


# Gap: slice 5 missing.
gap = variant("gap", lambda d: d[:5] + d[6:])
expect(gap, None, 3, "gap")
expect(gap, "error", 3, "gap")
expect(gap, "warn", 0, "gap", slices=9)
resampled = expect(gap, "resample", 0, "resampled", slices=10)
if resampled is not None:
    check(abs(resampled.header.get_zooms()[2] - 3.0) < 1e-4, f"gap resample: z spacing {resampled.header.get_zooms()}")

# Identical copy of a file: dropped silently, a regular stack remains.
def copy_slice(d):
    return d + [("copy.dcm", pydicom.dcmread(os.path.join(base, d[3][0])))]
copies = variant("copies", copy_slice)
expect(copies, None, 0, "identical copies", slices=10)

# A different image at the same position (a second phase): an error unless told otherwise.
def second_phase(d):
    ds = pydicom.dcmread(os.path.join(base, d[3][0]))
    ds.SOPInstanceUID = generate_uid()
    ds.InstanceNumber = 99
    return d + [("phase.dcm", ds)]
phases = variant("phases", second_phase)
expect(phases, None, 3, "share a slice position")
expect(phases, "warn", 0, "share a slice position", slices=10)

# Gantry tilt of exactly one pixel (2 mm along y) per 3 mm slice: sheared by atan(2/3) = 33.69 degrees.
def tilt(d):
    for k, (_, ds) in enumerate(d):
        ipp = [float(v) for v in ds.ImagePositionPatient]
        ds.ImagePositionPatient = [ipp[0], ipp[1] + 2.0 * k, ipp[2]]
    return d
tilted = variant("tilt", tilt)
native = expect(tilted, "warn", 0, "33.690 degrees", slices=10)
expect(tilted, "error", 3, "gantry tilt")
flat = expect(tilted, "resample", 0, "resampled", slices=10)
# The default NIfTI output is deskewed (ITK rejects a sheared sform): the resampled grid, and the same voxels
# wherever the shifted slices reach (outside, the volume's minimum instead of the padding fill).
deskewed = expect(tilted, None, 0, "resampled onto the un-sheared grid", slices=10)
if deskewed is not None and flat is not None:
    check(np.allclose(deskewed.affine, flat.affine, atol=1e-6), "default deskew: not the resampled grid")
    d, f = np.asarray(deskewed.dataobj), np.asarray(flat.dataobj)
    worst = max(int(np.abs(d[:, k:, k].astype(int) - f[:, k:, k]).max()) for k in range(10))
    check(worst == 0, f"default deskew differs from --on-irregular resample by up to {worst} HU")
if native is not None and flat is not None:
    a = np.asarray(native.dataobj)
    b = np.asarray(flat.dataobj)
    direction = flat.affine[:3, :3] / np.linalg.norm(flat.affine[:3, :3], axis=0)
    check(np.allclose(direction.T @ direction, np.eye(3), atol=1e-9), "resampled grid is not orthogonal")
    # Output voxel (i, j, k) is native voxel (i, j - k, k): slice k moved k pixels along +y.
    worst = 0
    for k in range(10):
        expected = np.full(a[:, :, k].shape, -1024, a.dtype)
        expected[:, k:] = a[:, :a.shape[1] - k, k]
        worst = max(worst, int(np.abs(expected.astype(int) - b[:, :, k]).max()))
    check(worst == 0, f"tilt resample differs from the shifted native slices by up to {worst} HU")
    # Both grids put voxel (0, 0, 0) at the first slice's position.
    check(np.allclose(native.affine[:, 3], flat.affine[:, 3], atol=1e-6), "resample moved the origin")

# Variable spacing (no gap): 3 mm steps with every other one 3.6 mm.
def variable(d):
    z = 0.0
    for k, (_, ds) in enumerate(d):
        ipp = [float(v) for v in ds.ImagePositionPatient]
        if k == 0:
            z = ipp[2]
        ds.ImagePositionPatient = [ipp[0], ipp[1], z]
        z += 3.6 if k % 2 else 3.0
    return d
varying = variable_dir = variant("variable", variable)
expect(varying, None, 0, "variable slice spacing", slices=10)
expect(varying, "error", 3, "variable slice spacing")
even = expect(varying, "resample", 0, "resampled")
if even is not None:
    check(abs(even.header.get_zooms()[2] - 3.3) < 1e-4 or abs(even.header.get_zooms()[2] - 3.0) < 1e-4,
          f"variable resample spacing {even.header.get_zooms()}")

# Every image at one position: never a volume.
def one_position(d):
    for k, (_, ds) in enumerate(d):
        ds.ImagePositionPatient = [float(v) for v in d[0][1].ImagePositionPatient]
    return d
expect(variant("one_position", one_position), "warn", 3, "same position")

sys.exit(finish())
