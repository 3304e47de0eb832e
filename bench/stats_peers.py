"""CPU peers for bench/stats_bench.sh: scipy.ndimage statistics on the same labels and HU (raw, x fastest),
and NIfTI copies for the ITK oracle. Prints "<peer> <seconds>" lines.
usage: stats_peers.py LABELS.u32 HU.i16 NX NY NZ OUT_PREFIX"""
import sys
import time

import nibabel as nib
import numpy as np
from scipy import ndimage


def timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main():
    labels_path, hu_path, nx, ny, nz, prefix = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6]), sys.argv[6]
    labels = np.fromfile(labels_path, dtype=np.uint32).reshape(nz, ny, nx)
    hu = np.fromfile(hu_path, dtype=np.int16).reshape(nz, ny, nx)
    count = int(labels.max())
    index = np.arange(1, count + 1)
    ones = np.ones(labels.shape, dtype=np.uint8)
    # The basic set: counts, bounding boxes, centroids (what cc3d.statistics returns).
    basic = timed(lambda: (ndimage.sum(ones, labels, index), ndimage.find_objects(labels),
                           ndimage.center_of_mass(ones, labels, index)))
    print(f"scipy_basic {basic:.4f}")
    values = hu.astype(np.float64)
    intensity = timed(lambda: (ndimage.minimum(values, labels, index), ndimage.maximum(values, labels, index),
                               ndimage.mean(values, labels, index), ndimage.variance(values, labels, index),
                               ndimage.center_of_mass(values, labels, index)))
    print(f"scipy_intensity {intensity:.4f}")
    median = timed(lambda: ndimage.median(values, labels, index))
    print(f"scipy_median {median:.4f}")
    affine = np.eye(4)
    nib.save(nib.Nifti1Image(np.ascontiguousarray(labels.transpose(2, 1, 0)), affine), prefix + "_labels.nii")
    nib.save(nib.Nifti1Image(np.ascontiguousarray(hu.transpose(2, 1, 0)), affine), prefix + "_hu.nii")


if __name__ == "__main__":
    main()
