"""A gantry-tilted CT (the Philips series of the shared data, sheared by 18.5 degrees) through `voxlabel label`
and `voxlabel convert` in every format with a geometry, read back by SimpleITK (ITK's readers, what 3D Slicer
uses) and by nibabel; the oracle is every slice's own ImagePositionPatient, read by pydicom:
  .nrrd/.mha keep the native sheared grid: the 4 corner voxels of every slice within 1e-3 mm of the IPP;
  .nii/.nii.gz are deskewed (ITK rejects a sheared sform): ITK and nibabel agree on every corner voxel
    within 1e-3 mm, the grid is orthonormal, every native slice's 4 corner pixels lie on its own output
    slice (within 1e-3 mm) at the in-plane index the shift predicts, and the labels overlay the native
    labels (Dice of the foreground >= 0.95 where the native voxel lands inside the grid);
  --on-irregular warn keeps the shear and says that ITK misplaces it; `info` prints one z step, explained;
  `seg` writes a SEG from the NRRD labels and from the deskewed NIfTI (each frame the labels at its CT image's
  pixels, read back by pydicom).
usage: dicom_tilt_itk.py VOXLABEL SHARED_DATA WORK_DIR   (exit 77 without the data, SimpleITK or nibabel)"""
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np

from test_check import check, finish

try:
    import nibabel
    import pydicom
    import SimpleITK as sitk
except ImportError as error:
    print(f"skipped: needs SimpleITK (scripts/oracle-venv), nibabel and pydicom ({error})")
    sys.exit(77)

cli, data, work = sys.argv[1:4]
series = os.path.join(data, "dicom", "dcm_qa_ct_philips_tilt")
if not os.path.isdir(series):
    print(f"skipped: {series} is absent (shared test data)")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# The oracle: each slice's IPP and axes, sorted along the slice normal.
slices = []
for path in glob.glob(os.path.join(series, "**", "*"), recursive=True):
    try:
        ds = pydicom.dcmread(path, stop_before_pixels=True)
    except Exception:
        continue
    if "ImagePositionPatient" in ds and ds.get("Modality") == "CT":
        slices.append(ds)
row, column = np.array(slices[0].ImageOrientationPatient[:3], float), np.array(slices[0].ImageOrientationPatient[3:], float)
normal = np.cross(row, column)
slices.sort(key=lambda ds: float(np.dot(np.array(ds.ImagePositionPatient, float), normal)))
ipp = np.array([[float(v) for v in ds.ImagePositionPatient] for ds in slices])
sx, sy = float(slices[0].PixelSpacing[1]), float(slices[0].PixelSpacing[0])
nx, ny, nz = int(slices[0].Columns), int(slices[0].Rows), len(slices)


def native_point(i, j, k):
    return ipp[k] + i * sx * row + j * sy * column


def slice_corners():
    for k in range(nz):
        for i in (0, nx - 1):
            for j in (0, ny - 1):
                yield i, j, k


def run(*arguments):
    return subprocess.run([cli, *arguments], capture_output=True, text=True)


def label(name, *options):
    out = os.path.join(work, name)
    result = run("label", series, "--preset", "bone", "--device", "cpu", "-o", out, *options)
    check(result.returncode == 0, f"label {name}: exit {result.returncode}: {result.stderr.strip()}")
    return result, out


def itk_point(image, index):
    return np.array(image.TransformContinuousIndexToPhysicalPoint([float(v) for v in index]))


# Native grid in NRRD and MHA: ITK places every slice's corners at the slice's own IPP.
native_labels = None
for fmt in ("nrrd", "mha"):
    result, out = label("native_" + fmt, "--format", fmt)
    if result.returncode:
        continue
    image = sitk.ReadImage(os.path.join(out, "labels." + fmt))
    check(image.GetSize() == (nx, ny, nz), f"{fmt}: size {image.GetSize()}")
    worst = max(np.linalg.norm(itk_point(image, c) - native_point(*c)) for c in slice_corners())
    check(worst < 1e-3, f"{fmt}: ITK puts a slice corner {worst:.4f} mm from its ImagePositionPatient")
    print(f"{fmt}: native sheared grid, slice corners vs IPP in ITK {worst:.2e} mm")
    summary = json.load(open(os.path.join(out, "summary.json")))
    check(summary["geometry"]["deskewed_from_shear_degrees"] == 0, f"{fmt}: summary.json says deskewed")
    if fmt == "nrrd":
        native_labels = sitk.GetArrayFromImage(image)  # (z, y, x)


