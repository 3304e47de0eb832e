"""G4: `voxlabel cut` (Boykov-Jolly) on the CT phantom with scripted seeds: Dice >= 0.95 against the phantom's
lungs, and the reported energy equal to the cut value, in 3D (6 and 26) and slice by slice (8), with GrabCut
rounds and with an object prior, on the phantom and on the phantom with sigma-150 HU noise added; the CPU and
GPU solvers report the same energy (the GPU runs skip without a device). Then the refusals: seeds of another size or geometry, seeds with one class, bad seed values.

The lungs' truth: the phantom draws lungs at -850 HU inside tissue of -100..60 HU with noise of sigma ~20 HU,
so the voxels under -475 HU that are not connected to the air around the body are the lungs exactly (the
threshold sits more than 18 sigma from both sides); vessels and nodules inside the lungs are not lung.
Seeds, as a user would draw them: object strokes in the lungs' cores on every 4th slice, background strokes
in the body's soft tissue and the air at the image's border.

usage: graphcut_cut_phantom.py VOXLABEL WORKDIR"""
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

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(*args):
    return subprocess.run([voxlabel, *args], capture_output=True, text=True)


def zyx(image):
    """nibabel's [x, y, z] array as (z, y, x)."""
    return np.asarray(image.dataobj).transpose(2, 1, 0)


def save(path, volume, like):
    nib.save(nib.Nifti1Image(np.asfortranarray(volume.transpose(2, 1, 0)), like.affine), path)


ct_dir, ct_path = os.path.join(work, "ct"), os.path.join(work, "ct.nii.gz")
check(run("phantom", "-o", ct_dir, "--size", "128x128x24", "--seed", "3", "--quiet").returncode == 0, "phantom failed")
check(run("convert", ct_dir, ct_path).returncode == 0, "convert failed")
ct = nib.load(ct_path)
hu = zyx(ct).astype(np.float64)

low, count = ndimage.label(hu < -475)
border = set(np.unique(np.concatenate([low[:, 0, :].ravel(), low[:, -1, :].ravel(), low[:, :, 0].ravel(),
                                       low[:, :, -1].ravel()])))
truth = np.isin(low, [k for k in range(1, count + 1) if k not in border])
print(f"phantom lungs: {int(truth.sum())} voxels")

seeds = np.zeros(hu.shape, np.uint8)
core = np.stack([ndimage.binary_erosion(s, iterations=4) for s in truth])
tissue = np.stack([ndimage.binary_erosion(s, iterations=3) for s in (hu > -150) & (hu < 200)])
for z in range(0, hu.shape[0], 4):
    seeds[z][core[z]] = 1
    seeds[z][tissue[z] & (np.indices(hu.shape[1:]).sum(0) % 3 == 0)] = 2
seeds[:, :2, :] = 2
seeds[:, -2:, :] = 2
seeds_path = os.path.join(work, "seeds.nii.gz")
save(seeds_path, seeds, ct)


def dice(labels):
    object_ = labels > 0
    return 2.0 * (object_ & truth).sum() / (object_.sum() + truth.sum())


def cut_case(name, *options, device="cpu", want_dice=0.95, image=ct_path):
    out = os.path.join(work, name)
    result = run("cut", image, "--seeds", seeds_path, "-o", out, "--device", device, *options)
    if result.returncode == 5 and device == "gpu":
        print(f"{name}: no usable GPU, skipped")
        return None
    if not check(result.returncode == 0, f"{name}: exit {result.returncode}: {result.stderr.strip()}"):
        return None
    summary = json.load(open(os.path.join(out, "summary.json")))["result"]
    value = dice(zyx(nib.load(os.path.join(out, "labels.nii.gz"))))
    check(value >= want_dice, f"{name}: Dice {value:.4f} < {want_dice}")
    check(summary["energy"] == summary["cut_value"], f"{name}: energy {summary['energy']} != cut value "
          f"{summary['cut_value']}")
    rows = open(os.path.join(out, "components.csv")).read().splitlines()
    check(len(rows) == summary["components"] + 1, f"{name}: components.csv has {len(rows) - 1} rows, summary says "
          f"{summary['components']}")
    print(f"{name}: Dice {value:.4f}, energy {summary['energy']} = cut value {summary['cut_value']}, "
          f"{summary['iterations']} iterations, {summary['rounds_run']} round(s)")
    return summary


cpu = cut_case("conn6")
cut_case("conn26", "--conn", "26")
cut_case("conn8-slices", "--conn", "8")
cut_case("rounds3", "--rounds", "3")
prior = ndimage.binary_dilation(truth, iterations=2).astype(np.uint8)
prior_path = os.path.join(work, "prior.nii.gz")
save(prior_path, prior, ct)
cut_case("prior", "--prior", prior_path, "--prior-weight", "1")
gpu = cut_case("conn6-gpu", device="gpu")

