#!/usr/bin/python3
"""`seg` on a source CT whose own attributes DCMTK refuses to reference (a SOPInstanceUID with a letter, found by
the CLI fuzz campaign): an input error (exit 3, one line, naming the source file), not exit 5, and no output.
usage: io_seg_bad_source.py VOXLABEL WORKDIR   (exit 77 without pydicom)"""
import glob
import os
import shutil
import subprocess
import sys

from test_check import check, finish, refusal_problem

try:
    import pydicom
except ImportError:
    print("skipped: needs pydicom")
    sys.exit(77)

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
ct = os.path.join(work, "ct")
subprocess.run([voxlabel, "phantom", "-o", ct, "--size", "32x32x4", "--quiet"], check=True)
subprocess.run([voxlabel, "label", ct, "--threshold", "100:3000", "--device", "cpu", "-o", os.path.join(work, "l"),
                "--quiet"], check=True)
bad = sorted(glob.glob(os.path.join(ct, "*.dcm")))[1]
ds = pydicom.dcmread(bad)
ds.SOPInstanceUID = "1.2.826.0.1.3680043.bad.uid"
ds.save_as(bad)
out = os.path.join(work, "seg.dcm")
r = subprocess.run([voxlabel, "seg", os.path.join(work, "l", "labels.nii.gz"), ct, "-o", out], capture_output=True,
                   text=True)
why = refusal_problem(r, 3, out)
check(why is None and os.path.basename(bad) in r.stderr, f"seg with a bad source UID: {why}: {r.stderr.strip()}")
sys.exit(finish())
