"""Oracle for the NRRD and MetaImage readers and writers, with parsers and writers written here from the
format specifications (teem's NRRD0004 and ITK's MetaIO), independent of voxlabel's C code.

1. Our .nrrd / .mha output, parsed here, places the 8 corner voxels where vl_geometry_index_to_lps does
   (1e-6 mm: both formats store doubles as text), including a sheared (gantry-tilt) slice axis.
2. Files written here (raw/gzip, big endian, detached data, RAS space, spacings only, compressed MHA)
   read back with the values and geometry they were given.

usage: io_nrrd_mha_oracle.py IO_VOLUME_TOOL WORK_DIR
"""
import gzip
import os
import re
import subprocess
import sys
import zlib

import numpy as np

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def split_attached(path):
    data = open(path, "rb").read()
    end = data.index(b"\n\n")
    return data[:end].decode(), data[end + 2:]


def parse_nrrd(path):
    header, payload = split_attached(path)
    fields = {}
    for line in header.splitlines()[1:]:
        if line.startswith("#") or ":=" in line:
            continue
        key, value = line.split(": ", 1)
        fields[key] = value
    vectors = [list(map(float, v.split(","))) for v in re.findall(r"\(([^)]*)\)", fields["space directions"])]
    axes = np.array(vectors).T  # columns = axis steps
    origin = np.array(list(map(float, re.findall(r"\(([^)]*)\)", fields["space origin"])[0].split(","))))
    if fields["encoding"] == "gzip":
        payload = gzip.decompress(payload)
    return fields, axes, origin, payload


def parse_mha(path):
    data = open(path, "rb").read()
    end = data.index(b"ElementDataFile = LOCAL\n") + len(b"ElementDataFile = LOCAL\n")
    fields = dict(line.split(" = ", 1) for line in data[:end].decode().splitlines())
    matrix = np.array(list(map(float, fields["TransformMatrix"].split()))).reshape(3, 3)  # row i = axis i direction
    spacing = np.array(list(map(float, fields["ElementSpacing"].split())))
    axes = (matrix * spacing[:, None]).T
    origin = np.array(list(map(float, fields["Offset"].split())))
    payload = data[end:]
    if fields.get("CompressedData") == "True":
        check(int(fields["CompressedDataSize"]) == len(payload), f"{path}: CompressedDataSize")
        payload = zlib.decompress(payload)
    return fields, axes, origin, payload


def test_writers(tool, work):
    for suffix, parse in ((".nrrd", parse_nrrd), (".mha", parse_mha)):
        for variant in ("plain", "sheared", "flipped"):
            name = "fixture_" + variant + suffix
            path = os.path.join(work, name)
            corners_path = path + ".txt"
            subprocess.run([tool, "fixture", path, corners_path] + ([variant] if variant != "plain" else []), check=True)
            fields, axes, origin, payload = parse(path)
            for row in (list(map(float, line.split())) for line in open(corners_path)):
                got = origin + axes @ np.array(row[:3])
                check(np.max(np.abs(got - np.array(row[3:]))) < 1e-6, f"{name}: corner {row[:3]}: {got} vs {row[3:]}")
            values = np.frombuffer(payload, dtype=np.uint8)
            check(values.size == 60 and np.array_equal(values, np.arange(60) % 7),
                  f"{name}: labels up to 6 stored as uint8 in x-fastest order")
            if suffix == ".nrrd":
                check(fields["space"] == "left-posterior-superior" and fields["type"] == "uint8",
                      f"{name}: space/type fields")


def dump(tool, path):
    out = subprocess.run([tool, "dump", path], check=True, capture_output=True, text=True).stdout
    return dict((line.partition(" ")[0], line.partition(" ")[2]) for line in out.splitlines())


