#!/usr/bin/python3
"""Issue 16 A5/A6 in the volume readers: sizes claimed by a header (or by --raw-dims) are checked against the
bytes present through the one checked product (vl_size_product) before anything is allocated, and refused as
input (exit 3, one error line, no allocation named); only a real allocation failure is exit 5. Runs have a
1 GiB address-space limit, so a reader that allocates the claim first fails with exit 5 instead.
  gzip NIfTI, gzip NRRD and compressed MHA claiming 8 GB from a few hundred bytes (deflate expands <= 1032x);
  raw whose file is smaller than --raw-dims claims; --raw-dims whose product overflows 64 bits;
  a valid .nii.gz of 1.26 GB of voxels under the 1 GiB limit: exit 5, one error line.
usage: io_size_claims.py VOXLABEL WORKDIR"""
import gzip, os, random, resource, shutil, struct, subprocess, sys, zlib

from test_check import check, finish, refusal_problem

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def nifti_header(dims, datatype=4, bitpix=16):
    h = bytearray(352)
    struct.pack_into('<i', h, 0, 348)
    struct.pack_into('<8h', h, 40, 3, *dims, 1, 1, 1, 1)
    struct.pack_into('<hh', h, 70, datatype, bitpix)
    struct.pack_into('<8f', h, 76, 1, 1, 1, 1, 1, 1, 1, 1)
    struct.pack_into('<f', h, 108, 352.0)
    h[344:348] = b'n+1\0'
    return bytes(h)


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run(*arguments):
    return subprocess.run([voxlabel, *arguments], capture_output=True, text=True, preexec_fn=limit, timeout=120)


def write(name, data):
    path = os.path.join(work, name)
    open(path, 'wb').write(data)
    return path


bomb = (2000, 2000, 1000)  # 8 GB of int16
claims = {
    'bomb.nii.gz': gzip.compress(nifti_header(bomb) + bytes(100)),
    'bomb.nrrd': b'NRRD0004\ntype: short\ndimension: 3\nsizes: 2000 2000 1000\nencoding: gzip\nendian: little\n\n' +
                 gzip.compress(bytes(100)),
    'bomb.mha': b'ObjectType = Image\nNDims = 3\nDimSize = 2000 2000 1000\nElementType = MET_SHORT\n'
                b'CompressedData = True\nElementDataFile = LOCAL\n' + zlib.compress(bytes(100)),
}
for name, data in claims.items():
    path = write(name, data)
    out = os.path.join(work, name + '.out.nrrd')
    r = run('convert', path, out)
    why = refusal_problem(r, 3, out)
    check(why is None and 'inflate' in r.stderr, f'{name}: {why or "no deflate bound named"}: {r.stderr.strip()}')

tiny = write('tiny.raw', bytes(16))
for dims, reason in (('2000,2000,1000', 'holds 16 bytes'), ('4294967296,4294967296,1', 'overflow 64 bits')):
    out = os.path.join(work, 'raw_' + dims.replace(',', 'x'))
    r = run('label', tiny, '--raw-dims', dims, '--raw-type', 'i16', '--threshold', '0:1', '-o', out)
    why = refusal_problem(r, 3, out)
    check(why is None and reason in r.stderr, f'raw {dims}: {why or "reason not given"}: {r.stderr.strip()}')

# A valid file whose voxels do not fit under the limit: an allocation failure, exit 5, one line.
big = os.path.join(work, 'big.nii.gz')
with gzip.open(big, 'wb', compresslevel=9) as f:
    f.write(nifti_header((1024, 1024, 600)))
    # Some noise per chunk keeps the stream well inside deflate's bound (all zeros would sit right at it).
    chunk = random.Random(1).randbytes(4096) + bytes((1 << 22) - 4096)
    for _ in range((1024 * 1024 * 600 * 2) // len(chunk)):
        f.write(chunk)
r = run('convert', big, os.path.join(work, 'big.nrrd'))
lines = [line for line in r.stderr.splitlines() if line.strip()]
check(r.returncode == 5 and len(lines) == 1 and lines[0].startswith('voxlabel: error: '),
      f'1.26 GB under a 1 GiB limit: exit {r.returncode} (want 5): {r.stderr.strip()}')
os.remove(big)
sys.exit(finish())