def check_deskewed(path, what):
    """`path` is a NIfTI on the deskewed grid: ITK == nibabel, orthonormal, native corners on their slices."""
    image = sitk.ReadImage(path)
    nib = nibabel.load(path)
    lps = np.diag([-1.0, -1.0, 1.0, 1.0]) @ nib.affine
    direction = np.array(image.GetDirection()).reshape(3, 3)
    check(np.allclose(direction.T @ direction, np.eye(3), atol=1e-6), f"{what}: ITK's axes are not orthonormal")
    corners = [(i, j, k) for i in (0, nx - 1) for j in (0, ny - 1) for k in range(nz)]
    agree = max(np.linalg.norm(itk_point(image, c) - (lps @ np.array([*c, 1.0]))[:3]) for c in corners)
    check(agree < 1e-3, f"{what}: ITK and nibabel place a corner voxel {agree:.4f} mm apart")
    # Native slice k's corner pixels: on output slice k, at the in-plane index of the shift (k*a, k*b).
    inverse = np.linalg.inv(lps)
    step = ipp[1] - ipp[0]
    a, b = np.dot(step, row) / sx, np.dot(step, column) / sy
    worst_plane = worst_index = 0.0
    for i, j, k in slice_corners():
        point = native_point(i, j, k)
        index = np.array(image.TransformPhysicalPointToContinuousIndex(point.tolist()))
        worst_plane = max(worst_plane, abs(index[2] - k) * image.GetSpacing()[2])
        worst_index = max(worst_index, np.abs(index[:2] - (i + k * a, j + k * b)).max(),
                          np.abs((inverse @ np.array([*point, 1.0]))[:3] - index).max())
    check(worst_plane < 1e-3, f"{what}: a native slice corner lies {worst_plane:.4f} mm off its output slice in ITK")
    check(worst_index < 1e-3, f"{what}: a native slice corner's in-plane index is off by {worst_index:.4f} pixels")
    print(f"{what}: deskewed; ITK vs nibabel {agree:.2e} mm, native corners off their slice {worst_plane:.2e} mm")
    return image, a, b


for name, options, file in (("nifti_gz", (), "labels.nii.gz"), ("nifti", ("--format", "nii"), "labels.nii")):
    result, out = label(name, *options)
    if result.returncode:
        continue
    check("sheared by 18.500 degrees" in result.stderr and "resampled onto the un-sheared grid" in result.stderr,
          f"{name}: no note of the deskewing: {result.stderr.strip()}")
    summary = json.load(open(os.path.join(out, "summary.json")))
    check(abs(summary["geometry"]["deskewed_from_shear_degrees"] - 18.5) < 1e-3,
          f"{name}: summary.json deskewed_from_shear_degrees {summary['geometry'].get('deskewed_from_shear_degrees')}")
    image, a, b = check_deskewed(os.path.join(out, file), name)
    if native_labels is not None:
        ours = sitk.GetArrayFromImage(image) > 0
        k, j, i = np.nonzero(np.ones(native_labels.shape, bool))
        ti, tj = np.rint(i + k * a).astype(int), np.rint(j + k * b).astype(int)
        inside = (ti >= 0) & (ti < nx) & (tj >= 0) & (tj < ny)
        theirs = native_labels[k[inside], j[inside], i[inside]] > 0
        mine = ours[k[inside], tj[inside], ti[inside]]
        dice = 2.0 * np.count_nonzero(theirs & mine) / max(1, np.count_nonzero(theirs) + np.count_nonzero(mine))
        check(dice >= 0.95, f"{name}: foreground Dice with the native labels {dice:.4f} < 0.95")
        print(f"{name}: foreground Dice with the native-grid labels {dice:.4f}")

