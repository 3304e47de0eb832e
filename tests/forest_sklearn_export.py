"""R2 on an exported forest: scikit-learn fits a RandomForestClassifier on voxlabel's features of a phantom,
scripts/forest_from_sklearn.py converts it to .vlrf, and `voxlabel classify --device DEVICE` on the image must
give scikit-learn's predict_proba within 1e-6 on every voxel, with the same class except at exact ties.
A model whose feature count does not match its bank is refused by the converter and by voxlabel.
Needs only numpy and scikit-learn (runs on the GPU host too); NIfTI is written by hand.

usage: forest_sklearn_export.py VOXLABEL FOREST_TOOL WORKDIR [DEVICE]   (DEVICE cpu (default) or gpu)"""
import os
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'scripts'))
from test_check import check, finish  # noqa: E402

try:
    from sklearn.ensemble import RandomForestClassifier
except ImportError:
    print('SKIP: scikit-learn is not installed')
    sys.exit(77)
import forest_from_sklearn  # noqa: E402


def write_nifti_i16(path, zyx, spacing):
    """Minimal NIfTI-1 (.nii): int16, sform = diag(spacing) (RAS), data x fastest."""
    nz, ny, nx = zyx.shape
    header = bytearray(352)
    struct.pack_into('<i', header, 0, 348)
    struct.pack_into('<8h', header, 40, 3, nx, ny, nz, 1, 1, 1, 1)
    struct.pack_into('<hh', header, 70, 4, 16)                      # datatype int16, bitpix
    struct.pack_into('<8f', header, 76, 1.0, spacing[0], spacing[1], spacing[2], 1, 1, 1, 1)
    struct.pack_into('<f', header, 108, 352.0)                      # vox_offset
    struct.pack_into('<ff', header, 112, 1.0, 0.0)                  # scl_slope, scl_inter
    struct.pack_into('<hh', header, 252, 0, 1)                      # qform_code 0, sform_code 1
    struct.pack_into('<4f', header, 280, spacing[0], 0, 0, 0)
    struct.pack_into('<4f', header, 296, 0, spacing[1], 0, 0)
    struct.pack_into('<4f', header, 312, 0, 0, spacing[2], 0)
    header[344:348] = b'n+1\0'
    with open(path, 'wb') as f:
        f.write(bytes(header) + zyx.astype('<i2').tobytes())


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode not in (0, 77):
        print(' '.join(args), result.stdout, result.stderr)
    return result


def main():
    voxlabel, tool, work = sys.argv[1:4]
    device = sys.argv[4] if len(sys.argv) > 4 else 'cpu'
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    nz, ny, nx = 12, 72, 80
    g = np.indices((nz, ny, nx)).astype(float)
    blobs = ((g[2] - 40) ** 2 / 600 + (g[1] - 36) ** 2 / 400 + (g[0] - 6) ** 2 / 20 < 1) * 300.0
    blobs += ((g[2] - 20) ** 2 + (g[1] - 20) ** 2 < 60) * 700.0
    image = (blobs - 100 + rng.normal(0, 40, (nz, ny, nx))).round()
    truth = np.digitize(blobs - 100, [0, 400]) + 1
    path = os.path.join(work, 'image.nii')
    spacing = (0.9, 0.9, 2.0)
    write_nifti_i16(path, image, spacing)
    features_path = os.path.join(work, 'features.f32')
    result = run([tool, 'features', path, '3', features_path])
    if not check(result.returncode == 0, 'forest_tool features'):
        return finish()
    count = len(result.stdout.split())
    x = np.fromfile(features_path, np.float32).reshape(count, -1).T
    picked = rng.choice(x.shape[0], 1500, replace=False)
    forest = RandomForestClassifier(n_estimators=30, random_state=0, n_jobs=-1).fit(x[picked], truth.ravel()[picked])
    model = os.path.join(work, 'exported.vlrf')
    forest_from_sklearn.write_vlrf(forest, model, dims=3)
    want = forest.predict_proba(x)
    out = os.path.join(work, 'out_' + device)
    result = run([voxlabel, 'classify', path, '--model', model, '-o', out, '--device', device, '--format', 'raw',
                  '--force', '--quiet'])
    if result.returncode != 0 and device != 'cpu' and 'usable' in result.stderr + result.stdout:
        print('SKIP: no usable GPU')
        return 77
    if not check(result.returncode == 0, 'voxlabel classify --device %s on the exported forest' % device):
        return finish()
    got = np.stack([np.fromfile(os.path.join(out, 'probability_%d.raw' % (c + 1)), np.float32)
                    for c in range(want.shape[1])], 1)
    worst = float(np.abs(got - want).max())
    classes = np.fromfile(os.path.join(out, 'classes.raw'), np.uint8)
    top2 = np.sort(want, 1)[:, -2:]
    differ = classes != forest.predict(x)
    untied = differ & (np.abs(top2[:, 1] - top2[:, 0]) > 1e-6)
    print('%s: max |voxlabel - predict_proba| %.3g over %d voxels; classes differ at %d voxels (%d not ties)'
          % (device, worst, x.shape[0], int(differ.sum()), int(untied.sum())))
    check(worst <= 1e-6, 'probabilities within 1e-6 of scikit-learn (max %.3g)' % worst)
    check(not untied.any(), 'classes equal except at ties')
    # a model for other features: refused by the converter and, forged, by voxlabel
    try:
        forest_from_sklearn.write_vlrf(forest, model + '.2d', dims=2)
        check(False, 'the converter refuses a 3d forest as a 2d model')
    except ValueError as error:
        check('other features' in str(error), 'converter refusal names the cause: %s' % error)
    data = bytearray(open(model, 'rb').read())
    offset = 4 + 4 * 3 + 8 * 7 + 4 * 7 + 8 * 3 + 4
    struct.pack_into('<I', data, offset, 49)  # feature count of a 2d bank
    forged = os.path.join(work, 'forged.vlrf')
    open(forged, 'wb').write(bytes(data))
    result = run([voxlabel, 'classify', path, '--model', forged, '-o', out + '_forged'])
    check(result.returncode == 3 and 'features' in result.stderr and not os.path.exists(out + '_forged'),
          'a model whose features do not match its bank is refused (exit %d: %s)' % (result.returncode,
                                                                                     result.stderr.strip()))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
