"""CLI contract of `voxlabel stats`: exit codes, no clobbering, CSV == JSON, label maps of other dtypes.
usage: stats_cli.py VOXLABEL WORKDIR"""
import csv
import json
import os
import subprocess
import sys

import nibabel as nib
import numpy as np

failures = []


def run(*args):
    return subprocess.run([VOXLABEL, "stats", *args], capture_output=True, text=True)


def expect(result, code, what):
    if result.returncode != code:
        failures.append(f"{what}: exit {result.returncode}, expected {code}; stderr: {result.stderr.strip()}")
    elif code and "voxlabel: error: " not in result.stderr:
        failures.append(f"{what}: no 'voxlabel: error:' line in {result.stderr!r}")


def save(path, array_zyx):
    nib.save(nib.Nifti1Image(np.ascontiguousarray(array_zyx.transpose(2, 1, 0)), np.eye(4)), path)


def main():
    global VOXLABEL
    VOXLABEL, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)
    labels = np.zeros((4, 5, 6), np.int16)  # Slicer-style int16 label map with a gap (label 3 absent)
    labels[0, 0, 0:3] = 1
    labels[2, 3, 4] = 2
    labels[3, 4, 5] = 4
    save(p("seg.nii.gz"), labels)
    hu = (np.arange(labels.size).reshape(labels.shape) - 50).astype(np.int16)
    save(p("hu.nii.gz"), hu)
    save(p("hu_small.nii.gz"), hu[:2])
    negative = labels.copy()
    negative[1, 1, 1] = -1
    save(p("negative.nii.gz"), negative)
    sparse = np.zeros((2, 2, 2), np.uint32)  # one voxel holding the largest u32 label: far more labels than voxels
    sparse[1, 1, 1] = 4294967295
    save(p("sparse.nii.gz"), sparse)
    for name in ("out.csv", "out.json", "other.json"):
        if os.path.exists(p(name)):
            os.remove(p(name))

    expect(run(p("seg.nii.gz")), 2, "missing -o")
    expect(run(p("seg.nii.gz"), "-o", p("x.csv"), "--bogus"), 2, "unknown option")
    expect(run(p("seg.nii.gz"), "-o", p("x.csv"), "--stats", "fast"), 2, "bad --stats")
    expect(run(p("missing.nii.gz"), "-o", p("x.csv")), 3, "missing input")
    expect(run(p("negative.nii.gz"), "-o", p("x.csv")), 3, "negative label")
    expect(run(p("sparse.nii.gz"), "-o", p("x.csv")), 3, "largest label above the voxel count")
    expect(run(p("seg.nii.gz"), "--intensity", p("hu_small.nii.gz"), "-o", p("x.csv")), 3, "intensity size mismatch")
    expect(run(p("seg.nii.gz"), "-o", p("no_such_dir/x.csv")), 4, "missing output directory")
    expect(run(p("seg.nii.gz"), "--intensity", p("hu.nii.gz"), "--stats", "full", "--matlab", "--device", "cpu",
               "-o", p("out.csv")), 0, "csv")
    expect(run(p("seg.nii.gz"), "-o", p("out.csv")), 4, "existing output without --force")
    expect(run(p("seg.nii.gz"), "--intensity", p("hu.nii.gz"), "--stats", "full", "--matlab", "--device", "cpu",
               "--json", "-o", p("out.json")), 0, "json")
    expect(run(p("seg.nii.gz"), "--device", "cpu", "-o", p("other.json")), 0, ".json suffix")
    with open(p("out.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(p("out.json")) as f:
        objects = json.load(f)
    if [r["label"] for r in rows] != ["1", "2", "3", "4"]:
        failures.append(f"rows for labels 1..4 expected, got {[r['label'] for r in rows]}")
    elif rows[2]["voxels"] != "0" or rows[2]["centroid_x"] != "" or objects[2]["centroid_x"] is not None:
        failures.append("absent label 3: expected 0 voxels and empty positions")
    else:
        if rows[0]["voxels"] != "3" or rows[0]["hu_mean"] != str(int(hu[0, 0, 0:3].mean())):
            failures.append(f"label 1: {rows[0]['voxels']} voxels, hu_mean {rows[0]['hu_mean']}")
        for row, obj in zip(rows, objects):
            for key, text in row.items():
                value = obj[key]
                same = (text == "" and value is None) or (value is not None and float(text) == float(value))
                if not same:
                    failures.append(f"label {row['label']} {key}: csv {text!r} json {value!r}")
    with open(p("other.json")) as f:
        if len(json.load(f)) != 4:
            failures.append("other.json: expected 4 objects")
    # --columns: exactly the named columns in that order; unknown names and mixing with --stats are refused.
    expect(run(p("seg.nii.gz"), "-o", p("cols.csv"), "--columns", "label,voxels,bogus"), 2, "unknown column")
    expect(run(p("seg.nii.gz"), "-o", p("cols.csv"), "--columns", "label", "--stats", "full"), 2, "--columns with --stats")
    expect(run(p("seg.nii.gz"), "-o", p("cols.csv"), "--connectivity", "8"), 2, "bad --connectivity")
    expect(run(p("seg.nii.gz"), "--intensity", p("hu.nii.gz"), "--device", "cpu", "--force", "-o", p("cols.csv"),
               "--columns", "euler_number,label,feret_max_mm,hu_kurtosis"), 0, "--columns")
    with open(p("cols.csv"), newline="") as f:
        lines = f.read().splitlines()
    if lines[0] != "euler_number,label,feret_max_mm,hu_kurtosis" or len(lines) != 5:
        failures.append(f"--columns: header {lines[0]!r}, {len(lines)} lines")
    elif lines[1].split(",")[:3] != ["1", "1", f"{np.sqrt(9 + 1 + 1):.12g}"]:
        failures.append(f"--columns: label 1 row {lines[1]!r} (a 3-voxel rod: Euler 1, Feret sqrt(11))")
    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    print("stats_cli:", "all checks passed" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
