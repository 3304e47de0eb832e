#!/usr/bin/python3
"""Issue 16 A1/A2: a MAT v5/v7 file whose dims claim more than its bytes hold is refused (exit 3, one error line)
before libmatio allocates; so are short data and unknown data types. The run has a 1 GiB address-space limit, so
an allocation of the claimed gigabytes fails the test instead of passing it slowly.
usage: io_mat_bounds.py VOXLABEL WORKDIR"""
import os, resource, shutil, struct, subprocess, sys, zlib

from test_check import refusal_problem

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def el(t, b):
    return struct.pack('<II', t, len(b)) + b + b'\0' * (-len(b) % 8)


def matrix_body(dims, data_type=3, payload=None):
    payload = payload if payload is not None else struct.pack('<480h', *range(480))
    return (el(6, struct.pack('<II', 10, 0)) + el(5, struct.pack('<%di' % len(dims), *dims)) + el(1, b'V') +
            el(data_type, payload))


def mat5(dims, data_type=3, payload=None, compress=False, cut=0):
    element = el(14, matrix_body(dims, data_type, payload))
    if compress:
        z = zlib.compress(element)
        z = z[:len(z) - cut] if cut else z
        element = struct.pack('<II', 15, len(z)) + z
    return b'MATLAB 5.0 MAT-file, voxlabel test'.ljust(116, b' ') + b'\0' * 8 + b'\x00\x01IM' + element


cases = {
    'ok.mat': (mat5((12, 10, 4)), 0),
    'ok_z.mat': (mat5((12, 10, 4), compress=True), 0),
    'badtype.mat': (mat5((12, 10, 4), data_type=99), 3),
    'short.mat': (mat5((12, 10, 4000)), 3),
    'bomb8g.mat': (mat5((2000, 2000, 1000)), 3),
    'bomb_2g.mat': (mat5((2147483647, 3, 1)), 3),
    'bomb8g_z.mat': (mat5((2000, 2000, 1000), compress=True), 3),
    'short_z.mat': (mat5((12, 10, 4000), compress=True), 3),
    'truncated_z.mat': (mat5((12, 10, 4), compress=True, cut=20), 3),
    'element_past_end.mat': (mat5((12, 10, 4))[:600], 3),
}


# Files whose corrupt headers make libmatio allocate, unless checked first, 12 GB (Mat_VarRead, dims from a
# corrupt compressed header), 7 GB (the headers of an element running past the end) and 8.5 GB (a dims tag
# claiming 4 GB behind corrupt array flags).
here = os.path.dirname(os.path.abspath(__file__))
for name in ('corrupt_deflate_dims.mat', 'element_past_end_info.mat', 'dims_tag_4gb.mat'):
    cases['fuzz_' + name] = (open(os.path.join(here, '..', 'test-data', 'mat_fuzz', name), 'rb').read(), 3)


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


for name, (data, want) in cases.items():
    path = os.path.join(work, name)
    open(path, 'wb').write(data)
    out = os.path.join(work, name + '.nrrd')
    r = subprocess.run([voxlabel, 'convert', path, out, '--force'], capture_output=True, text=True,
                       preexec_fn=limit, timeout=120)
    why = refusal_problem(r, want, out)
    if why:
        failures.append('%s: %s: %s' % (name, why, r.stderr.strip()))

for f in failures:
    print('FAIL', f)
print('%d of %d cases right' % (len(cases) - len(failures), len(cases)))
sys.exit(1 if failures else 0)
