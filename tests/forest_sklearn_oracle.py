"""R3: voxlabel's forest against scikit-learn's RandomForestClassifier on the same features and samples.

Four tasks, each with scribbles made here from a ground truth (random voxels of each class, one voxel off
its border) and classified end to end through the CLI (voxlabel train, voxlabel classify):
  phantom3d   voxlabel phantom CT, 3D bank; truth: the mean of 4 noise seeds at -500 and 200 HU (air and lung /
              soft tissue / bone and contrast); the classified CT is seed 1
  phantom2d   the same CT, 2D bank per slice, 4 classes (fat split from soft tissue at -30 HU)
  picture     a 2D PNG: discs and ellipses with correlated noise (the Shepp-Logan-like task of stages2d.md)
  realct      a 96 x 96 block of a real series from ../shared (Philips, dcm_qa_ct), 3D bank; truth: Gaussian-smoothed HU at -500 and
              200; skipped (77) when the shared data is absent
scikit-learn (Debian python3-sklearn, 100 trees, all cores) trains on forest_tool's features of the same
scribbled voxels and predicts every voxel's features; voxlabel's forest (forest_tool) does the same. Single
forests of either vary by a few hundredths of Dice with the seed, so each is the mean over seeds 1, 2, 3.
Checks (R3): the CLI's class map equals forest_tool's seed-1 forest on these features (same features, same
samples); on phantom3d the CLI's mean Dice and voxlabel's seed-mean Dice are >= 0.99; on every task voxlabel's
seed-mean Dice is within 0.01 of scikit-learn's (either side); the model's out-of-bag accuracy is reported.
Without the shared series the other three tasks still run and are checked, then the test exits 77 (skipped).

usage: forest_sklearn_oracle.py VOXLABEL FOREST_TOOL WORKDIR SHARED_DATA"""
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np
from scipy import ndimage as ndi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

try:
    from sklearn.ensemble import RandomForestClassifier
except ImportError:
    print('SKIP: scikit-learn is not installed (Debian python3-sklearn)')
    sys.exit(77)

VOXLABEL, TOOL, WORK, SHARED = sys.argv[1:5]
SEEDS = (1, 2, 3)


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        print(' '.join(args), '\n', result.stdout, result.stderr)
    return result


def read_nifti_zyx(path):
    return np.asarray(nib.load(path).dataobj).transpose(2, 1, 0)


def write_nifti_zyx(path, array, like):
    img = nib.load(like)
    nib.save(nib.Nifti1Image(np.asfortranarray(array.transpose(2, 1, 0)), img.affine), path)


def write_plain_nifti(path, array):
    nib.save(nib.Nifti1Image(np.asfortranarray(array.transpose(2, 1, 0)), np.eye(4)), path)


def scribbles_from(truth, per_class, rng, dims):
    """Random voxels of each class, one voxel inside its border (per slice for 2D tasks)."""
    out = np.zeros(truth.shape, np.uint8)
    structure = np.zeros((3, 3, 3), bool)
    structure[1] = ndi.generate_binary_structure(2, 1)
    if dims == 3:
        structure = ndi.generate_binary_structure(3, 1)
    for c in range(1, truth.max() + 1):
        inside = ndi.binary_erosion(truth == c, structure)
        where = np.flatnonzero(inside if inside.any() else truth == c)
        pick = rng.choice(where, min(per_class, where.size), replace=False)
        out.flat[pick] = c
    return out


def dice_mean(a, b, classes):
    return float(np.mean([2.0 * np.sum((a == c) & (b == c)) / max(np.sum(a == c) + np.sum(b == c), 1)
                          for c in range(1, classes + 1)]))


