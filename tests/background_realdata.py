"""`voxlabel background` on a real multi-frame DICOM (pydicom-data's emri_small.dcm, 10 MR frames; also its RLE and
JPEG-LS copies): the foreground equals OpenCV's BackgroundSubtractorMOG2 on the same frames read by pydicom and
mapped to 8 bit as voxlabel documents (sequence min..max to 0..255, round half up), on >= 99.9 % of pixels;
the compressed copies give the same foreground. Skips (77) without the shared data, pydicom or OpenCV.

usage: background_realdata.py VOXLABEL SHARED_TEST_DATA WORKDIR"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

try:
    import cv2
    import nibabel as nib
    import numpy as np
    import pydicom
except ImportError as error:
    print(f"SKIP: {error}")
    sys.exit(77)

voxlabel, shared, work = sys.argv[1], sys.argv[2], sys.argv[3]
folder = os.path.join(shared, "dicom", "multiframe")
source = os.path.join(folder, "emri_small.dcm")
if not os.path.exists(source):
    print(f"SKIP: {source} is absent (the shared test data)")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

dataset = pydicom.dcmread(source)
values = dataset.pixel_array.astype(np.float64) * float(getattr(dataset, "RescaleSlope", 1)) + \
    float(getattr(dataset, "RescaleIntercept", 0))
low, high = values.min(), values.max()
frames = np.floor((values - low) * (255.0 / (high - low)) + 0.5).astype(np.uint8)
model = cv2.createBackgroundSubtractorMOG2(history=500, varThreshold=16, detectShadows=False)
opencv = np.stack([model.apply(frame) for frame in frames]) > 0

masks = {}
for name in ("emri_small", "emri_small_RLE", "emri_small_jpeg_ls_lossless"):
    out = os.path.join(work, name)
    result = subprocess.run([voxlabel, "background", os.path.join(folder, name + ".dcm"), "-o", out, "--device", "cpu",
                             "--quiet"], capture_output=True, text=True)
    if not check(result.returncode == 0, f"{name}: exit {result.returncode}: {result.stderr.strip()[-300:]}"):
        continue
    mask = np.asarray(nib.load(os.path.join(out, "foreground.nii.gz")).dataobj).transpose(2, 1, 0) > 0
    if not check(mask.shape == opencv.shape, f"{name}: foreground {mask.shape}, frames {opencv.shape}"):
        continue
    share = float((mask == opencv).mean())
    check(share >= 0.999, f"{name}: {100 * share:.4f} % agreement with OpenCV")
    print(f"{name}: {frames.shape[0]} frames, {100 * share:.4f} % agreement with OpenCV")
    masks[name] = mask
for name, mask in masks.items():
    check(np.array_equal(mask, masks["emri_small"]), f"{name}: differs from the uncompressed file")
sys.exit(finish())
