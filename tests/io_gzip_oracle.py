"""The parallel gzip writer and the libdeflate reader (io/gzip_parallel.c, io/gzip_read.c) against independent
readers: every .nii.gz and gzip .nrrd voxlabel writes is one standard gzip member that zlib's own gzread (through
ctypes), Python's gzip and zlib.decompress, nibabel and SimpleITK read to the voxels written; the bytes are the
same for 1 and for all threads (also for compressed .mha, a zlib stream); zlib's levels 2 to 9 (the Python
package's write_labels compression_level; the default is ISA-L's igzip) write the same voxels; and voxlabel reads
foreign gzip files (several members, other levels, trailing bytes, a stream longer than the voxels) the same as
before, refusing truncated or corrupt ones with exit 3.
Sizes straddle the 1 MiB chunks (one voxel, just under a chunk, just over, several chunks) for u8, i16, u16, f32.
usage: io_gzip_oracle.py VOXLABEL WORK_DIR   (exit 77 without nibabel or SimpleITK)"""
import ctypes
import ctypes.util
import gzip
import os
import shutil
import subprocess
import sys
import zlib

import numpy as np

from test_check import check, finish

try:
    import nibabel
    import SimpleITK as sitk
except ImportError as error:
    print(f"skipped: needs nibabel and SimpleITK (scripts/oracle-venv) ({error})")
    sys.exit(77)

