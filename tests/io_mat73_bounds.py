#!/usr/bin/python3
"""Issue 16 A1 (v7.3) and B11: a MAT v7.3 (HDF5) dataset whose allocated storage cannot hold what its dims claim
(a 2 KB sparse file claiming 32 GB) is refused with exit 3 and one error line before libmatio allocates (1 GiB
address-space limit); a v7.3 file libmatio cannot read gives one error line, not HDF5's error stack.
usage: io_mat73_bounds.py VOXLABEL WORKDIR   (skips, 77, without Debian's python3-h5py)"""
import os, resource, shutil, subprocess, sys

from test_check import refusal_problem
try:
    import h5py, numpy as np
except ImportError:
    print('skipped: python3-h5py (Debian) is not installed')
    sys.exit(77)

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def v73(name, make):
    path = os.path.join(work, name)
    with h5py.File(path, 'w', userblock_size=512) as f:
        make(f)
    header = (b'MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: voxlabel test HDF5 schema 1.00 .'.ljust(116, b' ')
              + b'\0' * 8 + b'\x00\x02IM')
    with open(path, 'r+b') as f:
        f.write(header)
    return path


def matlab_class(d, c):
    # a fixed-length string with its terminator, as libmatio 1.5 reads it
    tid = h5py.h5t.C_S1.copy(); tid.set_size(len(c) + 1); tid.set_strpad(h5py.h5t.STR_NULLTERM)
    a = h5py.h5a.create(d.id, b'MATLAB_class', tid, h5py.h5s.create(h5py.h5s.SCALAR))
    a.write(np.array(c, dtype='S%d' % (len(c) + 1)))


cases = [
    (v73('ok.mat', lambda f: matlab_class(f.create_dataset('V', data=np.arange(480, dtype=np.int16).reshape(4, 10, 12)),
                                          b'int16')), 0),
    (v73('sparse_chunked.mat', lambda f: matlab_class(f.create_dataset(
        'V', shape=(1000, 2000, 2000), dtype=np.float64, chunks=(1, 100, 100), compression='gzip'), b'double')), 3),
    (v73('sparse_contiguous.mat', lambda f: matlab_class(f.create_dataset(
        'V', shape=(1000, 2000, 2000), dtype=np.float64), b'double')), 3),
    # a variable-length MATLAB_class string: HDF5 cannot convert it for libmatio, and prints its stack by default
    (v73('vlen_class.mat', lambda f: f.create_dataset('V', data=np.zeros((4, 10, 12))).attrs.__setitem__(
        'MATLAB_class', 'double')), 3),
]


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


failures = 0
for path, want in cases:
    out = path + '.nrrd'
    r = subprocess.run([voxlabel, 'convert', path, out, '--force'], capture_output=True, text=True,
                       preexec_fn=limit, timeout=120)
    why = refusal_problem(r, want)
    if why:
        failures += 1
        print('FAIL %s: %s: %s' % (os.path.basename(path), why, r.stderr.strip()[:2000]))
print('%d failures in %d cases' % (failures, len(cases)))
sys.exit(1 if failures else 0)
