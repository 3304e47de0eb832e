"""voxlabel.statistics, write_labels / read_volume, compare and read_dicom from Python, against independent
oracles: scipy.ndimage measurements, the CLI's own CSV for the same labels (names and values), nibabel and
scipy.io for the written files, pydicom for a real CT series (skipped when ../shared is absent).
Needs VOXLABEL_CLI (the voxlabel program) and VOXLABEL_SHARED_DATA in the environment (tests/python.cmake)."""
import csv
import glob
import os
import subprocess

import numpy
import pytest
import scipy.ndimage as ndimage

import voxlabel


@pytest.fixture(scope="module")
def case():
    rng = numpy.random.default_rng(12)
    mask = rng.random((9, 11, 13)) < 0.3
    labels, count = voxlabel.label(mask, connectivity=6)
    hu = rng.integers(-1000, 2000, mask.shape).astype(numpy.int16)
    return labels, count, hu


def test_basic_columns_match_scipy(case):
    labels, count, hu = case
    table = voxlabel.statistics(labels, hu, spacing=(0.5, 0.7, 2.0), frame=False)
    index = numpy.arange(1, count + 1)
    numpy.testing.assert_array_equal(table["label"], index)
    numpy.testing.assert_array_equal(table["voxels"], numpy.bincount(labels.ravel())[1:])
    numpy.testing.assert_allclose(table["volume_mm3"], table["voxels"] * 0.5 * 0.7 * 2.0)
    centres = numpy.array(ndimage.center_of_mass(numpy.ones_like(labels), labels, index))  # (z, y, x)
    for axis, name in enumerate("zyx"):
        numpy.testing.assert_allclose(table["centroid_" + name], centres[:, axis], atol=1e-9)
    boxes = ndimage.find_objects(labels)
    for axis, name in enumerate("zyx"):
        numpy.testing.assert_array_equal(table["bbox_min_" + name], [b[axis].start for b in boxes])
        numpy.testing.assert_array_equal(table["bbox_max_" + name], [b[axis].stop - 1 for b in boxes])
    numpy.testing.assert_allclose(table["hu_mean"], ndimage.mean(hu, labels, index))
    numpy.testing.assert_array_equal(table["hu_min"], ndimage.minimum(hu, labels, index))
    numpy.testing.assert_array_equal(table["hu_max"], ndimage.maximum(hu, labels, index))
    assert table["voxels"].dtype == numpy.int64 and table["hu_mean"].dtype == numpy.float64


def test_full_columns_match_scipy(case):
    labels, count, hu = case
    table = voxlabel.statistics(labels, hu, full=True, frame=False)
    index = numpy.arange(1, count + 1)
    numpy.testing.assert_allclose(table["hu_std"], ndimage.standard_deviation(hu, labels, index), atol=1e-9)
    numpy.testing.assert_allclose(table["hu_median"], ndimage.median(hu, labels, index))
    numpy.testing.assert_allclose(table["hu_sum"], ndimage.sum(hu, labels, index))


def test_f_order_labels_give_the_same_table(case):
    labels, count, hu = case
    c_table = voxlabel.statistics(labels, hu, frame=False)
    f_table = voxlabel.statistics(labels.T, hu.T, frame=False)   # a[x, y, z]: same voxels, same x, y, z
    for name in c_table:
        numpy.testing.assert_array_equal(c_table[name], f_table[name])


def test_columns_and_values_equal_the_cli_csv(case, tmp_path):
    labels, count, hu = case
    geometry = voxlabel.Geometry(origin=(-100.0, 20.0, 5.5), spacing=(0.6, 0.6, 1.25),
                                 direction=[[1, 0, 0], [0, 0.8, -0.6], [0, 0.6, 0.8]])
    path = tmp_path / "labels.nii.gz"
    voxlabel.write_labels(str(path), labels, geometry=geometry)
    out = tmp_path / "table.csv"
    subprocess.run([os.environ["VOXLABEL_CLI"], "stats", str(path), "-o", str(out), "--stats", "full", "--matlab",
                    "--quiet"], check=True)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    # NIfTI keeps the geometry in float32: measure with the geometry the file holds, as the CLI does.
    stored, stored_geometry = voxlabel.read_volume(str(path))
    numpy.testing.assert_array_equal(stored, labels)
    numpy.testing.assert_allclose(stored_geometry.affine_lps, geometry.affine_lps, atol=1e-5)
    table = voxlabel.statistics(labels, geometry=stored_geometry, full=True, matlab=True, frame=False)
    assert list(rows[0].keys()) == list(table.keys())
    for name, values in table.items():
        cli = numpy.array([float(r[name]) if r[name] != "" else numpy.nan for r in rows])
        numpy.testing.assert_allclose(values.astype(float), cli, rtol=1e-10, atol=1e-9, err_msg=name)


def test_missing_labels_and_errors():
    labels = numpy.zeros((3, 3, 3), numpy.int32)
    labels[0, 0, 0], labels[2, 2, 2] = 1, 3
    table = voxlabel.statistics(labels, frame=False)
    assert table["voxels"].tolist() == [1, 0, 1]
    assert numpy.isnan(table["centroid_x"][1]) and table["bbox_min_x"][1] == -1
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="non-negative"):
        voxlabel.statistics(-labels)
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="shape"):
        voxlabel.statistics(labels, numpy.zeros((2, 2, 2)))