cli, work = sys.argv[1:3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
rng = np.random.default_rng(20)

libz = ctypes.CDLL(ctypes.util.find_library("z") or "libz.so.1")
libz.gzopen.restype = ctypes.c_void_p
libz.gzopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libz.gzread.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
libz.gzclose.argtypes = [ctypes.c_void_p]


def zlib_gzread(path):
    """The whole stream through zlib's gzopen/gzread, as ITK's and FSL's znzlib read .nii.gz."""
    handle = libz.gzopen(path.encode(), b"rb")
    pieces, buffer = [], ctypes.create_string_buffer(1 << 20)
    while True:
        got = libz.gzread(handle, buffer, len(buffer))
        if got <= 0:
            break
        pieces.append(buffer.raw[:got])
    libz.gzclose(handle)
    return b"".join(pieces)


def voxlabel(*args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


def members(data):
    """The number of gzip members in `data`."""
    count = 0
    while data:
        inflater = zlib.decompressobj(31)
        inflater.decompress(data)
        check(inflater.eof, "a member ends")
        data = inflater.unused_data
        count += 1
    return count


def check_readers(path, expected, what):
    """`path` (.nii.gz) holds `expected` (x fastest) in every reader, as one member."""
    data = open(path, "rb").read()
    whole = gzip.decompress(data)
    check(zlib.decompress(data, 31) == whole, f"{what}: zlib.decompress reads all of the one member")
    check(zlib_gzread(path) == whole, f"{what}: zlib's gzread reads the same bytes")
    check(members(data) == 1, f"{what}: one gzip member")
    voxels = whole[352:]
    check(voxels == expected.tobytes(order="F"), f"{what}: the voxels after the header are the ones written")
    image = nibabel.load(path)
    check(np.array_equal(np.asarray(image.dataobj), expected), f"{what}: nibabel reads the voxels")
    itk = sitk.GetArrayFromImage(sitk.ReadImage(path))  # [z, y, x]
    check(np.array_equal(itk, expected.transpose(2, 1, 0)), f"{what}: SimpleITK reads the voxels")


def write_nifti(array, path):
    image = nibabel.Nifti1Image(array, np.diag([0.7, 0.8, 2.5, 1.0]))
    image.header.set_data_dtype(array.dtype)
    nibabel.save(image, path)


chunk = 1 << 20
cases = 0
for dtype in (np.uint8, np.int16, np.uint16, np.float32):
    per_chunk = chunk // np.dtype(dtype).itemsize
    # Rows of 1000 voxels (NIfTI axes stop at 32767): one voxel, just under one chunk, just over, several.
    for shape in ((1, 1, 1), (1000, 1, (per_chunk - 1) // 1000), (1000, 1, -(-(per_chunk + 1) // 1000)),
                  (1000, 1, -(-(3 * per_chunk + 17) // 1000))):
        cases += 1
        count = shape[0] * shape[2]
        # Runs of repeated values (as labels) with some noise, so that both deflate paths have work.
        values = np.repeat(rng.integers(0, 200, size=count // 50 + 1), 50)[:count]
        values[rng.random(count) < 0.01] = 7
        array = values.astype(dtype).reshape(shape, order="F")
        source = os.path.join(work, f"in_{cases}.nii")
        write_nifti(array, source)
        what = f"{np.dtype(dtype).name} x {count}"
        outputs = {}
        for threads in ("1", "0"):
            out = os.path.join(work, f"out_{cases}_{threads}.nii.gz")
            result = voxlabel("convert", source, out, "--force", "--quiet",
                              *(["--threads", threads] if threads != "0" else []))
            check(result.returncode == 0, f"{what}: convert exit {result.returncode}: {result.stderr.strip()}")
            outputs[threads] = open(out, "rb").read() if result.returncode == 0 else None
        check(outputs["1"] is not None and outputs["1"] == outputs["0"],
              f"{what}: the same bytes with 1 thread and with all")
        if outputs["0"] is not None:
            check_readers(os.path.join(work, f"out_{cases}_0.nii.gz"), array, what)
            # And back through voxlabel's own reader (libdeflate).
            back = os.path.join(work, f"back_{cases}.nii")
            result = voxlabel("convert", os.path.join(work, f"out_{cases}_0.nii.gz"), back, "--force", "--quiet")
            check(result.returncode == 0 and np.array_equal(np.asarray(nibabel.load(back).dataobj), array),
                  f"{what}: voxlabel reads its own .nii.gz back")
        # gzip NRRD: the same writer behind a text header.
        nrrd = os.path.join(work, f"out_{cases}.nrrd")
        result = voxlabel("convert", source, nrrd, "--force", "--quiet")
        if check(result.returncode == 0, f"{what}: convert to .nrrd exit {result.returncode}"):
            check(np.array_equal(sitk.GetArrayFromImage(sitk.ReadImage(nrrd)), array.transpose(2, 1, 0)),
                  f"{what}: SimpleITK reads the gzip NRRD")
        # Compressed MetaImage: the same deflate stream in a zlib wrapper, after a header that states its size.
        mha = {}
        for threads in ("1", "0"):
            path = os.path.join(work, f"out_{cases}_{threads}.mha")
            result = voxlabel("convert", source, path, "--force", "--quiet",
                              *(["--threads", threads] if threads != "0" else []))
            check(result.returncode == 0, f"{what}: convert to .mha exit {result.returncode}: {result.stderr.strip()}")
            mha[threads] = open(path, "rb").read() if result.returncode == 0 else b""
        check(mha["1"] == mha["0"], f"{what}: .mha, the same bytes with 1 thread and with all")
        header_end = mha["0"].find(b"ElementDataFile = LOCAL\n") + len(b"ElementDataFile = LOCAL\n")
        size = [line for line in mha["0"][:header_end].split(b"\n") if line.startswith(b"CompressedDataSize")]
        check(size and int(size[0].split(b"=")[1]) == len(mha["0"]) - header_end, f"{what}: .mha CompressedDataSize")
        check(zlib.decompress(mha["0"][header_end:]) == array.tobytes(order="F"),
              f"{what}: .mha data is one zlib stream of the voxels")
        check(np.array_equal(sitk.GetArrayFromImage(sitk.ReadImage(os.path.join(work, f"out_{cases}_0.mha"))),
                             array.transpose(2, 1, 0)), f"{what}: SimpleITK reads the .mha")

# A label map (the run-length strategy) through `voxlabel label`, at 1 thread and all.
ct = np.full((96, 80, 40), -1000, dtype=np.int16)
ct[10:40, 10:40, 5:30] = 400
ct[60:90, 20:70, 10:35] = 700
ct[rng.random(ct.shape) < 0.002] = 500
ct_path = os.path.join(work, "ct.nii")
write_nifti(ct, ct_path)
labels = {}
for threads in ("1", "2"):
    result = voxlabel("label", ct_path, "--threshold", "300", "-o", os.path.join(work, f"label_{threads}"),
                      "--threads", threads, "--quiet")
    check(result.returncode == 0, f"label --threads {threads}: exit {result.returncode}: {result.stderr.strip()}")
    labels[threads] = open(os.path.join(work, f"label_{threads}", "labels.nii.gz"), "rb").read()
check(labels["1"] == labels["2"], "labels.nii.gz: the same bytes with 1 and 2 threads")
label_path = os.path.join(work, "label_2", "labels.nii.gz")
label_array = np.asarray(nibabel.load(label_path).dataobj)
check(label_array.max() >= 2 and np.array_equal(label_array > 0, ct >= 300), "labels.nii.gz: the foreground")
check_readers(label_path, label_array, "labels.nii.gz")

# zlib's levels (the run-length strategy for label maps), asked for through the Python package; the library
# comes from VOXLABEL_LIBRARY, as ctest sets it.
import voxlabel as voxlabel_package  # noqa: E402

for level in (2, 9):
    path = os.path.join(work, f"zlib_{level}.nii.gz")
    voxlabel_package.write_labels(path, label_array.astype(np.uint32), compression_level=level, axes="xyz")
    check(open(path, "rb").read() != open(label_path, "rb").read(), f"compression_level {level}: zlib's bytes")
    check_readers(path, label_array, f"labels at compression_level {level}")

# Foreign gzip files read by voxlabel: all equal to the plain file.
plain = open(os.path.join(work, "in_16.nii"), "rb").read()  # float32, 3 chunks and more
expected = np.asarray(nibabel.load(os.path.join(work, "in_16.nii")).dataobj)
cut = len(plain) // 3
foreign = {
    "level 9": gzip.compress(plain, 9),
    "three members": gzip.compress(plain[:cut], 1) + gzip.compress(plain[cut:2 * cut], 6) + gzip.compress(plain[2 * cut:]),
    "bytes after the stream": gzip.compress(plain) + b"not gzip at all",
    "a stream longer than the voxels": gzip.compress(plain + b"\0" * 4096),
}
for name, data in foreign.items():
    path = os.path.join(work, "foreign.nii.gz")
    open(path, "wb").write(data)
    back = os.path.join(work, "foreign_back.nii")
    result = voxlabel("convert", path, back, "--force", "--quiet")
    check(result.returncode == 0 and np.array_equal(np.asarray(nibabel.load(back).dataobj), expected),
          f"foreign .nii.gz, {name}: read as written (exit {result.returncode}: {result.stderr.strip()})")

good = gzip.compress(plain, 1)
corrupt = bytearray(good)
corrupt[-8] ^= 0xFF  # the CRC
broken = {
    "truncated in the deflate data": good[: len(good) // 2],
    "truncated member trailer": good[:-4],
    "CRC wrong": bytes(corrupt),
    "members short of the voxels": gzip.compress(plain[: len(plain) - 1000]),
}
for name, data in broken.items():
    path = os.path.join(work, "broken.nii.gz")
    open(path, "wb").write(data)
    result = voxlabel("convert", path, os.path.join(work, "broken_back.nii"), "--force")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    check(result.returncode == 3 and len(lines) == 1 and lines[0].startswith("voxlabel: error: "),
          f"broken .nii.gz, {name}: exit 3 with one error line (exit {result.returncode}: {result.stderr.strip()})")
    check(not os.path.exists(os.path.join(work, "broken_back.nii")), f"broken .nii.gz, {name}: nothing written")

print(f"{cases} volumes written and read back")
sys.exit(finish())
