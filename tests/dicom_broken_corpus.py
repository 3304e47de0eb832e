"""A broken-file corpus generated from a small phantom series: every case must give a clean result
(exit 0, or exit 3 with one 'voxlabel: error:' line), never a crash, never a hang (20 s limit).
Cases that cannot be loaded must fail with exit 3.
usage: dicom_broken_corpus.py VOXLABEL WORK_DIR"""
import os
import random
import shutil
import subprocess
import sys

import pydicom
from pydicom.uid import ExplicitVRLittleEndian

cli, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
source = os.path.join(work, "source")
subprocess.run([cli, "phantom", "-o", source, "--size", "32x24x4", "--quiet"], check=True)
slices = sorted(os.path.join(source, name) for name in os.listdir(source))
original = open(slices[0], "rb").read()
pixel_tag = original.rfind(b"\xe0\x7f\x10\x00")
failures, checks = [], 0


def case(name, files, must_fail=True, expect=None):
    """files: {relative name: bytes}; a directory per case."""
    directory = os.path.join(work, "cases", name)
    os.makedirs(directory)
    for relative, data in files.items():
        with open(os.path.join(directory, relative), "wb") as out:
            out.write(data)
    for command in (["convert", directory, os.path.join(work, name + ".nii")], ["info", directory]):
        global checks
        checks += 1
        try:
            result = subprocess.run([cli, *command], capture_output=True, text=True, errors="replace", timeout=20)
        except subprocess.TimeoutExpired:
            failures.append(f"{name} ({command[0]}): hang (over 20 s)")
            continue
        errors = [line for line in result.stderr.splitlines() if line.startswith("voxlabel: error:")]
        problem = None
        if result.returncode < 0 or result.returncode > 5:
            problem = f"crashed (exit {result.returncode})"
        elif result.returncode not in (0, 3):
            problem = f"exit {result.returncode}"
        elif result.returncode == 3 and len(errors) != 1:
            problem = "exit 3 without exactly one error line"
        elif command[0] == "convert" and must_fail and result.returncode != 3:
            problem = "loaded although it must not"
        elif command[0] == "convert" and expect and expect not in result.stderr:
            problem = f"message lacks '{expect}'"
        if problem:
            failures.append(f"{name} ({command[0]}): {problem}: {result.stderr.strip()[:300]}")
        print(f"{name:28s} {command[0]:8s} exit {result.returncode}: {(errors or [''])[0][:150]}")


# Truncations at several offsets: inside the preamble, the meta header, the data set, the pixel data.
for offset in (0, 64, 131, 132, 140, 200, 400, pixel_tag + 2, pixel_tag + 12, len(original) - 1):
    case(f"truncated_{offset}", {"a.dcm": original[:offset]}, expect=None)
# Corrupted tags: random bytes in the data set before the pixel data (seeded, so reproducible).
rng = random.Random(4)
for variant in range(12):
    data = bytearray(original)
    for _ in range(8):
        data[rng.randrange(132, pixel_tag)] = rng.randrange(256)
    case(f"corrupt_tags_{variant}", {"a.dcm": bytes(data)}, must_fail=False)
# Huge element lengths in the header (explicit VR: 2-byte length; make a UN/OB with a 4-byte length).
rows_at = original.find(b"\x28\x00\x10\x00US")
data = bytearray(original)
data[rows_at + 4:rows_at + 8] = b"UN\x00\x00"
data[rows_at + 8:rows_at + 8] = b"\xf0\xff\xff\x7f"
case("huge_length", {"a.dcm": bytes(data)})
# Wrong VR for Rows (SQ and DS instead of US), with pydicom writing otherwise valid files.
for vr, value in (("DS", "24"), ("LO", "many")):
    ds = pydicom.dcmread(slices[0])
    del ds[0x00280010]
    ds.add_new(0x00280010, vr, value)
    path = os.path.join(work, f"wrong_vr_{vr}.dcm")
    ds.save_as(path, write_like_original=False)
    case(f"wrong_vr_rows_{vr}", {"a.dcm": open(path, "rb").read()}, must_fail=vr == "LO")
# Absurd Rows/Columns (pixel data far too short), and zero.
for rows, columns in ((65535, 65535), (0, 32), (1, 1)):
    ds = pydicom.dcmread(slices[0])
    ds.Rows, ds.Columns = rows, columns
    path = os.path.join(work, "absurd.dcm")
    ds.save_as(path)
    case(f"rows_{rows}_columns_{columns}", {"a.dcm": open(path, "rb").read()}, must_fail=(rows, columns) != (1, 1))
# Missing pixel data, in every slice and in one slice of four.
case("no_pixel_data", {"a.dcm": original[:pixel_tag]})
case("one_slice_without_pixels", {f"{k}.dcm": (open(p, "rb").read() if k else original[:pixel_tag])
                                  for k, p in enumerate(slices)})
# Mixed dimensions inside one series: the largest group loads and the other is named in a note.
ds = pydicom.dcmread(slices[3])
ds.Rows, ds.Columns = 12, 16
ds.PixelData = bytes(12 * 16 * 2)
path = os.path.join(work, "small.dcm")
ds.save_as(path)
mixed = {f"{k}.dcm": open(p, "rb").read() for k, p in enumerate(slices[:3])}
mixed["small.dcm"] = open(path, "rb").read()
case("mixed_dimensions", mixed, must_fail=False, expect="also here, not loaded")
# Bits layout nonsense.
ds = pydicom.dcmread(slices[0])
ds.BitsStored, ds.HighBit = 20, 3
path = os.path.join(work, "bits.dcm")
ds.save_as(path)
case("bits_stored_20", {"a.dcm": open(path, "rb").read()}, expect="bit layout")
# Absurd NumberOfFrames.
ds = pydicom.dcmread(slices[0])
ds.NumberOfFrames = 2000000000
path = os.path.join(work, "frames.dcm")
ds.save_as(path)
case("number_of_frames_huge", {"a.dcm": open(path, "rb").read()})
# A directory with no DICOM at all.
case("no_dicom", {"README.txt": b"not dicom\n", "empty": b"", "noise.bin": bytes(rng.randrange(256) for _ in range(4096)),
                  "fake_preamble": bytes(128) + b"DICM" + bytes(16)}, expect="no DICOM images found")
# An empty directory.
case("empty_directory", {}, expect="no DICOM images found")

print(f"{checks - len(failures)} passed, {len(failures)} failed")
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
