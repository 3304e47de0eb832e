"""Real DICOM series through `voxlabel convert`, checked against independent oracles:
  geometry: the world (LPS->RAS) positions of the 8 corner voxels of our NIfTI within 1e-3 mm of
            dcm2niix's NIfTI of the same series (compared as point sets: dcm2niix flips rows);
  HU:       identical to pydicom's stored values after our own bit extraction, sign, padding (-> -1024)
            and rescale, with slices sorted by IPP . normal here (an independent implementation);
  compressed variants (JPEG lossless, JPEG-LS, RLE, Deflate, big endian, multi-frame RLE/JPEG-LS):
            bit-identical to the uncompressed originals; JPEG 2000: a clean error naming gdcmconv;
  the Philips study folder: exactly its 5 groups, the axial series chosen.
usage: dicom_realdata_oracle.py VOXLABEL DATA_DIR WORK_DIR     (exit 77 when DATA_DIR is missing)"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

from test_check import check, finish

try:
    import nibabel
    import pydicom
except ImportError as error:
    print(f"SKIP: {error} (install python3-nibabel and python3-pydicom)")
    sys.exit(77)

cli, data, work = sys.argv[1], os.path.join(sys.argv[2], "dicom"), sys.argv[3]
if not os.path.isdir(data):
    print(f"SKIP: no shared test data at {data}")
    sys.exit(77)
if shutil.which("dcm2niix") is None:
    print("SKIP: dcm2niix is not installed")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)



def convert(source, name, *options):
    out = os.path.join(work, name + ".nii")
    result = subprocess.run([cli, "convert", source, out, "--quiet", *options], capture_output=True, text=True,
                            timeout=300)
    return result, out


def corners(affine, shape):
    points = []
    for i in (0, shape[0] - 1):
        for j in (0, shape[1] - 1):
            for k in (0, shape[2] - 1):
                points.append(affine @ np.array([i, j, k, 1.0]))
    return np.array(points)[:, :3]


def dcm2niix_volumes(source, name):
    out = os.path.join(work, "dcm2niix_" + name)
    os.makedirs(out)
    arguments = ["dcm2niix", "-z", "n", "-b", "n", "-f", "%s_%j", "-o", out]
    if os.path.isfile(source):
        arguments += ["-s", "y"]
    subprocess.run(arguments + [source], capture_output=True, timeout=300)
    volumes = []
    for path in sorted(glob.glob(os.path.join(out, "*.nii"))):
        if "_Tilt" in path or "_Eq" in path:
            continue
        image = nibabel.load(path)
        volumes.append((path, image))
    return volumes


def stored_values(ds, array):
    """Bit extraction and sign per docs/dicom.md section 4, written independently of the C code."""
    bits_allocated, bits_stored = int(ds.BitsAllocated), int(ds.BitsStored)
    high_bit = int(getattr(ds, "HighBit", bits_stored - 1))
    raw = array.astype(np.int64) & ((1 << bits_allocated) - 1)
    value = (raw >> (high_bit + 1 - bits_stored)) & ((1 << bits_stored) - 1)
    if int(ds.PixelRepresentation) == 1:
        value = np.where(value >= (1 << (bits_stored - 1)), value - (1 << bits_stored), value)
    return value


def padding_mask(ds, value):
    if "PixelPaddingValue" not in ds:
        return np.zeros(value.shape, bool)
    mask_bits = (1 << int(ds.BitsStored)) - 1

    def norm(v):
        v = int(v) & mask_bits
        if int(ds.PixelRepresentation) == 1 and v >= (1 << (int(ds.BitsStored) - 1)):
            v -= 1 << int(ds.BitsStored)
        return v

    lo = hi = norm(ds.PixelPaddingValue)
    if "PixelPaddingRangeLimit" in ds:
        limit = norm(ds.PixelPaddingRangeLimit)
        lo, hi = min(lo, limit), max(hi, limit)
    return (value >= lo) & (value <= hi)


def pydicom_slices(files, series_uid, rows, columns):
    """(position along the normal, HU slice) for every single- or multi-frame image of the series."""
    slices = []
    for path in files:
        try:
            ds = pydicom.dcmread(path)
        except Exception:
            continue
        if ds.get("SeriesInstanceUID") != series_uid or int(ds.get("Rows", 0)) != rows or int(
                ds.get("Columns", 0)) != columns or "PixelData" not in ds:
            continue
        if "LOCALIZER" in list(ds.get("ImageType", [])):
            continue
        frames = int(ds.get("NumberOfFrames", 1) or 1)
        array = ds.pixel_array.reshape(frames, rows, columns)
        shared = ds.SharedFunctionalGroupsSequence[0] if "SharedFunctionalGroupsSequence" in ds else None
        for f in range(frames):
            per = ds.PerFrameFunctionalGroupsSequence[f] if "PerFrameFunctionalGroupsSequence" in ds else None

            def lookup(sequence, attribute, default):
                for item in (per, shared):
                    if item is not None and sequence in item and attribute in item[sequence][0]:
                        return item[sequence][0][attribute].value
                return ds.get(attribute, default)

            ipp = np.array(lookup("PlanePositionSequence", "ImagePositionPatient", None), float)
            iop = np.array(lookup("PlaneOrientationSequence", "ImageOrientationPatient", None), float)
            slope = float(lookup("PixelValueTransformationSequence", "RescaleSlope", 1) or 1)
            intercept = float(lookup("PixelValueTransformationSequence", "RescaleIntercept", 0) or 0)
            normal = np.cross(iop[:3], iop[3:])
            value = stored_values(ds, array[f])
            hu = value * slope + intercept
            hu = np.where(padding_mask(ds, value), -1024.0, hu)
            spacing = np.array(lookup("PixelMeasuresSequence", "PixelSpacing", [1, 1]), float)
            corner = ipp + (columns - 1) * spacing[1] * iop[:3] + (rows - 1) * spacing[0] * iop[3:]
            slices.append((float(ipp @ normal), hu, ipp, corner))
    slices.sort(key=lambda item: item[0])
    return slices


def real_series(name, source, options=(), dicom_files=None, tilted=False, irregular=False):
    result, out = convert(source, name, *options)
    check(result.returncode == 0, f"{name}: convert failed: {result.stderr.strip()}")
    if result.returncode != 0:
        return
    ours = nibabel.load(out)
    shape = ours.shape
    our_corners = corners(ours.get_sform(), shape)
    # Geometry against dcm2niix: the 3-D volume of the same size. dcm2niix's native NIfTI of a tilted
    # stack drops the shear (it writes the correction as a separate _Tilt file on another grid), so for
    # tilted series the geometry oracle is the slices' own ImagePositionPatient (below).
    matches = [] if tilted else [(p, img) for p, img in dcm2niix_volumes(source, name) if img.shape[:3] == shape[:3]]
    check(tilted or len(matches) >= 1, f"{name}: dcm2niix wrote no {shape} volume")
    for path, image in matches[:1]:
        theirs = corners(image.get_sform() if image.header["sform_code"] > 0 else image.get_qform(), image.shape)
        distance = max(np.min(np.linalg.norm(theirs - c, axis=1)) for c in our_corners)
        check(distance < 1e-3, f"{name}: voxel corners differ from dcm2niix by {distance:.6f} mm")
        print(f"{name}: {shape}, corner distance to dcm2niix {distance:.2e} mm")
    # HU against pydicom.
    files = dicom_files or ([source] if os.path.isfile(source) else
                            sorted(p for p in glob.glob(os.path.join(source, "**", "*"), recursive=True)
                                   if os.path.isfile(p)))
    ds0 = None
    for path in files:
        try:
            ds = pydicom.dcmread(path, stop_before_pixels=True)
        except Exception:
            continue
        if int(ds.get("Rows", 0)) == shape[1] and int(ds.get("Columns", 0)) == shape[0] and "LOCALIZER" not in list(
                ds.get("ImageType", [])) and ds.get("Modality") in ("CT", None) and "SEG" != ds.get("Modality"):
            ds0 = ds
            break
    slices = pydicom_slices(files, ds0.SeriesInstanceUID, shape[1], shape[0])
    # Geometry against the slices' own positions: first and last voxel of every slice (only the first and
    # last slice for an irregular stack, whose native grid has the mean step).
    ras = np.diag([-1.0, -1.0, 1.0])
    worst = 0.0
    for k, (_, _, ipp, corner) in enumerate(slices):
        if irregular and k not in (0, len(slices) - 1):
            continue
        first = ours.get_sform() @ np.array([0, 0, k, 1.0])
        last = ours.get_sform() @ np.array([shape[0] - 1, shape[1] - 1, k, 1.0])
        worst = max(worst, np.linalg.norm(first[:3] - ras @ ipp), np.linalg.norm(last[:3] - ras @ corner))
    check(worst < 1e-3, f"{name}: voxel positions differ from ImagePositionPatient by {worst:.6f} mm")
    print(f"{name}: slice corners vs ImagePositionPatient {worst:.2e} mm")
    reference = np.stack([item[1] for item in slices]).transpose(2, 1, 0)
    mine = np.asarray(ours.dataobj)
    check(reference.shape == mine.shape, f"{name}: shape {mine.shape} vs pydicom {reference.shape}")
    if reference.shape == mine.shape:
        differing = int(np.count_nonzero(reference != mine))
        check(differing == 0, f"{name}: {differing} voxels differ from pydicom HU")
        print(f"{name}: HU identical to pydicom: {differing == 0} (range {mine.min()}..{mine.max()})")


def identical(name, reference_source, variants, options=()):
    ok, out = convert(reference_source, name + "_reference", *options)
    check(ok.returncode == 0, f"{name}: reference failed: {ok.stderr.strip()}")
    if ok.returncode != 0:
        return
    reference = np.asarray(nibabel.load(out).dataobj)
    for label, source in variants:
        result, path = convert(source, f"{name}_{label}", *options)
        check(result.returncode == 0, f"{name}/{label}: convert failed: {result.stderr.strip()}")
        if result.returncode == 0:
            same = np.array_equal(np.asarray(nibabel.load(path).dataobj), reference)
            check(same, f"{name}/{label}: decoded values differ from the uncompressed original")
            print(f"{name}/{label}: bit-identical {same}")


def refused_j2k(name, source):
    result, _ = convert(source, name)
    check(result.returncode == 3 and "gdcmconv --raw" in result.stderr and "JPEG 2000" in result.stderr,
          f"{name}: JPEG 2000 should fail with exit 3 naming gdcmconv --raw, got {result.returncode}: {result.stderr}")


# Real series: geometry vs dcm2niix, HU vs pydicom.
real_series("philips_study", os.path.join(data, "dcm_qa_ct_philips_study"))
# The native sheared grid (--on-irregular warn); the default NIfTI is deskewed (dicom_tilt_itk checks it).
real_series("philips_tilt", os.path.join(data, "dcm_qa_ct_philips_tilt"), ("--on-irregular", "warn"), tilted=True)
real_series("ge_tilt", os.path.join(data, "dcm_qa_ct_ge_tilt"), ("--on-irregular", "warn"), tilted=True, irregular=True)
real_series("dcmqi_3slice", os.path.join(data, "dcmqi_ct_3slice"))
real_series("enhanced_ct", os.path.join(data, "multiframe", "eCT_Supplemental.dcm"))
real_series("ct_14bit_padding", os.path.join(data, "compressed", "pydicom_ct_j2k", "693_UNCR.dcm"))

# Compressed variants of the first 6 GE slices against the uncompressed files.
subset = os.path.join(work, "ge_first6")
os.makedirs(subset)
for number in range(1, 7):
    os.symlink(os.path.abspath(os.path.join(data, "dcm_qa_ct_ge_tilt", f"{number:02d}.dcm")),
               os.path.join(subset, f"{number:02d}.dcm"))
compressed = os.path.join(data, "compressed", "ge_tilt_subset")
identical("ge_subset", subset, [(k, os.path.join(compressed, k)) for k in ("jpegll", "jpls", "rle", "deflate")])
ts = os.path.join(data, "compressed", "dcm_qa_ts")
identical("transfer_syntaxes", os.path.join(ts, "1.dcm"), [(str(n), os.path.join(ts, f"{n}.dcm")) for n in range(2, 9)])
refused_j2k("transfer_syntax_9", os.path.join(ts, "9.dcm"))
refused_j2k("ct_j2k", os.path.join(data, "compressed", "pydicom_ct_j2k", "693_J2KR.dcm"))
mf = os.path.join(data, "multiframe")
identical("enhanced_mr", os.path.join(mf, "emri_small.dcm"),
          [("rle", os.path.join(mf, "emri_small_RLE.dcm")), ("jpls", os.path.join(mf, "emri_small_jpeg_ls_lossless.dcm"))])
refused_j2k("enhanced_mr_j2k", os.path.join(mf, "emri_small_jpeg_2k_lossless.dcm"))

# The Philips study folder: exactly 5 groups, the axial series the default.
info = subprocess.run([cli, "info", os.path.join(data, "dcm_qa_ct_philips_study")], capture_output=True, text=True)
groups = [line for line in info.stdout.splitlines() if line.startswith("[")]
check(info.returncode == 0 and len(groups) == 5, f"philips study: {len(groups)} groups, expected 5:\n{info.stdout}")
chosen = [line for line in groups if "default choice" in line]
check(len(chosen) == 1 and 'series 201 "STD BRAIN 5MM"' in chosen[0], f"philips study: default choice {chosen}")
sizes = sorted(line.split("size:")[1].split(",")[0].strip() for line in info.stdout.splitlines() if "size:" in line)
check(sizes == sorted(["512 x 256", "512 x 512", "512 x 256", "650 x 741 (colour samples)",
                       "650 x 512 (colour samples)"]), f"philips study sizes {sizes}")

sys.exit(finish())
