"""DICOM SEG input of `voxlabel label --multilabel` (dcmqi's examples in ../shared, pydicom to make variants):
  - liver.dcm: the class map equals dcmqi's liver_seg.nrrd of the same label (voxels and affine), and the
    SegmentLabel "Liver" is the class_name of every component and the name in summary.json; with
    --intensity CT_DIR the hu_mean/min/max columns equal numpy's over each component's voxels of the CT;
  - a two-segment SEG made from it (segment 2: a block outside the liver): the cleaned class map holds 1
    and 2 exactly where the segments are;
  - round trip: that class map written by `voxlabel seg --segments-from` (one segment per class, the source
    SEG's names, codes and colours) and read back gives the same class map and names;
  - a SEG without its first frame: on its frames' grid it has 2 slices; with --intensity CT_DIR it is placed
    on the CT's 3 slices, the missing one empty;
  - refusals with one error line, exit 3 and no output: overlapping segments (the message names both),
    a LABELMAP SEG (which DCMTK 3.6.7 cannot read), a SEG given with a CT of another series.
usage: multilabel_seg.py VOXLABEL WORKDIR SHARED_DATA"""
import copy
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish, refusal_problem  # noqa: E402

try:
    import nibabel as nib
    import pydicom
except ImportError as error:
    print(f"SKIP: {error} (python3-nibabel and python3-pydicom come from Debian)")
    sys.exit(77)

voxlabel, work, shared = sys.argv[1:4]
examples = os.path.join(shared, "dicom", "dcmqi_ct_3slice", "seg_examples")
ct = os.path.join(shared, "dicom", "dcmqi_ct_3slice")
if not os.path.isfile(os.path.join(examples, "liver.dcm")):
    print(f"SKIP: {examples} is absent")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(*args):
    return subprocess.run([voxlabel, *args], capture_output=True, text=True)


def load(path):
    image = nib.load(path)
    return np.asarray(image.dataobj), image.affine


liver = os.path.join(examples, "liver.dcm")
out = os.path.join(work, "liver")
r = run("label", liver, "--multilabel", "--min-size", "1", "--intensity", ct, "-o", out, "--quiet")
if check(r.returncode == 0, f"liver.dcm: exit {r.returncode}: {r.stderr.strip()}"):
    r = run("convert", os.path.join(examples, "liver_seg.nrrd"), os.path.join(work, "nrrd.nii.gz"))
    check(r.returncode == 0, f"convert liver_seg.nrrd: {r.stderr.strip()}")
    expected, expected_affine = load(os.path.join(work, "nrrd.nii.gz"))
    cleaned, affine = load(os.path.join(out, "cleaned.nii.gz"))
    check(cleaned.shape == expected.shape and np.array_equal(cleaned, (expected > 0).astype(cleaned.dtype)),
          f"liver.dcm: class map differs from liver_seg.nrrd ({cleaned.shape} vs {expected.shape})")
    check(np.allclose(affine, expected_affine, atol=1e-3), f"liver.dcm: affine {affine} vs {expected_affine}")
    with open(os.path.join(out, "components.csv")) as f:
        rows = list(csv.DictReader(f))
    check(rows and all(row["class"] == "1" and row["class_name"] == "Liver" for row in rows),
          "liver.dcm: class_name column is not 'Liver'")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    check(summary["per_class"][0].get("name") == "Liver", "liver.dcm: summary per_class name")
    r = run("convert", ct, os.path.join(work, "ct.nii.gz"))
    if check(r.returncode == 0, f"convert the CT: {r.stderr.strip()}"):
        image = nib.load(os.path.join(work, "ct.nii.gz"))
        hu = np.asarray(image.dataobj) * float(image.dataobj.slope or 1) + float(image.dataobj.inter or 0)
        labels, _ = load(os.path.join(out, "labels.nii.gz"))
        for row in rows:
            values = hu[labels == int(row["label"])]
            check(abs(float(row["hu_mean"]) - values.mean()) < 1e-3 and float(row["hu_min"]) == values.min() and
                  float(row["hu_max"]) == values.max(), f"liver.dcm: HU columns of label {row['label']}: {row}")

# A second segment: a block of voxels outside the liver, in the frames of the liver's slices.
ds = pydicom.dcmread(liver)
rows_, columns = int(ds.Rows), int(ds.Columns)
frames = int(ds.NumberOfFrames)
bits = np.unpackbits(np.frombuffer(ds.PixelData, dtype=np.uint8), bitorder="little")[: frames * rows_ * columns]
liver_bits = bits.reshape(frames, rows_, columns)
block = np.zeros_like(liver_bits)
block[:, 10:40, 20:60] = 1
block &= 1 - liver_bits


def two_segments(second_bits, path):
    two = copy.deepcopy(ds)
    item = copy.deepcopy(ds.SegmentSequence[0])
    item.SegmentNumber = 2
    item.SegmentLabel = "Block"
    two.SegmentSequence.append(item)
    for f in range(frames):
        group = copy.deepcopy(ds.PerFrameFunctionalGroupsSequence[f])
        group.SegmentIdentificationSequence[0].ReferencedSegmentNumber = 2
        two.PerFrameFunctionalGroupsSequence.append(group)
    two.NumberOfFrames = 2 * frames
    packed = np.packbits(np.concatenate([liver_bits.ravel(), second_bits.ravel()]), bitorder="little")
    two.PixelData = packed.tobytes()
    two.save_as(path)


