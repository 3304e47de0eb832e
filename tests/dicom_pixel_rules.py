"""Pixel rules on edited phantom slices (pydicom writes them; the expected HU are computed here):
signed 12-bit data with garbage above HighBit (mask + sign extension), a HighBit below 15 (shift),
per-slice fractional rescale (float32 output and a warning), PixelPaddingValue with the fill and with
--keep-padding. usage: dicom_pixel_rules.py VOXLABEL WORK_DIR"""
import glob
import os
import shutil
import subprocess
import sys

import nibabel
import numpy as np
import pydicom

from test_check import check, finish

cli, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
base = os.path.join(work, "base")
subprocess.run([cli, "phantom", "-o", base, "--size", "20x16x4", "--quiet"], check=True)
paths = sorted(glob.glob(os.path.join(base, "*.dcm")))
hu = np.stack([pydicom.dcmread(p).pixel_array.astype(int) - 1024 for p in paths])  # [k][row][col]
rng = np.random.default_rng(5)



def run(name, edit, *options):
    directory = os.path.join(work, name)
    os.makedirs(directory)
    for k, p in enumerate(paths):
        ds = pydicom.dcmread(p)
        edit(k, ds)
        ds.save_as(os.path.join(directory, os.path.basename(p)))
    out = os.path.join(work, name + ".nii")
    result = subprocess.run([cli, "convert", directory, out, *options], capture_output=True, text=True)
    check(result.returncode == 0, f"{name}: {result.stderr}")
    if result.returncode:
        return None, result.stderr
    return np.asarray(nibabel.load(out).dataobj).transpose(2, 1, 0), result.stderr


# Signed 12-bit with random garbage in bits 12..15: stored = (value & 0xFFF) | garbage << 12.
def signed12(k, ds):
    values = np.clip(hu[k], -2048, 2047)
    garbage = rng.integers(0, 16, values.shape)
    raw = ((values & 0xFFF) | (garbage << 12)).astype(np.uint16)
    ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 12, 11, 1
    ds.RescaleIntercept, ds.RescaleSlope = 0, 1
    ds.PixelData = raw.tobytes()
ours, _ = run("signed12_garbage", signed12)
if ours is not None:
    check(ours.dtype == np.int16 and np.array_equal(ours, np.clip(hu, -2048, 2047)), "signed 12-bit: HU differ")

# Stored bits in the middle of the word: BitsStored 12, HighBit 13 (shift 2), unsigned.
def shifted(k, ds):
    stored = hu[k] + 1024
    raw = ((stored << 2) | rng.integers(0, 4, stored.shape) | (rng.integers(0, 4, stored.shape) << 14)).astype(np.uint16)
    ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 12, 13, 0
    ds.PixelData = raw.tobytes()
ours, _ = run("high_bit_13", shifted)
if ours is not None:
    check(np.array_equal(ours, hu), "HighBit 13: HU differ")

# Per-slice fractional rescale: slice k has slope 0.5 + 0.25 k, intercept -1024 + 0.5 k.
def rescale(k, ds):
    ds.RescaleSlope, ds.RescaleIntercept = 0.5 + 0.25 * k, -1024 + 0.5 * k
ours, stderr = run("per_slice_rescale", rescale)
if ours is not None:
    expected = np.stack([(hu[k] + 1024) * (0.5 + 0.25 * k) + (-1024 + 0.5 * k) for k in range(len(paths))])
    check(ours.dtype == np.float32 and np.allclose(ours, expected, atol=1e-3), "per-slice rescale: HU differ")
    check("vary between slices" in stderr, f"per-slice rescale: no warning in {stderr}")

# PixelPaddingValue in stored units (unsigned 12-bit): the lowest stored value present is padding.
pad = int(hu.min() + 1024)
def padding(k, ds):
    ds.add_new(0x00280120, "US", pad)
ours, stderr = run("padding_fill", padding, "--padding-hu", "-3000")
if ours is not None:
    check(np.array_equal(ours, np.where(hu + 1024 == pad, -3000, hu)), "padding fill: HU differ")
    check("PixelPaddingValue" in stderr, f"padding: no note in {stderr}")
ours, _ = run("padding_keep", padding, "--keep-padding")
if ours is not None:
    check(np.array_equal(ours, hu), "--keep-padding: HU differ")

sys.exit(finish())
