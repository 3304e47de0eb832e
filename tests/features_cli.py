"""The feature commands end to end: features, match, register-slices (issue 21, item 4).

  - features on an image: keypoints.csv rows = descriptors.npy rows (float32 and --uint8), the keypoints equal
    OpenCV's (count and positions within 0.01 px), preview.png is an RGB image of the input's size;
  - features on a NIfTI volume: one keypoint list per slice, LPS columns from the volume's affine, the same
    slice content gives the same keypoints; --hu (float HU) finds about as many on in-window values;
  - match: a rotated and scaled copy gives back the known similarity (corner error < 1 px); outputs exist;
  - register-slices: a volume whose slices are shuffled copies of another's finds every slice back;
  - refusals: a constant image, a tiny image, an empty file (exit 3, one error line, nothing written), an
    existing output without --force (exit 4), a bad option (exit 2).
usage: features_cli.py VOXLABEL WORKDIR"""
import csv
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_check as tc  # noqa: E402

try:
    import cv2
    import nibabel
    import numpy as np
    import skimage.data
except ImportError as error:
    print('SKIP: OpenCV, nibabel, numpy or scikit-image missing:', error)
    sys.exit(77)

VOXLABEL, WORK = sys.argv[1], sys.argv[2]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)


def run(*args):
    return subprocess.run([VOXLABEL] + [str(a) for a in args] + ['--device', 'cpu'], capture_output=True, text=True)


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def image_features():
    camera = skimage.data.camera()[::2, ::2].copy()  # 256 x 256 keeps the test quick
    path = os.path.join(WORK, 'camera.png')
    cv2.imwrite(path, camera)
    out = os.path.join(WORK, 'feats')
    result = run('features', path, '-o', out)
    if not tc.check(result.returncode == 0, 'features on an image: exit %d: %s' % (result.returncode, result.stderr)):
        return
    table = rows(os.path.join(out, 'keypoints.csv'))
    descriptors = np.load(os.path.join(out, 'descriptors.npy'))
    tc.check(descriptors.shape == (len(table), 128) and descriptors.dtype == np.float32,
             'descriptors.npy is %s %s for %d keypoints' % (descriptors.shape, descriptors.dtype, len(table)))
    reference = cv2.SIFT_create().detect(camera, None)
    ours = sorted((float(r['x']), float(r['y'])) for r in table)
    theirs = sorted(k.pt for k in reference)
    tc.check(len(ours) == len(theirs) and all(abs(a[0] - b[0]) < 0.01 and abs(a[1] - b[1]) < 0.01
                                              for a, b in zip(ours, theirs)),
             'features: %d keypoints, OpenCV %d, or positions differ' % (len(ours), len(theirs)))
    preview = cv2.imread(os.path.join(out, 'preview.png'), cv2.IMREAD_UNCHANGED)
    tc.check(preview is not None and preview.shape == (256, 256, 3), 'preview.png is not a 256x256 RGB image')
    result = run('features', path, '-o', out, '--uint8', '--force')
    tc.check(result.returncode == 0 and np.load(os.path.join(out, 'descriptors.npy')).dtype == np.uint8 and
             np.array_equal(np.load(os.path.join(out, 'descriptors.npy')), descriptors.astype(np.uint8)),
             '--uint8 descriptors are not the float ones as uint8')
    result = run('features', path, '-o', out)
    tc.check(result.returncode == 4 and result.stderr.count('voxlabel: error: ') == 1,
             'an existing output without --force: exit %d, want 4' % result.returncode)


def volume_features():
    camera = skimage.data.camera()[::2, ::2]
    stack = np.stack([camera, np.roll(camera, 9, axis=1), camera], axis=2).astype(np.int16)  # x, y, z order below
    affine = np.diag([0.8, 0.8, 2.5, 1.0])
    affine[:3, 3] = [-100, -120, 30]
    # NIfTI stores x fastest: array[x, y, z]; the image's column is x.
    path = os.path.join(WORK, 'volume.nii.gz')
    nibabel.save(nibabel.Nifti1Image(np.transpose(stack, (1, 0, 2)), affine), path)
    out = os.path.join(WORK, 'vol')
    result = run('features', path, '-o', out, '--window', '127.5:256')
    if not tc.check(result.returncode == 0, 'features on a volume: exit %d: %s' % (result.returncode, result.stderr)):
        return
    table = rows(os.path.join(out, 'keypoints.csv'))
    by_slice = [[r for r in table if r['slice'] == str(z)] for z in range(3)]
    tc.check(all(by_slice), 'a slice without keypoints')
    key = [[(r['x'], r['y'], r['size'], r['angle']) for r in s] for s in by_slice]
    tc.check(key[0] == key[2], 'identical slices 0 and 2 gave different keypoints')
    # --hu: the same window as a linear map without rounding or clipping; on these in-window values it finds
    # nearly the same keypoints as the 8-bit rendering.
    hu_out = os.path.join(WORK, 'vol_hu')
    result = run('features', path, '-o', hu_out, '--window', '127.5:256', '--hu')
    if tc.check(result.returncode == 0, 'features --hu: exit %d: %s' % (result.returncode, result.stderr)):
        hu_count = len(rows(os.path.join(hu_out, 'keypoints.csv')))
        tc.check(abs(hu_count - len(table)) <= 0.05 * len(table), '--hu found %d keypoints, the 8-bit rendering %d' %
                 (hu_count, len(table)))
    r = table[0]
    # NIfTI RAS -> LPS: x and y change sign.
    expect = (-(-100 + 0.8 * float(r['x'])), -(-120 + 0.8 * float(r['y'])), 30 + 2.5 * float(r['slice']))
    got = (float(r['lps_x']), float(r['lps_y']), float(r['lps_z']))
    tc.check(all(abs(a - b) < 1e-3 for a, b in zip(got, expect)), 'LPS %s, expected %s' % (got, expect))
    return stack