def task(name, image_path, truth, dims, rng, per_class=300):
    work = os.path.join(WORK, name)
    os.makedirs(work, exist_ok=True)
    classes = int(truth.max())
    scribbles = scribbles_from(truth, per_class, rng, dims)
    if image_path.endswith('.png'):
        from skimage import io as skio
        scribble_path = os.path.join(work, 'scribbles.png')
        skio.imsave(scribble_path, scribbles[0], check_contrast=False)
    else:
        scribble_path = os.path.join(work, 'scribbles.nii.gz')
        write_nifti_zyx(scribble_path, scribbles, image_path)
    model = os.path.join(work, 'model.vlrf')
    out = os.path.join(work, 'out')
    trained = run([VOXLABEL, 'train', image_path, scribble_path, '-o', model, '--features', '%dd' % dims,
                   '--device', 'cpu', '--force'])
    if not check(trained.returncode == 0, '%s: voxlabel train' % name):
        return
    oob = [line for line in trained.stdout.splitlines() if line.startswith('out-of-bag')]
    classified = run([VOXLABEL, 'classify', image_path, '--model', model, '-o', out, '--device', 'cpu',
                      '--no-probabilities', '--force', '--format', 'nii'])
    if not check(classified.returncode == 0, '%s: voxlabel classify' % name):
        return
    ours = read_nifti_zyx(os.path.join(out, 'classes.nii'))
    # scikit-learn on the same features of the same samples
    features_path = os.path.join(work, 'features.f32')
    tool_input = image_path
    if image_path.endswith('.png'):  # forest_tool reads volume files: the same samples as NIfTI
        tool_input = os.path.join(work, 'picture.nii')
        from skimage import io as skio
        write_plain_nifti(tool_input, skio.imread(image_path)[None])
    result = run([TOOL, 'features', tool_input, str(dims), features_path])
    if not check(result.returncode == 0, '%s: forest_tool features' % name):
        return
    count = len(result.stdout.split())
    features = np.fromfile(features_path, np.float32).reshape(count, -1).T
    os.remove(features_path)
    labelled = np.flatnonzero(scribbles)
    # the same forest from forest_tool on these samples gives the CLI's class map: same features, same samples
    xs, ys = os.path.join(work, 'xs.f32'), os.path.join(work, 'ys.u8')
    features[labelled].tofile(xs)
    scribbles.flat[labelled].astype(np.uint8).tofile(ys)
    all_path = os.path.join(work, 'all.f32')
    features.tofile(all_path)
    ours_by_seed, theirs_by_seed = [], []
    for seed in SEEDS:
        seed_model = os.path.join(work, 'seed%d.vlrf' % seed)
        probabilities = os.path.join(work, 'p.f32')
        if not check(run([TOOL, 'train', xs, ys, str(labelled.size), str(count), str(dims), seed_model, '100',
                          str(seed), 'cpu']).returncode == 0 and
                     run([TOOL, 'predict', seed_model, all_path, str(features.shape[0]), probabilities]).returncode == 0,
                     '%s: forest_tool seed %d' % (name, seed)):
            return
        mine = (np.fromfile(probabilities, np.float32).reshape(-1, classes).argmax(1) + 1).reshape(truth.shape)
        if seed == 1:
            check(np.array_equal(mine, ours), '%s: the CLI and forest_tool forests classify alike' % name)
        ours_by_seed.append(dice_mean(mine, truth, classes))
        forest = RandomForestClassifier(n_estimators=100, n_jobs=-1, random_state=seed)
        forest.fit(features[labelled], scribbles.flat[labelled])
        theirs_by_seed.append(dice_mean(forest.predict(features).reshape(truth.shape), truth, classes))
    os.remove(all_path)
    d_cli = dice_mean(ours, truth, classes)
    d_ours, d_theirs = float(np.mean(ours_by_seed)), float(np.mean(theirs_by_seed))
    print('%-10s %d classes, %d features, %d samples: CLI Dice %.4f (%s); mean Dice over seeds %s: voxlabel %.4f, '
          'scikit-learn %.4f' % (name, classes, count, labelled.size, d_cli, oob[0] if oob else 'no OOB line',
                                 SEEDS, d_ours, d_theirs))
    check(abs(d_ours - d_theirs) <= 0.01, '%s: voxlabel Dice %.4f is not within 0.01 of scikit-learn %.4f'
          % (name, d_ours, d_theirs))
    return d_cli, d_ours