two_path = os.path.join(work, "two.dcm")
two_segments(block, two_path)
out = os.path.join(work, "two")
r = run("label", two_path, "--multilabel", "--min-size", "1", "-o", out, "--quiet")
if check(r.returncode == 0, f"two segments: exit {r.returncode}: {r.stderr.strip()}"):
    cleaned, _ = load(os.path.join(out, "cleaned.nii.gz"))
    zyx = np.ascontiguousarray(cleaned.T)  # (z, y, x) = (frame, row, column)
    check(np.array_equal(zyx == 1, liver_bits == 1) and np.array_equal(zyx == 2, block == 1),
          "two segments: the class map does not hold segment 1 and 2 where their frames are")
    # Round trip through `voxlabel seg` (one segment per class) and back.
    seg_path = os.path.join(work, "classes.dcm")
    r = run("seg", os.path.join(out, "cleaned.nii.gz"), ct, "--segments-from", two_path, "-o", seg_path, "--quiet")
    if check(r.returncode == 0, f"voxlabel seg: exit {r.returncode}: {r.stderr.strip()}"):
        back = os.path.join(work, "back")
        r = run("label", seg_path, "--multilabel", "--min-size", "1", "-o", back, "--quiet")
        if check(r.returncode == 0, f"round trip: exit {r.returncode}: {r.stderr.strip()}"):
            again, _ = load(os.path.join(back, "cleaned.nii.gz"))
            check(np.array_equal(again, cleaned), "round trip through voxlabel seg changed the class map")
            with open(os.path.join(back, "classes.csv")) as f:
                names = [row["class_name"] for row in csv.DictReader(f)]
            check(names == ["Liver", "Block"], f"round trip: segment names {names}")
        written = pydicom.dcmread(seg_path)
        for k, item in enumerate(written.SegmentSequence):
            check(item.SegmentedPropertyTypeCodeSequence[0].CodeValue ==
                  ds.SegmentSequence[0].SegmentedPropertyTypeCodeSequence[0].CodeValue and
                  list(item.get("RecommendedDisplayCIELabValue", [])) ==
                  list(ds.SegmentSequence[0].get("RecommendedDisplayCIELabValue", [])),
                  f"round trip: segment {k + 1} lost its type code or colour")

overlap_path = os.path.join(work, "overlap.dcm")
overlapping = block.copy()
overlapping[1, 250, 200:210] = 1  # into the liver on the middle frame
two_segments(overlapping, overlap_path)
refused = os.path.join(work, "refused")
r = run("label", overlap_path, "--multilabel", "-o", refused)
problem = refusal_problem(r, 3, refused)
check(problem is None and "segments 1 and 2 overlap" in r.stderr, f"overlapping segments: {problem}: {r.stderr.strip()}")
r = run("label", os.path.join(examples, "sparse-labelmap-ppv5.dcm"), "--multilabel", "-o", refused)
problem = refusal_problem(r, 3, refused)
check(problem is None and "LABELMAP" in r.stderr, f"LABELMAP SEG: {problem}: {r.stderr.strip()}")
# Without its first frame: 2 slices alone, the CT's 3 with --intensity.
partial = copy.deepcopy(ds)
first_z = float(ds.PerFrameFunctionalGroupsSequence[0].PlanePositionSequence[0].ImagePositionPatient[2])
del partial.PerFrameFunctionalGroupsSequence[0]
partial.NumberOfFrames = frames - 1
partial.PixelData = np.packbits(liver_bits[1:].ravel(), bitorder="little").tobytes()
partial_path = os.path.join(work, "partial.dcm")
partial.save_as(partial_path)
out = os.path.join(work, "partial")
r = run("label", partial_path, "--multilabel", "--min-size", "1", "-o", out, "--quiet")
if check(r.returncode == 0, f"partial SEG: exit {r.returncode}: {r.stderr.strip()}"):
    check(load(os.path.join(out, "cleaned.nii.gz"))[0].shape[2] == frames - 1, "partial SEG: not 2 slices alone")
r = run("label", partial_path, "--multilabel", "--min-size", "1", "--intensity", ct, "-o", out, "--force", "--quiet")
if check(r.returncode == 0, f"partial SEG on the CT: exit {r.returncode}: {r.stderr.strip()}"):
    placed, placed_affine = load(os.path.join(out, "cleaned.nii.gz"))
    expected, expected_affine = load(os.path.join(work, "nrrd.nii.gz"))
    dropped = int(round((first_z - expected_affine[2, 3]) / expected_affine[2, 2]))
    expected = (expected > 0).astype(placed.dtype)
    expected[:, :, dropped] = 0
    check(np.array_equal(placed, expected) and np.allclose(placed_affine, expected_affine, atol=1e-3),
          f"partial SEG on the CT: not the NRRD without slice {dropped}")

other = copy.deepcopy(ds)
other.ReferencedSeriesSequence[0].SeriesInstanceUID = "1.2.3.4.5.6.7.8.9"
other_path = os.path.join(work, "other.dcm")
other.save_as(other_path)
r = run("label", other_path, "--multilabel", "--intensity", ct, "-o", refused, "--quiet")
problem = refusal_problem(r, 3, refused)
check(problem is None and "references series 1.2.3.4.5.6.7.8.9" in r.stderr,
      f"SEG of another series: {problem}: {r.stderr.strip()}")
shutil.rmtree(work, ignore_errors=True)
sys.exit(finish())
