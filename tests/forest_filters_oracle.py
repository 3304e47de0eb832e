"""R1: every channel of the filter bank equals scipy.ndimage on the same image (float64, truncate 4, mode
'reflect'), in 2D per slice and in 3D, on anisotropic voxels, within 1e-4 relative or 1e-5 absolute after
scaling by the channel's largest magnitude (for eigenvalues: the largest of the same matrix's eigenvalues,
since eigenvalues are only accurate relative to the matrix norm); and a box's channels equal the whole volume's bit for bit (R4's
foundation). The oracle's definitions are written out here from docs/forest.md, not taken from voxlabel.

usage: forest_filters_oracle.py FOREST_TOOL WORKDIR"""
import os
import subprocess
import sys

import nibabel as nib
import numpy as np
from scipy import ndimage as ndi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

SIGMAS = [0.3, 0.7, 1.0, 1.6, 3.5, 5.0, 10.0]
TRUNCATE = 4.0


def gauss(image, sigma_vox, order):
    return ndi.gaussian_filter(image, sigma_vox, order=order, mode='reflect', truncate=TRUNCATE)


def oracle_channels(image, spacing, dims):
    """image (z, y, x) float64; spacing (x, y, z) mm. 2D: each z slice on its own."""
    if dims == 2:
        per_slice = [oracle_channels(image[z][None], spacing, 22) for z in range(image.shape[0])]
        return [np.concatenate([s[c] for s in per_slice]) for c in range(len(per_slice[0]))]
    nd = 2 if dims == 22 else 3
    # numpy axes (z, y, x) <-> spacing (x, y, z): axis k of the array is spatial axis 2 - k
    sp = np.array([spacing[2], spacing[1], spacing[0]])
    axes = [1, 2] if nd == 2 else [0, 1, 2]
    out = []
    for s_index, sigma in enumerate(SIGMAS):
        sv = [0.0 if (nd == 2 and k == 0) else sigma / sp[k] for k in range(3)]

        def deriv(img, orders, sigma_vox=sv):
            return gauss(img, sigma_vox, orders)

        def order_of(*ks):
            o = [0, 0, 0]
            for k in ks:
                o[k] += 1
            return o
        smooth = deriv(image, [0, 0, 0])
        out.append(smooth)
        if s_index == 0:
            continue
        out.append(sum(deriv(image, order_of(k, k)) / sp[k] ** 2 for k in axes))
        out.append(np.sqrt(sum((deriv(image, order_of(k)) / sp[k]) ** 2 for k in axes)))
        small = [0.0 if v == 0 else 0.66 * sigma / sp[k] for k, v in enumerate(sv)]
        out.append(smooth - gauss(image, small, [0, 0, 0]))
        inner = [0.0 if v == 0 else 0.5 * sigma / sp[k] for k, v in enumerate(sv)]
        grads = {k: gauss(image, inner, order_of(k)) / sp[k] for k in axes}
        # eigen order: spatial x, y, z = array axes 2, 1, 0
        spatial = list(reversed(axes))
        tensor = np.empty(image.shape + (nd, nd))
        for i, a in enumerate(spatial):
            for j, b in enumerate(spatial):
                tensor[..., i, j] = gauss(grads[a] * grads[b], sv, [0, 0, 0])
        eig = np.linalg.eigvalsh(tensor)[..., ::-1]
        out.extend(eig[..., c] for c in range(nd))
        hess = np.empty(image.shape + (nd, nd))
        for i, a in enumerate(spatial):
            for j, b in enumerate(spatial):
                hess[..., i, j] = deriv(image, order_of(a, b)) / (sp[a] * sp[b])
        eig = np.linalg.eigvalsh(hess)[..., ::-1]
        out.extend(eig[..., c] for c in range(nd))
    return out


def run_tool(tool, args):
    result = subprocess.run([tool] + args, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stderr)
    return result


def main():
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(22)
    nz, ny, nx = 9, 27, 33
    spacing = (0.7, 0.9, 2.1)
    # smooth structure plus noise, HU-like magnitudes
    g = np.indices((nz, ny, nx)).astype(float)
    image = (400 * np.sin(g[2] / 4.0) * np.cos(g[1] / 5.0) + 300 * (g[0] > 4) +
             rng.normal(0, 40, (nz, ny, nx))).round()
    path = os.path.join(work, 'image.nii')
    nib.save(nib.Nifti1Image(np.asfortranarray(image.astype(np.int16).transpose(2, 1, 0)),
                             np.diag([spacing[0], spacing[1], spacing[2], 1.0])), path)
    image = image.astype(np.int16).astype(np.float64)
    for dims, expected in ((2, 49), (3, 61)):
        out = os.path.join(work, 'features%d.f32' % dims)
        result = run_tool(tool, ['features', path, str(dims), out])
        if not check(result.returncode == 0, 'features %dD ran' % dims):
            continue
        names = result.stdout.split()
        check(len(names) == expected, '%dD bank has %d channels, want %d' % (dims, len(names), expected))
        got = np.fromfile(out, np.float32).reshape(len(names), nz, ny, nx)
        want = oracle_channels(image, spacing, dims)
        worst = 0.0
        for c, name in enumerate(names):
            w = want[c]
            # eigenvalues are accurate relative to their matrix's norm: scale by the family's largest one
            family = [k for k, other in enumerate(names) if 'eig' in name and
                      other.split('eig')[0] == name.split('eig')[0] and other[-5:] == name[-5:]] or [c]
            scale = max(max(np.abs(want[k]).max() for k in family), 1e-12)
            err = np.abs(got[c].astype(np.float64) - w)
            ok = (err <= 1e-4 * np.abs(w)) | (err <= 1e-5 * scale)
            worst = max(worst, float((err / scale).max()))
            check(ok.all(), '%dD %s: %d voxels off (max |diff| %.3g, channel max %.3g)'
                  % (dims, name, int((~ok).sum()), float(err.max()), scale))
        print('%dD: %d channels, worst |diff| / channel max = %.2e' % (dims, len(names), worst))
        # a box inside the volume equals the whole volume's voxels, bit for bit
        box = [5, 4, 2, 21, 19, 7]
        out_box = os.path.join(work, 'box%d.f32' % dims)
        result = run_tool(tool, ['features', path, str(dims), out_box] + [str(v) for v in box])
        if check(result.returncode == 0, 'box features %dD ran' % dims):
            part = np.fromfile(out_box, np.float32).reshape(len(names), box[5] - box[2], box[4] - box[1],
                                                            box[3] - box[0])
            whole = got[:, box[2]:box[5], box[1]:box[4], box[0]:box[3]]
            check(np.array_equal(part, whole), '%dD box channels equal the whole volume bit for bit' % dims)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