# A SEG references the CT's own images: from the native-grid NRRD, and from the deskewed NIfTI, whose labels
# each frame takes at its CT image's own pixels (nearest neighbour at the shift): every frame equals that
# resampling (pydicom reads the SEG), sits at its CT image's position, and no (slice, label) is missing.
seg_ok = run("seg", os.path.join(work, "native_nrrd", "labels.nrrd"), series, "-o", os.path.join(work, "seg.dcm"))
check(seg_ok.returncode == 0, f"seg from the NRRD labels: exit {seg_ok.returncode}: {seg_ok.stderr.strip()}")
deskewed_seg = os.path.join(work, "seg_deskewed.dcm")
labels_nifti = os.path.join(work, "nifti_gz", "labels.nii.gz")
r = run("seg", labels_nifti, series, "-o", deskewed_seg)
check(r.returncode == 0, f"seg from the deskewed NIfTI: exit {r.returncode}: {r.stderr.strip()}")
if r.returncode == 0:
    seg = pydicom.dcmread(deskewed_seg)
    nib = nibabel.load(labels_nifti)
    labels = np.asarray(nib.dataobj).astype(np.int64)  # [x, y, z]
    inverse = np.linalg.inv(np.diag([-1.0, -1.0, 1.0, 1.0]) @ nib.affine)
    step = ipp[1] - ipp[0]
    a, b = np.dot(step, row) / sx, np.dot(step, column) / sy
    position_of = {ds.SOPInstanceUID: np.array([float(v) for v in ds.ImagePositionPatient]) for ds in slices}
    value_of = {int(item.SegmentNumber): int(item.SegmentLabel.split()[-1]) for item in seg.SegmentSequence}
    frames = seg.pixel_array.reshape(int(seg.NumberOfFrames), int(seg.Rows), int(seg.Columns))
    jj, ii = np.mgrid[0:ny, 0:nx]
    seen, wrong, misplaced = set(), 0, 0
    for frame, group in zip(frames, seg.PerFrameFunctionalGroupsSequence):
        frame_ipp = np.array([float(v) for v in group.PlanePositionSequence[0].ImagePositionPatient])
        source = group.DerivationImageSequence[0].SourceImageSequence[0].ReferencedSOPInstanceUID
        index = (inverse @ np.append(frame_ipp, 1.0))[:3]
        k = int(round(index[2]))
        misplaced += np.linalg.norm(position_of[source] - frame_ipp) > 1e-3 or \
            np.abs(index - (k * a, k * b, k)).max() > 1e-3
        li, lj = np.floor(ii + k * a + 0.5).astype(int), np.floor(jj + k * b + 0.5).astype(int)
        inside = (li >= 0) & (li < nx) & (lj >= 0) & (lj < ny)
        sampled = np.zeros((ny, nx), np.int64)
        sampled[inside] = labels[li[inside], lj[inside], k]
        value = value_of[int(group.SegmentIdentificationSequence[0].ReferencedSegmentNumber)]
        wrong += int(np.count_nonzero((sampled == value) != frame.astype(bool)))
        seen.add((k, value))
    expected = set()
    for k in range(nz):
        li, lj = np.floor(ii + k * a + 0.5).astype(int), np.floor(jj + k * b + 0.5).astype(int)
        inside = (li >= 0) & (li < nx) & (lj >= 0) & (lj < ny)
        expected |= {(k, int(v)) for v in np.unique(labels[li[inside], lj[inside], k]) if v}
    check(misplaced == 0, f"seg from the deskewed NIfTI: {misplaced} frames not at their CT image's position")
    check(wrong == 0, f"seg from the deskewed NIfTI: {wrong} pixels differ from the labels at the CT's pixels")
    check(seen == expected, f"seg from the deskewed NIfTI: {len(expected - seen)} (slice, label) frames missing, "
          f"{len(seen - expected)} extra")
    print(f"seg from the deskewed NIfTI: {len(frames)} frames, each equal to the labels at its CT image's pixels")
    if shutil.which("dciodvfy"):
        report = subprocess.run(["dciodvfy", deskewed_seg], capture_output=True, text=True)
        errors = [line for line in (report.stdout + report.stderr).splitlines() if line.startswith("Error")]
        check(not errors, f"seg from the deskewed NIfTI: dciodvfy reports {errors[:3]}")

# convert to NIfTI: the same deskewed grid as label's.
converted = os.path.join(work, "ct.nii.gz")
result = run("convert", series, converted)
check(result.returncode == 0 and "resampled onto the un-sheared grid" in result.stderr,
      f"convert: exit {result.returncode}: {result.stderr.strip()}")
if result.returncode == 0:
    check_deskewed(converted, "convert")

# An explicit --on-irregular warn keeps the sheared sform (nibabel reads it exactly) and says ITK does not.
result, out = label("sheared", "--on-irregular", "warn")
check("ITK-based tools" in result.stderr and "misplace" in result.stderr, f"warn: no ITK warning: {result.stderr}")
if result.returncode == 0:
    affine = np.diag([-1.0, -1.0, 1.0, 1.0]) @ nibabel.load(os.path.join(out, "labels.nii.gz")).affine
    worst = max(np.linalg.norm((affine @ np.array([*c, 1.0]))[:3] - native_point(*c)) for c in slice_corners())
    check(worst < 1e-3, f"warn: nibabel puts a slice corner {worst:.4f} mm from its IPP")

# info: one z step (between slice positions, as every output's z axis), and the step along the normal explained.
result = run("info", series)
spacing = [line for line in result.stdout.splitlines() if "spacing:" in line]
check(result.returncode == 0 and spacing and " x 2.5 mm" in spacing[0] and "2.37081 mm along the slice normal"
      in spacing[0], f"info: spacing line {spacing}")
print("info:", spacing[0].strip() if spacing else "(none)")
sys.exit(finish())