def check_read(tool, path, values, axes_lps, origin_lps, want_dtype):
    got = dump(tool, path)
    name = os.path.basename(path)
    if "error" in got:
        check(False, f"{name}: read failed: {got['error']}")
        return
    check(got["dtype"] == want_dtype, f"{name}: dtype {got['dtype']} (expected {want_dtype})")
    nx, ny, nz = values.shape[::-1]
    check(got["dims"] == f"{nx} {ny} {nz}", f"{name}: dims {got['dims']}")
    read = np.array(list(map(float, got["values"].split())))
    check(np.allclose(read, values.reshape(-1).astype(float), rtol=1e-6, atol=0), f"{name}: values differ")
    spacing = np.array(list(map(float, got["spacing"].split())))
    direction = np.array(list(map(float, got["direction"].split()))).reshape(3, 3)
    origin = np.array(list(map(float, got["origin"].split())))
    check(np.allclose(direction * spacing, axes_lps, atol=1e-9), f"{name}: axes {direction * spacing}")
    check(np.allclose(origin, origin_lps, atol=1e-9), f"{name}: origin {origin}")


def vec(v):
    return "(" + ",".join(repr(float(x)) for x in v) + ")"


def test_nrrd_reader(tool, work):
    rng = np.random.default_rng(11)
    values = rng.integers(-2000, 2000, (3, 4, 5)).astype(np.int16)  # numpy [z][y][x]: x fastest on disk
    axes = np.array([[0.7, 0.0, 0.1], [0.0, 0.8, -0.4], [0.05, 0.0, 2.5]])  # columns = axis steps (LPS)
    origin = np.array([-120.5, 14.25, 700.0])
    cases = [
        ("le_raw.nrrd", "short", "little", "raw", values.astype("<i2"), "i16"),
        ("be_raw.nrrd", "int16", "big", "raw", values.astype(">i2"), "i16"),
        ("be_gzip.nrrd", "signed short int", "big", "gzip", values.astype(">i2"), "i16"),
        ("u16_gzip.nrrd", "unsigned short", "little", "gzip", (values + 2000).astype("<u2"), "u16"),
        ("f64.nrrd", "double", "little", "gzip", values.astype("<f8") / 4.0, "f32"),
        ("i8.nrrd", "int8", "little", "raw", (values // 20).astype("i1"), "i16"),
    ]
    for name, type_name, endian, encoding, array, want in cases:
        header = (f"NRRD0005\n# hand-made\ntype: {type_name}\ndimension: 3\nspace: left-posterior-superior\n"
                  f"sizes: 5 4 3\nspace directions: {vec(axes[:, 0])} {vec(axes[:, 1])} {vec(axes[:, 2])}\n"
                  f"kinds: domain domain domain\nendian: {endian}\nencoding: {encoding}\nspace origin: {vec(origin)}\n"
                  "Segment0_Name:=ignored\n\n")
        payload = array.tobytes()
        if encoding == "gzip":
            payload = gzip.compress(payload)
        path = os.path.join(work, name)
        open(path, "wb").write(header.encode() + payload)
        check_read(tool, path, array, axes, origin, want)
    # RAS space: the reader converts to LPS by negating x and y.
    path = os.path.join(work, "ras.nrrd")
    ras_axes = axes * np.array([[-1], [-1], [1]])
    ras_origin = origin * np.array([-1, -1, 1])
    open(path, "wb").write((f"NRRD0004\ntype: short\ndimension: 3\nspace: right-anterior-superior\nsizes: 5 4 3\n"
                            f"space directions: {vec(ras_axes[:, 0])} {vec(ras_axes[:, 1])} {vec(ras_axes[:, 2])}\n"
                            f"endian: little\nencoding: raw\nspace origin: {vec(ras_origin)}\n\n").encode()
                           + values.astype("<i2").tobytes())
    check_read(tool, path, values, axes, origin, "i16")
    # Detached header with a relative data file; spacings only (no space): diagonal axes at the origin.
    open(os.path.join(work, "detached.raw"), "wb").write(values.astype("<i2").tobytes())
    path = os.path.join(work, "detached.nhdr")
    open(path, "w").write("NRRD0004\ntype: short\ndimension: 3\nsizes: 5 4 3\nspacings: 0.5 0.6 3\n"
                          "endian: little\nencoding: raw\ndata file: detached.raw\n")
    check_read(tool, path, values, np.diag([0.5, 0.6, 3.0]), np.zeros(3), "i16")
    # Broken files are input errors (exit code 3), never crashes.
    broken = {
        "truncated.nrrd": open(os.path.join(work, "le_raw.nrrd"), "rb").read()[:-7],
        "bad_type.nrrd": b"NRRD0004\ntype: block\ndimension: 3\nsizes: 1 1 1\nencoding: raw\n\nx",
        "bad_encoding.nrrd": b"NRRD0004\ntype: short\ndimension: 3\nsizes: 1 1 1\nencoding: bzip2\n\nxx",
        "four_d.nrrd": b"NRRD0004\ntype: short\ndimension: 4\nsizes: 1 1 1 2\nencoding: raw\n\nxxxx",
        "corrupt_gzip.nrrd": b"NRRD0004\ntype: short\ndimension: 3\nsizes: 2 2 2\nencoding: gzip\n\n\x1f\x8bjunkjunk",
        "no_magic.nrrd": b"NRRX0004\n",
    }
    for name, content in broken.items():
        path = os.path.join(work, name)
        open(path, "wb").write(content)
        check(dump(tool, path).get("error", "").startswith("3 "), f"{name}: expected an input error")


def test_mha_reader(tool, work):
    rng = np.random.default_rng(12)
    values = rng.normal(0, 300, (3, 4, 5)).astype(np.float32)
    directions = np.array([[0.8, 0.6, 0.0], [-0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])  # row i = axis i direction
    spacing = np.array([0.5, 0.75, 2.0])
    origin = np.array([10.0, -20.0, 30.5])
    axes = (directions * spacing[:, None]).T

    def header(element_type, msb, compressed, data_file, size=None):
        lines = ["ObjectType = Image", "NDims = 3", "BinaryData = True", f"BinaryDataByteOrderMSB = {msb}",
                 f"CompressedData = {compressed}"]
        if size is not None:
            lines.append(f"CompressedDataSize = {size}")
        lines += ["TransformMatrix = " + " ".join(repr(x) for x in directions.reshape(-1)),
                  "Offset = " + " ".join(repr(x) for x in origin), "CenterOfRotation = 0 0 0",
                  "ElementSpacing = " + " ".join(repr(x) for x in spacing), "DimSize = 5 4 3",
                  f"ElementType = {element_type}", f"ElementDataFile = {data_file}"]
        return ("\n".join(lines) + "\n").encode()

    cases = [
        ("plain.mha", "MET_FLOAT", "False", values.astype("<f4"), False, "f32"),
        ("msb.mha", "MET_FLOAT", "True", values.astype(">f4"), False, "f32"),
        ("zlib.mha", "MET_SHORT", "False", np.round(values).astype("<i2"), True, "i16"),
        ("uint.mha", "MET_UINT", "False", np.abs(np.round(values)).astype("<u4"), True, "u32"),
        ("double.mha", "MET_DOUBLE", "False", values.astype("<f8"), True, "f32"),
    ]
    for name, element_type, msb, array, compress, want in cases:
        payload = array.tobytes()
        if compress:
            payload = zlib.compress(payload)
        path = os.path.join(work, name)
        open(path, "wb").write(header(element_type, msb, compress, "LOCAL", len(payload) if compress else None)
                               + payload)
        check_read(tool, path, array, axes, origin, want)
    open(os.path.join(work, "separate.zraw"), "wb").write(zlib.compress(values.astype("<f4").tobytes()))
    path = os.path.join(work, "separate.mhd")
    open(path, "wb").write(header("MET_FLOAT", "False", "True", "separate.zraw"))
    check_read(tool, path, values, axes, origin, "f32")
    broken = {
        "truncated.mha": open(os.path.join(work, "plain.mha"), "rb").read()[:-3],
        "corrupt.mha": header("MET_FLOAT", "False", "True", "LOCAL", 8) + b"notzlib!",
        "rgb.mha": b"ObjectType = Image\nNDims = 3\nDimSize = 1 1 1\nElementNumberOfChannels = 3\n"
                   b"ElementType = MET_UCHAR\nElementDataFile = LOCAL\nabc",
        "no_data_line.mha": b"ObjectType = Image\nNDims = 3\n",
    }
    for name, content in broken.items():
        path = os.path.join(work, name)
        open(path, "wb").write(content)
        check(dump(tool, path).get("error", "").startswith("3 "), f"{name}: expected an input error")


def main():
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    test_writers(tool, work)
    test_nrrd_reader(tool, work)
    test_mha_reader(tool, work)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("NRRD/MHA oracle: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