# The phantom separates by intensity alone (energy 0). With Gaussian noise of sigma 150 HU added, intensity
# alone mislabels many voxels and the boundary term must carry the segmentation: energies are large, and the
# GPU's must equal the CPU's.
noisy_path = os.path.join(work, "ct-noisy.nii.gz")
noisy = np.rint(hu + np.random.default_rng(7).normal(0, 150, hu.shape)).astype(np.int16)
save(noisy_path, noisy, ct)
noisy_cpu = cut_case("noisy-conn6", image=noisy_path)
cut_case("noisy-conn26", "--conn", "26", image=noisy_path)
cut_case("noisy-conn8-slices", "--conn", "8", image=noisy_path)
if noisy_cpu:
    check(noisy_cpu["energy"] > 0, "noisy phantom: energy 0, the boundary term did nothing")
noisy_gpu = cut_case("noisy-conn6-gpu", device="gpu", image=noisy_path)
if noisy_cpu and noisy_gpu:
    check(noisy_gpu["energy"] == noisy_cpu["energy"], f"noisy: GPU energy {noisy_gpu['energy']} != CPU "
          f"{noisy_cpu['energy']}")

# The outputs are ordinary voxlabel outputs: `stats` re-measures labels.nii.gz into the same table, and
# `compare` finds them identical to `voxlabel label` of the same object (the same bwlabeln numbering).
conn6 = os.path.join(work, "conn6")
result = run("stats", os.path.join(conn6, "labels.nii.gz"), "--intensity", ct_path, "-o", os.path.join(work, "stats.csv"))
check(result.returncode == 0, f"stats on the cut's labels: exit {result.returncode}: {result.stderr.strip()}")
if result.returncode == 0:
    ours = open(os.path.join(conn6, "components.csv")).read().splitlines()
    again = open(os.path.join(work, "stats.csv")).read().splitlines()
    check(len(ours) == len(again) and ours[0] == again[0], "stats' table differs in rows or columns from components.csv")
relabelled = os.path.join(work, "relabelled")
run("label", os.path.join(conn6, "labels.nii.gz"), "--threshold", "1", "--conn", "6", "-o", relabelled, "--quiet")
result = run("compare", os.path.join(conn6, "labels.nii.gz"), os.path.join(relabelled, "labels.nii.gz"))
check(result.returncode == 0 and result.stdout.startswith("verdict: identical"), f"compare: {result.stdout.strip()[:80]}")
if cpu and gpu:
    check(gpu["energy"] == cpu["energy"], f"GPU energy {gpu['energy']} != CPU energy {cpu['energy']}")

# Refusals: one error line, exit 3 (bad input), nothing written.
def refused(name, seeds_volume, want, like=ct, affine=None):
    path = os.path.join(work, name + ".nii.gz")
    image = nib.Nifti1Image(np.asfortranarray(seeds_volume.transpose(2, 1, 0)),
                            like.affine if affine is None else affine)
    nib.save(image, path)
    out = os.path.join(work, "refused-" + name)
    result = run("cut", ct_path, "--seeds", path, "-o", out)
    lines = result.stderr.strip().splitlines()
    check(result.returncode == 3, f"{name}: exit {result.returncode}, want 3")
    check(len(lines) == 1 and lines[0].startswith("voxlabel: error: ") and want in lines[0],
          f"{name}: stderr {result.stderr.strip()!r}, want one error line with {want!r}")
    check(not os.path.exists(os.path.join(out, "labels.nii.gz")), f"{name}: labels written")


refused("only-object", np.where(seeds == 1, 1, 0).astype(np.uint8), "only object seeds")
refused("only-background", np.where(seeds == 2, 2, 0).astype(np.uint8), "only background seeds")
refused("smaller", seeds[:, :, :-1].copy(), "draw the seeds on this image's grid")
shifted = ct.affine.copy()
shifted[:3, 3] += 7.0
refused("shifted", seeds, "different geometry", affine=shifted)
refused("value-3", np.where(seeds == 2, 3, seeds).astype(np.uint8), "seeds hold 0 (none), 1 (object) and 2")

# A PNG image with PNG seeds: a noisy bright square on a dark background, one object stroke, a background frame.
try:
    import cv2
except ImportError:
    cv2 = None
if cv2 is not None:
    image = np.full((80, 100), 40.0)
    image[20:60, 30:70] = 180
    image = np.clip(image + np.random.default_rng(1).normal(0, 15, image.shape), 0, 255).astype(np.uint8)
    png_seeds = np.zeros(image.shape, np.uint8)
    png_seeds[35:45, 45:55] = 1
    png_seeds[:3, :] = png_seeds[-3:, :] = 2
    cv2.imwrite(os.path.join(work, "image.png"), cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    cv2.imwrite(os.path.join(work, "image-seeds.png"), png_seeds)
    out = os.path.join(work, "png")
    result = run("cut", os.path.join(work, "image.png"), "--seeds", os.path.join(work, "image-seeds.png"), "-o", out)
    if check(result.returncode == 0, f"png: exit {result.returncode}: {result.stderr.strip()}"):
        labels = zyx(nib.load(os.path.join(out, "labels.nii.gz")))[0] > 0
        square = np.zeros(image.shape, bool)
        square[20:60, 30:70] = True
        value = 2.0 * (labels & square).sum() / (labels.sum() + square.sum())
        check(value >= 0.95, f"png: Dice {value:.4f} < 0.95")
        print(f"png: Dice {value:.4f}")
sys.exit(finish())
