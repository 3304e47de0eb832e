#!/usr/bin/python3
"""Issue 16 C17: a MAT v7.3 file as Python's hdf5storage writes it (MATLAB_class a null-padded string, which
libmatio does not list; chunked, shuffled, gzip and Fletcher-32; Python.* attributes; the 512-byte MATLAB
header in the user block) is read, not refused as "holds no real numeric array": every voxel equals the
array written (h5py is the oracle), for double, int16 and logical, by name and without one; `compare` finds it
identical to the same labels in NIfTI. A sparse dataset claiming 8 GB in this layout is still refused (exit 3).
usage: io_mat_hdf5storage.py VOXLABEL WORKDIR   (exit 77 without h5py or nibabel)"""
import os
import resource
import shutil
import subprocess
import sys

import numpy as np

from test_check import check, finish, refusal_problem

try:
    import h5py
    import nibabel
except ImportError as error:
    print(f"skipped: needs h5py and nibabel ({error})")
    sys.exit(77)

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def hdf5storage_mat(path, variables, sparse=None):
    """Writes `variables` ({name: array}) as hdf5storage.savemat(path, variables, format='7.3') lays them out."""
    with h5py.File(path, "w", userblock_size=512) as f:
        for name, array in variables.items():
            matlab_class = {"float64": "double", "int16": "int16", "bool": "logical"}[str(array.dtype)]
            data = array.astype(np.uint8) if array.dtype == bool else array
            d = f.create_dataset(name, data=data.T, chunks=True, compression="gzip", compression_opts=7,
                                 shuffle=True, fletcher32=True)
            d.attrs["MATLAB_class"] = np.bytes_(matlab_class)
            if array.dtype == bool:
                d.attrs["MATLAB_int_decode"] = np.int64(1)
            d.attrs["Python.Type"] = np.bytes_("numpy.ndarray")
            d.attrs["Python.Shape"] = np.array(array.shape, np.uint64)
            d.attrs["Python.numpy.UnderlyingType"] = np.bytes_(str(array.dtype))
            d.attrs["Python.numpy.Container"] = np.bytes_("ndarray")
        if sparse:
            d = f.create_dataset(sparse, shape=(1000, 2000, 2000), dtype="f8", chunks=(1, 64, 64))
            d.attrs["MATLAB_class"] = np.bytes_("double")
    header = b"MATLAB 7.3 MAT-file, Platform: CPython 3.11.2, Created on: Tue Dec  1 10:00:00 2026 HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write((header.ljust(116) + b"\0" * 8 + b"\x00\x02IM").ljust(512, b"\0"))


def read_back(mat, *options):
    out = os.path.join(work, os.path.basename(mat) + "".join(options).replace("-", "_") + ".nii")
    r = subprocess.run([voxlabel, "convert", mat, out, "--force", *options], capture_output=True, text=True)
    check(r.returncode == 0, f"{mat} {options}: exit {r.returncode}: {r.stderr.strip()}")
    # Ours is x = MATLAB column, y = MATLAB row (the `matlab` axis convention).
    return np.asarray(nibabel.load(out).dataobj).transpose(1, 0, 2) if r.returncode == 0 else None


rng = np.random.default_rng(16)
labels = np.zeros((30, 20, 10))
labels[5:10, 5:10, 2:5] = 1
labels[20:25, 12:18, 6:8] = 2
ct = rng.integers(-1024, 3000, size=(24, 18, 6), dtype=np.int16)
mask = rng.random((16, 12, 5)) < 0.3

single = os.path.join(work, "labels.mat")
hdf5storage_mat(single, {"L": labels})
got = read_back(single)
check(got is not None and got.shape == labels.shape and np.array_equal(got, labels),
      "hdf5storage double labels differ from the array written")

several = os.path.join(work, "several.mat")
hdf5storage_mat(several, {"ct": ct, "mask": mask})
got = read_back(several)  # the first by name: ct
check(got is not None and np.array_equal(got, ct), "hdf5storage int16 (first variable) differs")
# The logical one by name, through compare's --mat-variable (convert takes the first): equal to itself in NIfTI.
mask_nifti = os.path.join(work, "mask_ref.nii")
nibabel.save(nibabel.Nifti1Image(mask.transpose(1, 0, 2).astype(np.uint8), np.eye(4)), mask_nifti)
r = subprocess.run([voxlabel, "compare", mask_nifti, several, "--mat-variable", "mask"], capture_output=True, text=True)
check(r.returncode == 0, f"compare --mat-variable mask: exit {r.returncode}: {r.stdout.strip()} {r.stderr.strip()}")
alone = os.path.join(work, "mask.mat")
hdf5storage_mat(alone, {"mask": mask})
got = read_back(alone)
check(got is not None and np.array_equal(got, mask.astype(got.dtype)), "hdf5storage logical differs")

# compare: the labels from the hdf5storage file equal the same labels in NIfTI.
nifti = os.path.join(work, "labels_ref.nii")
nibabel.save(nibabel.Nifti1Image(labels.transpose(1, 0, 2).astype(np.uint32), np.eye(4)), nifti)
r = subprocess.run([voxlabel, "compare", nifti, single], capture_output=True, text=True)
check(r.returncode == 0, f"compare with the NIfTI labels: exit {r.returncode}: {r.stdout.strip()} {r.stderr.strip()}")

# A sparse dataset claiming 8 GB in the same layout: refused before allocating (1 GiB address limit).
bomb = os.path.join(work, "sparse.mat")
hdf5storage_mat(bomb, {}, sparse="V")
r = subprocess.run([voxlabel, "convert", bomb, os.path.join(work, "sparse.nrrd")], capture_output=True, text=True,
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)))
why = refusal_problem(r, 3, os.path.join(work, "sparse.nrrd"))
check(why is None, f"sparse hdf5storage-style dataset: {why}: {r.stderr.strip()}")
sys.exit(finish())