def match_pair():
    camera = skimage.data.camera()[::2, ::2].copy()
    h, w = camera.shape
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), 12.0, 1.05)
    matrix[:, 2] += (4.0, -6.0)
    moved = cv2.warpAffine(camera, matrix, (w, h), flags=cv2.INTER_LINEAR)
    a, b = os.path.join(WORK, 'a.png'), os.path.join(WORK, 'b.png')
    cv2.imwrite(a, camera)
    cv2.imwrite(b, moved)
    out = os.path.join(WORK, 'match')
    result = run('match', a, b, '-o', out)
    if not tc.check(result.returncode == 0, 'match: exit %d: %s' % (result.returncode, result.stderr)):
        return
    transform = rows(os.path.join(out, 'transforms.csv'))[0]
    m = np.array([[float(transform[k]) for k in ('m00', 'm01', 'm02')],
                  [float(transform[k]) for k in ('m10', 'm11', 'm12')]])
    corners = np.array([[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]], float)
    error = np.hypot(*((corners @ m[:, :2].T + m[:, 2]) - (corners @ matrix[:, :2].T + matrix[:, 2])).T).max()
    tc.check(error < 1, 'match: corner error %.3f px' % error)
    tc.check(abs(float(transform['rotation_deg']) - 12.0) < 0.3, 'match: rotation %s, want 12 (as OpenCV)' %
             transform['rotation_deg'])
    with open(os.path.join(out, 'transforms.json')) as handle:
        tc.check(json.load(handle)['pairs'][0]['inliers'] == int(transform['inliers']), 'JSON and CSV disagree')
    matches = rows(os.path.join(out, 'matches.csv'))
    tc.check(len(matches) == int(transform['matches']) and
             sum(int(r['inlier']) for r in matches) == int(transform['inliers']), 'matches.csv rows or inliers')
    png = cv2.imread(os.path.join(out, 'matches.png'))
    tc.check(png is not None and png.shape == (h, 2 * w, 3), 'matches.png is not the side-by-side image')


def register(stack):
    order = [2, 0, 1]
    affine = np.diag([0.8, 0.8, 2.5, 1.0])
    a, b = os.path.join(WORK, 'ra.nii.gz'), os.path.join(WORK, 'rb.nii.gz')
    camera = skimage.data.camera()[::2, ::2].astype(np.int16)
    slices = np.stack([camera, np.roll(camera, 40, axis=0), np.flipud(camera)], axis=2)
    nibabel.save(nibabel.Nifti1Image(np.transpose(slices, (1, 0, 2)), affine), a)
    nibabel.save(nibabel.Nifti1Image(np.transpose(slices[:, :, order], (1, 0, 2)), affine), b)
    out = os.path.join(WORK, 'reg')
    result = run('register-slices', a, b, '-o', out, '--search', 'all', '--window', '127.5:256')
    if not tc.check(result.returncode == 0, 'register-slices: exit %d: %s' % (result.returncode, result.stderr)):
        return
    table = rows(os.path.join(out, 'registration.csv'))
    found = [int(r['slice_b']) for r in table]
    tc.check(found == [order.index(z) for z in range(3)], 'register-slices found %s, want %s' %
             (found, [order.index(z) for z in range(3)]))
    result = subprocess.run([VOXLABEL, 'register-slices', a, b, '--search', '0', '--device', 'cpu', '--quiet',
                             '--window', '127.5:256'], capture_output=True, text=True)
    tc.check(result.returncode == 0 and result.stdout.startswith('slice_a,slice_b'), 'CSV on stdout without -o')


def refusals():
    cases = {'constant.png': np.full((64, 64), 7, np.uint8), 'tiny.png': (np.arange(64) % 7 * 30).astype(
        np.uint8).reshape(8, 8)}
    for name, image in cases.items():
        cv2.imwrite(os.path.join(WORK, name), image)
    open(os.path.join(WORK, 'empty.png'), 'wb').close()
    for name in ('constant.png', 'tiny.png', 'empty.png'):
        out = os.path.join(WORK, 'refused_' + name)
        result = run('features', os.path.join(WORK, name), '-o', out)
        problem = tc.refusal_problem(result, 3)
        tc.check(problem is None, 'features %s: %s (%s)' % (name, problem, result.stderr.strip()))
        tc.check(not os.path.exists(os.path.join(out, 'keypoints.csv')), '%s: keypoints.csv written' % name)
    result = run('features', os.path.join(WORK, 'camera.png'), '-o', WORK + '/x', '--sigma', '-1')
    tc.check(result.returncode == 2, '--sigma -1: exit %d, want 2' % result.returncode)
    result = run('match', os.path.join(WORK, 'camera.png'), '-o', WORK + '/x')
    tc.check(result.returncode == 2, 'match with one input: exit %d, want 2' % result.returncode)


def main():
    image_features()
    stack = volume_features()
    match_pair()
    register(stack)
    refusals()
    return tc.finish()


if __name__ == '__main__':
    sys.exit(main())
