"""Oracle for the NIfTI reader and writer.

1. Affine: our writer's sform (and, without shear, qform), decoded by an independent struct parser and by
   nibabel, must put the 8 corner voxels where vl_geometry_index_to_lps does, within 1e-4 mm, for a rotated,
   a sheared and a left-handed (qfac -1) grid.
2. Reader: NIfTI files written by nibabel in every scalar type (little and big endian, .nii and .nii.gz,
   scaled) must read back with the values and geometry nibabel stored, in the documented vl_dtype.

usage: io_nifti_oracle.py IO_VOLUME_TOOL WORK_DIR
"""
import math
import os
import struct
import subprocess
import sys

import numpy as np

TOLERANCE_MM = 1e-4
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def parse_header(path):
    """The NIfTI-1 fields we need, straight from the bytes (little endian, as our writer emits)."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        h = f.read(352)
    fields = {
        "sizeof_hdr": struct.unpack_from("<i", h, 0)[0],
        "dim": struct.unpack_from("<8h", h, 40),
        "intent_code": struct.unpack_from("<h", h, 68)[0],
        "datatype": struct.unpack_from("<h", h, 70)[0],
        "pixdim": struct.unpack_from("<8f", h, 76),
        "vox_offset": struct.unpack_from("<f", h, 108)[0],
        "xyzt_units": h[123],
        "qform_code": struct.unpack_from("<h", h, 252)[0],
        "sform_code": struct.unpack_from("<h", h, 254)[0],
        "quatern": struct.unpack_from("<6f", h, 256),
        "srow": [struct.unpack_from("<4f", h, 280 + 16 * r) for r in range(3)],
        "magic": h[344:348],
    }
    return fields


def qform_matrix(fields):
    b, c, d, qx, qy, qz = fields["quatern"]
    a = math.sqrt(max(0.0, 1.0 - (b * b + c * c + d * d)))
    r = np.array([
        [a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)],
        [2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b)],
        [2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b],
    ])
    qfac = -1.0 if fields["pixdim"][0] < 0 else 1.0
    scale = np.array([fields["pixdim"][1], fields["pixdim"][2], qfac * fields["pixdim"][3]])
    m = np.eye(4)
    m[:3, :3] = r * scale
    m[:3, 3] = [qx, qy, qz]
    return m


def corners_lps(affine_ras, corners):
    out = []
    for i, j, k in corners:
        ras = affine_ras @ np.array([i, j, k, 1.0])
        out.append(np.array([-ras[0], -ras[1], ras[2]]))
    return out


def test_affine(tool, work):
    try:
        import nibabel
    except ImportError:
        nibabel = None
        print("note: nibabel not installed; the struct parser alone checks the affine")
    for variant in ("plain", "sheared", "flipped"):
        sheared = variant == "sheared"
        name = "fixture_" + variant
        path = os.path.join(work, name + ".nii.gz")
        corners_path = os.path.join(work, name + ".txt")
        subprocess.run([tool, "fixture", path, corners_path] + ([variant] if variant != "plain" else []), check=True)
        rows = [list(map(float, line.split())) for line in open(corners_path)]
        indices = [r[:3] for r in rows]
        expected = [np.array(r[3:]) for r in rows]
        h = parse_header(path)
        check(h["sizeof_hdr"] == 348 and h["magic"] == b"n+1\0", f"{name}: header size / magic")
        check(h["vox_offset"] == 352, f"{name}: vox_offset {h['vox_offset']}")
        check(h["dim"][:4] == (3, 5, 4, 3), f"{name}: dims {h['dim']}")
        check(h["datatype"] == 2, f"{name}: labels up to 6 are stored as uint8 (datatype {h['datatype']})")
        check(h["intent_code"] == 1002, f"{name}: intent LABEL")
        check(h["xyzt_units"] & 7 == 2, f"{name}: spatial units mm")
        check(h["sform_code"] > 0 and h["qform_code"] > 0, f"{name}: sform and qform codes set")
        sform = np.vstack([np.array(h["srow"]), [0, 0, 0, 1]])
        for got, want, idx in zip(corners_lps(sform, indices), expected, indices):
            check(np.max(np.abs(got - want)) < TOLERANCE_MM, f"{name}: sform corner {idx}: {got} vs {want}")
        qform = qform_matrix(h)
        want_qfac = -1.0 if variant == "flipped" else 1.0
        check(h["pixdim"][0] == want_qfac, f"{name}: qfac {h['pixdim'][0]}, expected {want_qfac}")
        if not sheared:
            for got, want, idx in zip(corners_lps(qform, indices), expected, indices):
                check(np.max(np.abs(got - want)) < TOLERANCE_MM, f"{name}: qform corner {idx}: {got} vs {want}")
        else:
            # The qform is the orthonormal part: its row/column axes still match, and it is a rotation.
            r = qform[:3, :3] / np.array(h["pixdim"][1:4])
            check(np.allclose(r.T @ r, np.eye(3), atol=1e-5), f"{name}: qform rotation is orthonormal")
            for got, want, idx in zip(corners_lps(qform, indices), expected, indices):
                if idx[2] == 0:
                    check(np.max(np.abs(got - want)) < TOLERANCE_MM, f"{name}: qform in-plane corner {idx}")
        if nibabel is not None:
            img = nibabel.load(path)
            check(int(img.header["sform_code"]) == 1 and int(img.header["qform_code"]) == 1,
                  f"{name}: nibabel reads xform codes 1")
            for got, want, idx in zip(corners_lps(img.affine, indices), expected, indices):
                check(np.max(np.abs(got - want)) < TOLERANCE_MM, f"{name}: nibabel affine corner {idx}")
            if not sheared:
                for got, want, idx in zip(corners_lps(img.get_qform(), indices), expected, indices):
                    check(np.max(np.abs(got - want)) < TOLERANCE_MM, f"{name}: nibabel qform corner {idx}")
            data = np.asarray(img.dataobj)
            check(np.array_equal(data.reshape(-1, order="F"), np.arange(60) % 7), f"{name}: voxel values")


def dump(tool, path):
    out = subprocess.run([tool, "dump", path], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        key, _, rest = line.partition(" ")
        result[key] = rest
    return result


def test_reader(tool, work):
    try:
        import nibabel
    except ImportError:
        print("note: nibabel not installed; reader cases skipped")
        return
    rng = np.random.default_rng(5)
    shape = (4, 3, 2)
    affine = np.array([[-0.9, 0.1, 0.0, 10.0], [0.0, -0.8, 0.3, -20.0], [0.05, 0.0, 2.5, 30.0], [0, 0, 0, 1]])
    # (numpy type, values, the vl_dtype our reader must choose)
    cases = [
        ("uint8", rng.integers(0, 256, shape), "u8"),
        ("int8", rng.integers(-128, 128, shape), "i16"),
        ("int16", rng.integers(-3000, 3000, shape), "i16"),
        ("uint16", rng.integers(0, 65536, shape), "u16"),
        ("int32", rng.integers(0, 2**31 - 1, shape), "u32"),
        ("int32", rng.integers(-1024, 3000, shape), "i16"),
        ("uint32", rng.integers(0, 2**32 - 1, shape), "u32"),
        ("float32", rng.normal(0, 100, shape), "f32"),
        ("float64", rng.integers(0, 5000, shape).astype(float), "u32"),
        ("float64", rng.normal(0, 100, shape), "f32"),
        ("int64", rng.integers(-30000, 30000, shape), "i16"),
        ("uint64", rng.integers(0, 2**32 - 1, shape), "u32"),
    ]
    for n, (numpy_type, values, want_dtype) in enumerate(cases):
        for endian in ("<", ">"):
            for suffix in (".nii", ".nii.gz"):
                array = values.astype(np.dtype(numpy_type).newbyteorder(endian))
                header = nibabel.Nifti1Header(endianness=endian)
                img = nibabel.Nifti1Image(array, affine, header=header)
                img.header.set_data_dtype(array.dtype)
                img.set_qform(affine, 1)
                img.set_sform(affine, 1)
                path = os.path.join(work, f"read_{n}_{numpy_type}_{'be' if endian == '>' else 'le'}{suffix}")
                nibabel.save(img, path)
                got = dump(tool, path)
                label = os.path.basename(path)
                if "error" in got:
                    check(False, f"{label}: read failed: {got['error']}")
                    continue
                check(got["dtype"] == want_dtype, f"{label}: dtype {got['dtype']}, expected {want_dtype}")
                check(got["dims"] == "4 3 2", f"{label}: dims {got['dims']}")
                expected = np.asarray(nibabel.load(path).get_fdata()).reshape(-1, order="F")
                values_read = np.array(list(map(float, got["values"].split())))
                tolerance = 1e-4 * np.maximum(1.0, np.abs(expected)) if want_dtype == "f32" else 0.0
                check(np.all(np.abs(values_read - expected) <= tolerance), f"{label}: values differ")
                origin = np.array(list(map(float, got["origin"].split())))
                spacing = np.array(list(map(float, got["spacing"].split())))
                direction = np.array(list(map(float, got["direction"].split()))).reshape(3, 3)
                lps_axes = direction * spacing
                ras_axes = lps_axes * np.array([[-1], [-1], [1]])
                ras_origin = origin * np.array([-1, -1, 1])
                check(np.allclose(ras_axes, affine[:3, :3], atol=1e-5) and np.allclose(ras_origin, affine[:3, 3], atol=1e-4),
                      f"{label}: geometry {ras_axes} {ras_origin}")
    # Scaled int16 (scl_slope/scl_inter) comes back as real values.
    raw = rng.integers(-100, 100, shape).astype(np.int16)
    img = nibabel.Nifti1Image(raw, affine)
    img.header.set_slope_inter(0.5, -1024.0)
    path = os.path.join(work, "read_scaled.nii")
    nibabel.save(img, path)
    got = dump(tool, path)
    values_read = np.array(list(map(float, got.get("values", "").split())))
    check(got.get("dtype") == "f32" and np.allclose(values_read, raw.reshape(-1, order="F") * 0.5 - 1024.0),
          f"scaled int16: {got.get('dtype')}")
    # What cannot be represented is refused with an input error (exit code 3), never crashes.
    refusals = [
        ("complex", nibabel.Nifti1Image(np.ones(shape, np.complex64), affine)),
        ("4d", nibabel.Nifti1Image(np.ones(shape + (2,), np.uint8), affine)),
        ("huge_int64", nibabel.Nifti1Image(np.full(shape, 2**40, np.int64), affine, dtype=np.int64)),
    ]
    for name, img in refusals:
        path = os.path.join(work, f"refuse_{name}.nii")
        nibabel.save(img, path)
        got = dump(tool, path)
        check(got.get("error", "").startswith("3 "), f"{name}: expected an input error, got {got}")
    truncated = os.path.join(work, "refuse_truncated.nii")
    with open(os.path.join(work, "read_0_uint8_le.nii"), "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[:-5])
    check(dump(tool, truncated).get("error", "").startswith("3 "), "truncated file: expected an input error")


def main():
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    test_affine(tool, work)
    test_reader(tool, work)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("NIfTI oracle: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
