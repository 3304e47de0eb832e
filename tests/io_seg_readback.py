"""Reads a voxlabel DICOM SEG back with pydicom and rebuilds the label volume from it: every frame's pixels
go to the label slice at its ImagePositionPatient (through the labels' NIfTI affine), with the value of
its segment's label. The rebuilt volume must equal the labels voxel for voxel, so per-segment voxel
counts are identical too; every frame must reference the CT image at its position.

usage: io_seg_readback.py SEG.dcm LABELS.nii.gz CT_DIR
"""
import os
import sys

import nibabel
import numpy as np
import pydicom


def main():
    seg_path, labels_path, ct_dir = sys.argv[1:4]
    seg = pydicom.dcmread(seg_path)
    img = nibabel.load(labels_path)
    labels = np.asarray(img.dataobj).astype(np.int64)  # [x, y, z]
    affine = img.affine.copy()
    affine[:2, :] *= -1  # RAS -> LPS
    inverse = np.linalg.inv(affine)
    failures = []

    ct_by_uid = {}
    for root, _, names in os.walk(ct_dir):
        for name in names:
            try:
                ds = pydicom.dcmread(os.path.join(root, name), stop_before_pixels=True)
            except pydicom.errors.InvalidDicomError:
                continue  # licence and source notes beside the images
            if "ImagePositionPatient" in ds:
                ct_by_uid[ds.SOPInstanceUID] = np.array([float(v) for v in ds.ImagePositionPatient])

    label_of_segment = {}
    for item in seg.SegmentSequence:
        label_of_segment[int(item.SegmentNumber)] = int(item.SegmentLabel.split()[-1])
    frames = seg.pixel_array.reshape(int(seg.NumberOfFrames), int(seg.Rows), int(seg.Columns))
    rebuilt = np.zeros_like(labels)
    for frame, group in zip(frames, seg.PerFrameFunctionalGroupsSequence):
        ipp = np.array([float(v) for v in group.PlanePositionSequence[0].ImagePositionPatient])
        index = inverse @ np.append(ipp, 1.0)
        k = int(round(index[2]))
        if np.max(np.abs(index[:3] - [0, 0, k])) > 1e-3:
            failures.append(f"frame at {ipp} is not on a label slice ({index[:3]})")
            continue
        source = group.DerivationImageSequence[0].SourceImageSequence[0].ReferencedSOPInstanceUID
        if source not in ct_by_uid or np.max(np.abs(ct_by_uid[source] - ipp)) > 1e-3:
            failures.append(f"frame at slice {k} references CT {source} at another position")
        segment = int(group.SegmentIdentificationSequence[0].ReferencedSegmentNumber)
        value = label_of_segment[segment]
        mask = frame.T.astype(bool)  # frame is [row y][column x]
        if np.any(rebuilt[:, :, k][mask]):
            failures.append(f"slice {k}: segments overlap")
        rebuilt[:, :, k][mask] = value
    for value in sorted(label_of_segment.values()):
        ours, back = int(np.sum(labels == value)), int(np.sum(rebuilt == value))
        if ours != back:
            failures.append(f"label {value}: {ours} voxels, {back} in the SEG")
    if not np.array_equal(rebuilt, labels):
        failures.append(f"{int(np.sum(rebuilt != labels))} voxels differ between the SEG and the labels")
    referenced = {item.ReferencedSOPInstanceUID
                  for series in seg.ReferencedSeriesSequence for item in series.ReferencedInstanceSequence}
    if referenced != set(ct_by_uid):
        failures.append("the Common Instance Reference does not list exactly the CT series")
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print(f"SEG read back: {len(label_of_segment)} segments, {len(frames)} frames, every voxel identical")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
