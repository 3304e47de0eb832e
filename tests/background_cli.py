"""`voxlabel background` end to end: the synthetic cine as a folder of PNGs and as a NIfTI volume gives the
same foreground, equal to OpenCV's BackgroundSubtractorMOG2 on >= 99.9 % of pixels; components.csv has one row
per (frame, 2D component) as OpenCV's connectedComponents counts them (8-connected); the preview strip and
summary.json exist; refusals: a one-frame sequence, a frame of another size, a bad option.

usage: background_cli.py VOXLABEL WORKDIR"""
import csv
import json
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
except ImportError as error:
    print(f"SKIP: {error} (apt-get install python3-opencv python3-nibabel)")
    sys.exit(77)
from background_cine import synthetic_cine  # noqa: E402

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(*args):
    return subprocess.run([voxlabel, *args], capture_output=True, text=True)


frames, _ = synthetic_cine(n=60, height=96, width=128)
png_dir = os.path.join(work, "frames")
os.makedirs(png_dir)
for t, frame in enumerate(frames):
    cv2.imwrite(os.path.join(png_dir, f"frame{t:03d}.png"), frame)
volume_path = os.path.join(work, "cine.nii.gz")
nib.save(nib.Nifti1Image(np.asfortranarray(frames.transpose(2, 1, 0)), np.eye(4)), volume_path)

model = cv2.createBackgroundSubtractorMOG2(history=500, varThreshold=16, detectShadows=False)
opencv = np.stack([model.apply(frame) for frame in frames]) > 0

results = {}
for name, source in (("png", png_dir), ("volume", volume_path)):
    out = os.path.join(work, "out-" + name)
    result = run("background", source, "-o", out, "--device", "cpu")
    if not check(result.returncode == 0, f"{name}: exit {result.returncode}: {result.stderr.strip()}"):
        continue
    for file in ("foreground.nii.gz", "components.csv", "preview.png", "summary.json"):
        check(os.path.exists(os.path.join(out, file)), f"{name}: {file} missing")
    mask = np.asarray(nib.load(os.path.join(out, "foreground.nii.gz")).dataobj).transpose(2, 1, 0) > 0
    share = float((mask == opencv).mean())
    check(share >= 0.999, f"{name}: {100 * share:.4f} % agreement with OpenCV")
    rows = list(csv.DictReader(open(os.path.join(out, "components.csv"))))
    for t in range(len(frames)):
        want = cv2.connectedComponents(mask[t].astype(np.uint8), connectivity=8)[0] - 1
        got = sum(1 for row in rows if int(row["slice"]) == t)
        check(got == want, f"{name}: frame {t}: {got} rows, OpenCV counts {want} components")
    summary = json.load(open(os.path.join(out, "summary.json")))
    check(len(summary["frames"]) == len(frames), f"{name}: summary lists {len(summary['frames'])} frames")
    results[name] = mask
    print(f"{name}: {100 * share:.4f} % agreement with OpenCV, {len(rows)} component rows")
if len(results) == 2:
    check(np.array_equal(results["png"], results["volume"]), "PNG folder and volume give different foregrounds")


def refused(name, args, want, code):
    result = run("background", *args)
    lines = result.stderr.strip().splitlines()
    check(result.returncode == code, f"{name}: exit {result.returncode}, want {code}")
    check(len(lines) == 1 and lines[0].startswith("voxlabel: error: ") and want in lines[0],
          f"{name}: stderr {result.stderr.strip()!r}, want one error line with {want!r}")


single = os.path.join(work, "single.nii.gz")
nib.save(nib.Nifti1Image(np.asfortranarray(frames[:1].transpose(2, 1, 0)), np.eye(4)), single)
refused("one frame", [single, "-o", os.path.join(work, "r1")], "at least 2 frames", 3)
check(not os.path.exists(os.path.join(work, "r1", "foreground.nii.gz")), "one frame: output written")
refused("one image", [os.path.join(png_dir, "frame000.png"), "-o", os.path.join(work, "r0")], "at least 2 frames", 3)
odd = os.path.join(work, "odd")
shutil.copytree(png_dir, odd)
cv2.imwrite(os.path.join(odd, "frame999.png"), frames[0][:50])
refused("size change", [odd, "-o", os.path.join(work, "r2")], "every frame must have one size", 3)
refused("bad mixtures", [png_dir, "-o", os.path.join(work, "r3"), "--mixtures", "9"], "--mixtures", 2)
sys.exit(finish())
