"""G4 on a real series: `voxlabel cut` of the liver in dcmqi's 3-slice abdominal CT (../shared/test-data/dicom/
dcmqi_ct_3slice) against dcmqi's own liver segmentation (seg_examples/liver_seg.nrrd, same grid): Dice >= 0.95
with scripted seeds, and energy equal to the cut value, slice by slice (8) and in 3D (6, 26).
Seeds: object = the reference eroded by 8 pixels in each slice; background = the complement eroded by 8
pixels, on every 4th pixel of a diagonal lattice (strokes, not a fill). Skips (77) without the shared data.

usage: graphcut_cut_realdata.py VOXLABEL SHARED_TEST_DATA WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

import nibabel as nib  # noqa: E402
import numpy as np  # noqa: E402
from scipy import ndimage  # noqa: E402

voxlabel, shared, work = sys.argv[1], sys.argv[2], sys.argv[3]
series = os.path.join(shared, "dicom", "dcmqi_ct_3slice")
reference_nrrd = os.path.join(series, "seg_examples", "liver_seg.nrrd")
if not os.path.exists(reference_nrrd):
    print(f"SKIP: {series} is absent (the shared test data)")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(*args):
    return subprocess.run([voxlabel, *args], capture_output=True, text=True)


def zyx(path):
    return np.asarray(nib.load(path).dataobj).transpose(2, 1, 0)


ct_path, reference_path = os.path.join(work, "ct.nii.gz"), os.path.join(work, "liver.nii.gz")
check(run("convert", series, ct_path, "--quiet").returncode == 0, "convert of the series failed")
check(run("convert", reference_nrrd, reference_path, "--quiet").returncode == 0, "convert of liver_seg failed")
ct = nib.load(ct_path)
reference = zyx(reference_path) > 0
seeds = np.zeros(reference.shape, np.uint8)
lattice = np.indices(reference.shape[1:]).sum(0) % 4 == 0
for z in range(reference.shape[0]):
    seeds[z][ndimage.binary_erosion(reference[z], iterations=8)] = 1
    seeds[z][ndimage.binary_erosion(~reference[z], iterations=8) & lattice] = 2
seeds_path = os.path.join(work, "seeds.nii.gz")
nib.save(nib.Nifti1Image(np.asfortranarray(seeds.transpose(2, 1, 0)), ct.affine), seeds_path)

for connectivity in ("8", "6", "26"):
    out = os.path.join(work, "conn" + connectivity)
    result = run("cut", ct_path, "--seeds", seeds_path, "-o", out, "--conn", connectivity, "--device", "cpu")
    if not check(result.returncode == 0, f"conn {connectivity}: exit {result.returncode}: {result.stderr.strip()}"):
        continue
    labels = zyx(os.path.join(out, "labels.nii.gz")) > 0
    dice = 2.0 * (labels & reference).sum() / (labels.sum() + reference.sum())
    summary = json.load(open(os.path.join(out, "summary.json")))["result"]
    check(dice >= 0.95, f"conn {connectivity}: Dice {dice:.4f} against dcmqi's liver < 0.95")
    check(summary["energy"] == summary["cut_value"], f"conn {connectivity}: energy != cut value")
    print(f"liver, conn {connectivity}: Dice {dice:.4f}, energy {summary['energy']} = cut value "
          f"{summary['cut_value']}")
sys.exit(finish())