@pytest.mark.parametrize("suffix", [".nii.gz", ".nii", ".nrrd", ".mha", ".mat", ".raw"])
def test_write_labels_every_format_round_trips(case, tmp_path, suffix):
    labels, count, _ = case
    geometry = voxlabel.Geometry(origin=(1.0, 2.0, 3.0), spacing=(0.5, 0.75, 2.0))
    path = str(tmp_path / ("labels" + suffix))
    voxlabel.write_labels(path, labels, geometry=geometry)
    if suffix == ".raw":
        back, _ = voxlabel.read_volume(path, raw_shape=labels.shape, raw_dtype=labels.dtype)
    else:
        back, back_geometry = voxlabel.read_volume(path)
        if suffix != ".mat":
            numpy.testing.assert_allclose(back_geometry.spacing, geometry.spacing)
            numpy.testing.assert_allclose(back_geometry.origin, geometry.origin)
    numpy.testing.assert_array_equal(back, labels)
    with pytest.raises(voxlabel.VoxlabelOutputError):
        voxlabel.write_labels(path, labels)
    voxlabel.write_labels(path, labels, force=True)


def test_written_files_read_by_independent_readers(case, tmp_path):
    labels, count, _ = case
    nibabel = pytest.importorskip("nibabel")
    import scipy.io
    geometry = voxlabel.Geometry(origin=(-10.0, 20.0, 30.0), spacing=(0.5, 0.75, 2.0))
    voxlabel.write_labels(str(tmp_path / "l.nii.gz"), labels, geometry=geometry)
    image = nibabel.load(str(tmp_path / "l.nii.gz"))
    numpy.testing.assert_array_equal(numpy.asanyarray(image.dataobj), labels.T)       # nibabel: a[x, y, z]
    numpy.testing.assert_allclose(image.affine, geometry.affine_ras, atol=1e-5)
    voxlabel.write_labels(str(tmp_path / "l.mat"), labels)
    matlab = scipy.io.loadmat(str(tmp_path / "l.mat"))
    array = next(v for k, v in matlab.items() if not k.startswith("__"))
    numpy.testing.assert_array_equal(array, labels.transpose(1, 2, 0))                # V(row, col, slice)
    assert array.dtype == numpy.float64


def test_compare_verdicts(case):
    labels, count, _ = case
    assert voxlabel.compare(labels, labels)["verdict"] == "identical"
    raster, _ = voxlabel.label(labels > 0, connectivity=6, order="matlab-xy")
    result = voxlabel.compare(raster, labels)
    assert result["verdict"] == "same partition" and "raster" in result["mapping_rule"]
    broken = labels.copy()
    broken[labels == 1] = 0
    result = voxlabel.compare(broken, labels)
    assert result["verdict"] == "different" and result["reference_unmatched"] >= 1


def test_read_dicom_matches_pydicom():
    pydicom = pytest.importorskip("pydicom")
    folder = os.path.join(os.environ.get("VOXLABEL_SHARED_DATA", ""), "dicom", "dcmqi_ct_3slice")
    if not os.path.isdir(folder):
        pytest.skip("shared test data absent: " + folder)
    volume, geometry, series = voxlabel.read_dicom(folder, keep_padding=True, return_series=True)
    slices = [pydicom.dcmread(p) for p in sorted(glob.glob(os.path.join(folder, "*.dcm")))]
    normal = numpy.cross(*numpy.array(slices[0].ImageOrientationPatient, float).reshape(2, 3))
    slices.sort(key=lambda s: float(numpy.dot(normal, numpy.array(s.ImagePositionPatient, float))))
    hu = numpy.stack([s.pixel_array * float(s.RescaleSlope) + float(s.RescaleIntercept) for s in slices])
    assert volume.shape == hu.shape and series.slice_count == len(slices)
    numpy.testing.assert_array_equal(volume, hu)
    padding = getattr(slices[0], "PixelPaddingValue", None)
    if padding is not None:   # by default padding becomes air
        air, _ = voxlabel.read_dicom(folder)
        padded = numpy.stack([s.pixel_array == padding for s in slices])
        numpy.testing.assert_array_equal(air, numpy.where(padded, -1024, hu))
    numpy.testing.assert_allclose(geometry.origin, numpy.array(slices[0].ImagePositionPatient, float))
    numpy.testing.assert_allclose(geometry.spacing[:2], [float(slices[0].PixelSpacing[1]),
                                                         float(slices[0].PixelSpacing[0])])
    for k, s in enumerate(slices):   # the LPS affine maps voxel (0, 0, k) onto each slice's position
        numpy.testing.assert_allclose((geometry.affine_lps @ [0, 0, k, 1])[:3],
                                      numpy.array(s.ImagePositionPatient, float), atol=1e-4)
    ras = numpy.diag([-1, -1, 1, 1]) @ geometry.affine_lps
    numpy.testing.assert_allclose(geometry.affine_ras, ras)