def phantom_tasks(rng):
    work = os.path.join(WORK, 'phantom')
    os.makedirs(work, exist_ok=True)
    volumes = []
    for seed in (1, 2, 3, 4):
        ct_dir = os.path.join(work, 'ct%d' % seed)
        nii = os.path.join(work, 'ct%d.nii.gz' % seed)
        if not os.path.exists(nii):
            run([VOXLABEL, 'phantom', '-o', ct_dir, '--size', '96x96x24', '--spacing', '1.6,2.5', '--seed', str(seed),
                 '--quiet', '--force'])
            run([VOXLABEL, 'convert', ct_dir, nii, '--quiet'])
            shutil.rmtree(ct_dir, ignore_errors=True)
        volumes.append(read_nifti_zyx(nii).astype(np.float64))
    mean = np.mean(volumes, axis=0)
    image = os.path.join(work, 'ct1.nii.gz')
    truth3 = np.digitize(mean, [-500, 200]).astype(np.uint8) + 1
    dice = task('phantom3d', image, truth3, 3, rng)
    if dice is not None:
        check(dice[0] >= 0.99, 'phantom3d: the CLI\'s Dice %.4f < 0.99' % dice[0])
        check(dice[1] >= 0.99, 'phantom3d: voxlabel\'s seed-mean Dice %.4f < 0.99' % dice[1])
    truth4 = np.digitize(mean, [-500, -30, 200]).astype(np.uint8) + 1
    task('phantom2d', image, truth4, 2, rng)


def picture_task(rng):
    from skimage import io as skio
    work = os.path.join(WORK, 'picture')
    os.makedirs(work, exist_ok=True)
    n = 160
    y, x = np.mgrid[0:n, 0:n]
    truth = np.ones((n, n), np.uint8)
    clean = np.full((n, n), 60.0)
    for cy, cx, ry, rx, value, cls in ((80, 80, 62, 50, 120, 2), (60, 65, 14, 10, 190, 3), (105, 95, 12, 18, 190, 3),
                                       (85, 110, 7, 7, 190, 3)):
        inside = ((y - cy) / ry) ** 2 + ((x - cx) / rx) ** 2 <= 1
        clean[inside] = value
        truth[inside] = cls
    noise = ndi.gaussian_filter(rng.normal(0, 1, (n, n)), 1.2)
    picture = np.clip(clean + 25 * noise / noise.std(), 0, 255).astype(np.uint8)
    path = os.path.join(work, 'picture.png')
    skio.imsave(path, picture, check_contrast=False)
    task('picture', path, truth[None], 2, rng, per_class=200)


def real_task(rng):
    series = os.path.join(SHARED, 'dicom', 'dcm_qa_ct_philips_study')
    if not os.path.isdir(series):
        print('realct: %s is absent; skipped' % series)
        return False
    work = os.path.join(WORK, 'realct')
    os.makedirs(work, exist_ok=True)
    whole = os.path.join(work, 'series.nii.gz')
    if not run([VOXLABEL, 'convert', series, whole, '--quiet', '--force']).returncode == 0:
        check(False, 'realct: convert the shared series')
        return
    # a 96 x 96 block through every slice keeps scikit-learn's feature matrix small
    img = nib.load(whole)
    block = np.asarray(img.dataobj)[208:304, 208:304, :]
    nii = os.path.join(work, 'ct.nii.gz')
    affine = img.affine.copy()
    affine[:3, 3] = img.affine[:3, :3] @ np.array([208, 208, 0]) + img.affine[:3, 3]
    nib.save(nib.Nifti1Image(block, affine), nii)
    hu = read_nifti_zyx(nii).astype(np.float64)
    truth = np.digitize(ndi.gaussian_filter(hu, 1.0), [-500, 200]).astype(np.uint8) + 1
    task('realct', nii, truth, 3, rng)
    return True


def main():
    os.makedirs(WORK, exist_ok=True)
    rng = np.random.default_rng(2022)
    phantom_tasks(rng)
    picture_task(rng)
    real = real_task(rng)
    status = finish()
    if status == 0 and not real:
        print('SKIP: the real-series task needs ../shared/test-data/dicom (the other tasks passed)')
        return 77
    return status


if __name__ == '__main__':
    sys.exit(main())
