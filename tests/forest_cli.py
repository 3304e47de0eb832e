"""The forest commands end to end on a small phantom: train (OOB accuracy and importances printed, model
written only there), classify (class map, probabilities, preview; existing outputs kept without --force),
label --model --class (components and summary as with a threshold, and the same components as labelling the
class map with --threshold K:K), and the refusals a user meets: scribbles of another geometry, a class with no
scribbles, a model for other features, --class out of range, --model with --threshold. Every refusal is one
'voxlabel: error:' line with the documented exit code and writes nothing.

usage: forest_cli.py VOXLABEL WORKDIR"""
import csv
import json
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish, refusal_problem  # noqa: E402

VOXLABEL, WORK = sys.argv[1:3]


def run(*args):
    return subprocess.run([VOXLABEL] + list(args), capture_output=True, text=True)


def refused(name, result, code, output=None, words=()):
    problem = refusal_problem(result, code, output)
    if problem is None:
        missing = [w for w in words if w not in result.stderr]
        problem = 'error lacks %s: %s' % (missing, result.stderr.strip()) if missing else None
    check(problem is None, '%s: %s' % (name, problem))


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    ct_dir = os.path.join(WORK, 'ct')
    ct = os.path.join(WORK, 'ct.nii.gz')
    check(run('phantom', '-o', ct_dir, '--size', '80x72x16', '--spacing', '2,3', '--quiet').returncode == 0, 'phantom')
    check(run('convert', ct_dir, ct, '--quiet').returncode == 0, 'convert')
    img = nib.load(ct)
    hu = np.asarray(img.dataobj)  # [x, y, z]
    scribbles = np.zeros(hu.shape, np.uint8)
    rng = np.random.default_rng(1)
    pick = rng.random(hu.shape) < 0.02
    scribbles[pick & (hu < -500)] = 1
    scribbles[pick & (hu >= -500) & (hu < 200)] = 2
    scribbles[pick & (hu >= 200)] = 3
    scribble_path = os.path.join(WORK, 'scribbles.nii.gz')
    nib.save(nib.Nifti1Image(scribbles, img.affine), scribble_path)
    model = os.path.join(WORK, 'model.vlrf')

    result = run('train', ct, scribble_path, '-o', model, '--trees', '20', '--device', 'cpu')
    check(result.returncode == 0 and os.path.exists(model), 'train: %s' % result.stderr.strip())
    oob = [float(line.split(':')[1]) for line in result.stdout.splitlines() if line.startswith('out-of-bag accuracy:')]
    check(oob and oob[0] >= 0.9, 'train reports a high out-of-bag accuracy: %s' % result.stdout)
    check('feature importances' in result.stdout and 'gaussian' in result.stdout, 'train lists importances')
    refused('train over an existing model', run('train', ct, scribble_path, '-o', model), 4, None, ['exists'])

    out = os.path.join(WORK, 'classified')
    result = run('classify', ct, '--model', model, '-o', out, '--preview', '--device', 'cpu')
    names = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(result.returncode == 0 and names == ['classes.nii.gz', 'preview.png', 'probability_1.nii.gz',
                                               'probability_2.nii.gz', 'probability_3.nii.gz'],
          'classify writes the class map, preview and probabilities: %s %s' % (names, result.stderr.strip()))
    if result.returncode == 0:
        classes = np.asarray(nib.load(os.path.join(out, 'classes.nii.gz')).dataobj)
        probabilities = np.stack([np.asarray(nib.load(os.path.join(out, 'probability_%d.nii.gz' % k)).dataobj)
                                  for k in (1, 2, 3)])
        check(probabilities.dtype == np.float32, 'probabilities are float32')
        check(np.allclose(probabilities.sum(0), 1, atol=1e-5), 'probabilities sum to 1')
        check(np.array_equal(classes, probabilities.argmax(0) + 1), 'the class map is the argmax')
        truth = np.digitize(hu, [-500, 200]) + 1
        check(np.mean(classes == truth) > 0.98, 'classify agrees with the HU classes on %.4f' % np.mean(classes == truth))
    refused('classify into existing outputs', run('classify', ct, '--model', model, '-o', out), 4)

    # label --model --class K == label the class map with --threshold K:K
    a, b = os.path.join(WORK, 'label_model'), os.path.join(WORK, 'label_threshold')
    result = run('label', ct, '--model', model, '--class', '3', '-o', a, '--device', 'cpu', '--quiet')
    check(result.returncode == 0, 'label --model: %s' % result.stderr.strip())
    result = run('label', os.path.join(out, 'classes.nii.gz'), '--threshold', '3:3', '-o', b, '--quiet')
    check(result.returncode == 0, 'label the class map: %s' % result.stderr.strip())
    if os.path.isdir(a) and os.path.isdir(b):
        la = np.asarray(nib.load(os.path.join(a, 'labels.nii.gz')).dataobj)
        lb = np.asarray(nib.load(os.path.join(b, 'labels.nii.gz')).dataobj)
        check(np.array_equal(la, lb) and la.max() > 0, 'label --model gives the components of the class map')
        rows = list(csv.DictReader(open(os.path.join(a, 'components.csv'))))
        check(len(rows) == la.max(), 'components.csv has one row per component')
        summary = json.load(open(os.path.join(a, 'summary.json')))
        check(model in json.dumps(summary), 'summary.json names the model')

    # refusals
    other = os.path.join(WORK, 'other.nii.gz')
    nib.save(nib.Nifti1Image(scribbles[:, :, :-1], img.affine), other)
    refused('scribbles of another size', run('train', ct, other, '-o', model + '.x'), 3, model + '.x',
            ['other.nii.gz', 'voxels'])
    gap = scribbles.copy()
    gap[gap == 2] = 0
    nib.save(nib.Nifti1Image(gap, img.affine), other)
    refused('a class with no scribbles', run('train', ct, other, '-o', model + '.x'), 3, model + '.x',
            ['class 2 has no scribbles'])
    forged = bytearray(open(model, 'rb').read())
    forged[8 + 4 + 4 + 8 * 7 + 4 * 7 + 24 + 4: 8 + 4 + 4 + 8 * 7 + 4 * 7 + 24 + 8] = (49).to_bytes(4, 'little')
    forged_path = os.path.join(WORK, 'forged.vlrf')
    open(forged_path, 'wb').write(bytes(forged))
    refused('a model for other features', run('classify', ct, '--model', forged_path, '-o', WORK + '/f'), 3,
            WORK + '/f', ['features'])
    refused('--class beyond the model', run('label', ct, '--model', model, '--class', '7', '-o', WORK + '/g'), 2,
            None, ['classes 1..3'])
    refused('--model with --threshold', run('label', ct, '--model', model, '--class', '1', '--threshold', '5',
                                            '-o', WORK + '/h'), 2, WORK + '/h')
    refused('--model without --class', run('label', ct, '--model', model, '-o', WORK + '/i'), 2, WORK + '/i')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
