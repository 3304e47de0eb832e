"""voxlabel.label from Python against independent oracles: scipy.ndimage.label (numbering included) and
numpy.bincount, by hypothesis property tests; then a checklist taken from cc3d's documented behaviours
(odd shapes, C and F order, empty and full volumes, dtypes, 2D input), axis conventions, errors and filters.
Run by ctest (tests/python.cmake) with PYTHONPATH=python and VOXLABEL_LIBRARY=<build>/libvoxlabel.so."""
import numpy
import pytest
import scipy.ndimage as ndimage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import voxlabel

SETTINGS = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
STRUCTURE = {6: 1, 18: 2, 26: 3}


@st.composite
def masks(draw, max_side=12, ndim=3):
    shape = tuple(draw(st.integers(1, max_side)) for _ in range(ndim))
    density = draw(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.95]))
    seed = draw(st.integers(0, 2**32 - 1))
    return numpy.random.default_rng(seed).random(shape) < density


def scipy_labels(mask, connectivity):
    """scipy.ndimage.label numbers components in raster (C-order) scan of first voxels: matlab-xy on a[z, y, x]."""
    rank = 2 if mask.ndim == 2 else 3
    square = {4: 1, 6: 1, 8: 2, 18: 2, 26: 3}[connectivity] if mask.ndim == 2 else STRUCTURE[connectivity]
    labels, count = ndimage.label(mask, structure=ndimage.generate_binary_structure(rank, min(square, rank)))
    return labels, count


@SETTINGS
@given(masks(), st.sampled_from([6, 18, 26]))
def test_matlab_xy_is_scipy_numbering(mask, connectivity):
    labels, count = voxlabel.label(mask, connectivity=connectivity, order="matlab-xy", device="cpu")
    expected, expected_count = scipy_labels(mask, connectivity)
    assert count == expected_count
    numpy.testing.assert_array_equal(labels, expected)


@SETTINGS
@given(masks(), st.sampled_from([6, 18, 26]))
def test_matlab_is_scipy_on_column_major_scan(mask, connectivity):
    # MATLAB's key z, then x, then y is the raster scan of a[z, x, y]: scipy on the in-plane transpose.
    labels, count = voxlabel.label(mask, connectivity=connectivity, order="matlab", device="cpu")
    expected, expected_count = scipy_labels(numpy.ascontiguousarray(mask.transpose(0, 2, 1)), connectivity)
    assert count == expected_count
    numpy.testing.assert_array_equal(labels, expected.transpose(0, 2, 1))


@SETTINGS
@given(masks(), st.sampled_from([6, 18, 26]), st.sampled_from(["matlab", "matlab-xy", "size", "size-raster"]))
def test_sizes_are_bincount(mask, connectivity, order):
    labels, count, sizes = voxlabel.label(mask, connectivity=connectivity, order=order, return_sizes=True)
    numpy.testing.assert_array_equal(sizes, numpy.bincount(labels.ravel(), minlength=count + 1))
    if order.startswith("size") and count:
        assert numpy.all(numpy.diff(sizes[1:].astype(numpy.int64)) <= 0)


@SETTINGS
@given(masks(max_side=20, ndim=2), st.sampled_from([4, 8]))
def test_2d_is_scipy_2d(mask, connectivity):
    labels, count = voxlabel.label(mask, connectivity=connectivity, order="matlab-xy")
    expected, expected_count = scipy_labels(mask, connectivity)
    assert count == expected_count and labels.shape == mask.shape
    numpy.testing.assert_array_equal(labels, expected)


@SETTINGS
@given(masks(), st.sampled_from([6, 18, 26]), st.sampled_from(["matlab", "matlab-xy", "size"]),
       st.sampled_from(["xyz", "yxz", "zxy", "xzy"]))
def test_every_axes_naming_matches_the_c_order_copy(mask, connectivity, order, axes):
    # The array a[z, y, x] seen through a transposed view named by `axes` (no copy where the layout allows)
    # must give the transposed labels.
    permutation = tuple("zyx".index(axis) for axis in axes)
    view = mask.transpose(permutation)
    labels, count = voxlabel.label(view, connectivity=connectivity, order=order, axes=axes)
    expected, expected_count = voxlabel.label(mask, connectivity=connectivity, order=order)
    assert count == expected_count
    numpy.testing.assert_array_equal(labels, expected.transpose(permutation))


# ---- the cc3d checklist ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 1, 17), (17, 1, 1), (1, 13, 1), (3, 5, 7), (31, 29, 2),
                                   (2, 2, 257), (101, 3, 3)])
def test_odd_shapes(shape):
    mask = numpy.random.default_rng(sum(shape)).random(shape) < 0.5
    labels, count = voxlabel.label(mask, order="matlab-xy")
    expected, expected_count = scipy_labels(mask, 26)
    assert labels.shape == shape and count == expected_count
    numpy.testing.assert_array_equal(labels, expected)


def test_c_and_f_order_agree():
    mask = numpy.random.default_rng(5).random((7, 9, 11)) < 0.4
    c_labels, c_count = voxlabel.label(mask)
    f_labels, f_count = voxlabel.label(mask.T)                    # F-ordered a[x, y, z]: no copy
    assert f_labels.flags.f_contiguous and f_count == c_count
    numpy.testing.assert_array_equal(f_labels.T, c_labels)
    copy_labels, _ = voxlabel.label(numpy.asfortranarray(mask), axes="zyx")  # same axes, other memory
    numpy.testing.assert_array_equal(copy_labels, c_labels)


def test_non_contiguous_input_is_copied():
    mask = numpy.random.default_rng(6).random((10, 12, 14)) < 0.4
    view = mask[::2, 1::3, ::-1]
    labels, count = voxlabel.label(view)
    expected, expected_count = voxlabel.label(numpy.ascontiguousarray(view))
    assert count == expected_count
    numpy.testing.assert_array_equal(labels, expected)


def test_empty_and_full_volumes():
    for shape in [(4, 5, 6), (1, 1, 1), (3, 7)]:
        labels, count = voxlabel.label(numpy.zeros(shape, bool))
        assert count == 0 and not labels.any() and labels.shape == shape
        labels, count, sizes = voxlabel.label(numpy.ones(shape, numpy.uint8), return_sizes=True)
        assert count == 1 and (labels == 1).all() and list(sizes) == [0, numpy.prod(shape)]
    labels, count = voxlabel.label(numpy.zeros((0, 4, 4), bool))
    assert count == 0 and labels.shape == (0, 4, 4)


@pytest.mark.parametrize("dtype", [bool, numpy.uint8, numpy.int8, numpy.int16, numpy.uint16, numpy.int32,
                                   numpy.uint32, numpy.int64, numpy.uint64, numpy.float32, numpy.float64])
def test_dtypes_nonzero_is_foreground(dtype):
    rng = numpy.random.default_rng(7)
    mask = rng.random((6, 7, 8)) < 0.4
    values = numpy.where(mask, rng.integers(1, 100, mask.shape), 0).astype(dtype)
    if numpy.dtype(dtype).kind in "if" and dtype is not bool:
        values = numpy.where(mask, -values if numpy.dtype(dtype).kind != "u" else values, values).astype(dtype)
    labels, count = voxlabel.label(values)
    expected, expected_count = voxlabel.label(mask)
    assert count == expected_count
    numpy.testing.assert_array_equal(labels, expected)


def test_float_nan_is_foreground_and_negative_zero_background():
    values = numpy.array([[[numpy.nan, -0.0, 0.5, 0.0]]], dtype=numpy.float32)
    labels, count = voxlabel.label(values, connectivity=6)
    assert count == 2 and labels.tolist() == [[[1, 0, 2, 0]]]


def test_out_dtype():
    mask = numpy.random.default_rng(8).random((8, 8, 8)) < 0.2
    labels, count = voxlabel.label(mask, connectivity=6, out_dtype="auto")
    assert labels.dtype == numpy.uint8 and count < 256
    many = numpy.zeros((1, 1, 1200), bool)
    many[..., ::2] = True
    labels, count = voxlabel.label(many, out_dtype="auto")
    assert count == 600 and labels.dtype == numpy.uint16
    assert voxlabel.label(mask, out_dtype=numpy.int64)[0].dtype == numpy.int64
    with pytest.raises(voxlabel.VoxlabelArgumentError):
        voxlabel.label(many, out_dtype=numpy.uint8)


def test_out_argument_is_filled():
    mask = numpy.random.default_rng(9).random((5, 6, 7)) < 0.4
    out = numpy.full(mask.shape, 99, dtype=numpy.uint32)
    labels, count = voxlabel.label(mask, out=out)
    assert labels is out
    numpy.testing.assert_array_equal(out, voxlabel.label(mask)[0])


def test_min_size_and_largest_follow_bincount():
    mask = numpy.random.default_rng(10).random((12, 12, 12)) < 0.25
    labels, count, sizes = voxlabel.label(mask, connectivity=6, return_sizes=True)
    kept = [k for k in range(1, count + 1) if sizes[k] >= 3]
    filtered, n, filtered_sizes = voxlabel.label(mask, connectivity=6, min_size=3, return_sizes=True)
    assert n == len(kept)
    for new, old in enumerate(kept, start=1):
        assert ((filtered == new) == (labels == old)).all()
    numpy.testing.assert_array_equal(filtered_sizes, numpy.bincount(filtered.ravel(), minlength=n + 1))
    top, n_top = voxlabel.label(mask, connectivity=6, largest=2)
    biggest = sorted(range(1, count + 1), key=lambda k: (-int(sizes[k]), k))[:2]
    assert n_top == 2
    for new, old in enumerate(sorted(biggest), start=1):
        assert ((top == new) == (labels == old)).all()


def test_threads_do_not_change_the_result():
    mask = numpy.random.default_rng(11).random((40, 20, 20)) < 0.4
    one, _ = voxlabel.label(mask, threads=1, device="cpu")
    many, _ = voxlabel.label(mask, threads=4, device="cpu")
    numpy.testing.assert_array_equal(one, many)


def test_errors_carry_the_library_text():
    mask = numpy.ones((2, 2, 2), bool)
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="not one of 6, 18, 26"):
        voxlabel.label(mask, connectivity=5)
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="order"):
        voxlabel.label(mask, order="bogus")
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="gpu"):
        voxlabel.label(mask, device="gpu:x")
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="axes"):
        voxlabel.label(mask, axes="zzx")
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="4-dimensional"):
        voxlabel.label(numpy.ones((2, 2, 2, 2)))
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="dtype"):
        voxlabel.label(numpy.array([["a"]]))


def test_worked_example_of_docs_python_md():
    # Two slices of a 3x4 image as a[z, y, x]; the expected labels are Octave's bwlabeln on the same slices
    # stacked as V(row, col, slice) (docs/python.md shows the session).
    stack = numpy.array([[[1, 0, 0, 1],
                          [0, 0, 0, 1],
                          [1, 1, 0, 0]],
                         [[0, 0, 0, 0],
                          [0, 1, 0, 0],
                          [0, 0, 0, 1]]], dtype=bool)
    labels, count = voxlabel.label(stack, connectivity=6)
    assert count == 5
    assert labels.tolist() == [[[1, 0, 0, 3], [0, 0, 0, 3], [2, 2, 0, 0]],
                               [[0, 0, 0, 0], [0, 4, 0, 0], [0, 0, 0, 5]]]
    labels, count = voxlabel.label(stack, connectivity=26)
    assert count == 2
    assert labels.tolist() == [[[1, 0, 0, 2], [0, 0, 0, 2], [1, 1, 0, 0]],
                               [[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 2]]]
    raster, _ = voxlabel.label(stack, connectivity=6, order="matlab-xy")
    assert raster[0].tolist() == [[1, 0, 0, 2], [0, 0, 0, 2], [3, 3, 0, 0]]


def test_python_threads_label_at_once():
    # The GIL is released in the library, whose error text is kept per thread: calls from several Python
    # threads, some failing, must each get their own result or their own message.
    from concurrent.futures import ThreadPoolExecutor
    rng = numpy.random.default_rng(13)
    masks = [rng.random((30, 30, 30)) < 0.3 for _ in range(8)]
    expected = [voxlabel.label(m, connectivity=6)[0] for m in masks]

    def work(k):
        if k % 3 == 2:
            try:
                voxlabel.label(masks[k], connectivity=7)
            except voxlabel.VoxlabelArgumentError as error:
                return "7" in str(error)
            return False
        return numpy.array_equal(voxlabel.label(masks[k], connectivity=6)[0], expected[k])

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, list(range(8)) * 4))


@st.composite
def class_maps(draw, max_side=10):
    shape = tuple(draw(st.integers(1, max_side)) for _ in range(3))
    classes = draw(st.integers(1, 6))
    background = draw(st.sampled_from([0.0, 0.3, 0.7]))
    dtype = draw(st.sampled_from([numpy.uint8, numpy.uint16, numpy.uint32, numpy.int16, numpy.int64]))
    rng = numpy.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.integers(1, classes + 1, shape)
    values[rng.random(shape) < background] = 0
    return values.astype(dtype)


def per_class_scipy(class_map, connectivity):
    """scipy.ndimage.label on every class's mask, the components of all classes merged and numbered by their
    first voxel in C-order (raster) scan: matlab-xy on a[z, y, x]. Returns labels, n and each label's class."""
    structure = ndimage.generate_binary_structure(3, STRUCTURE[connectivity])
    parts = []
    for value in numpy.unique(class_map[class_map != 0]):
        labels, count = ndimage.label(class_map == value, structure=structure)
        flat = labels.ravel()
        firsts = numpy.full(count + 1, flat.size)
        numpy.minimum.at(firsts, flat, numpy.arange(flat.size))
        parts += [(firsts[k], value, labels == k) for k in range(1, count + 1)]
    parts.sort(key=lambda part: part[0])
    merged = numpy.zeros(class_map.shape, numpy.uint32)
    for number, (_, _, voxels) in enumerate(parts, 1):
        merged[voxels] = number
    return merged, len(parts), numpy.array([0] + [value for _, value, _ in parts])


@SETTINGS
@given(class_maps(), st.sampled_from([6, 18, 26]))
def test_multilabel_is_per_class_scipy_merged(class_map, connectivity):
    labels, count, sizes, classes = voxlabel.label(class_map, multilabel=True, connectivity=connectivity,
                                                   order="matlab-xy", return_sizes=True, return_classes=True)
    expected, expected_count, expected_classes = per_class_scipy(class_map, connectivity)
    assert count == expected_count
    numpy.testing.assert_array_equal(labels, expected)
    numpy.testing.assert_array_equal(classes, expected_classes)
    assert classes.dtype == class_map.dtype
    numpy.testing.assert_array_equal(sizes, numpy.bincount(labels.ravel(), minlength=count + 1))
    # matlab order on a[z, y, x] is matlab-xy on the in-plane transpose, F order a[x, y, z] the same labels
    matlab, _ = voxlabel.label(class_map, multilabel=True, connectivity=connectivity)
    swapped, _ = voxlabel.label(numpy.ascontiguousarray(class_map.transpose(0, 2, 1)), multilabel=True,
                                connectivity=connectivity, order="matlab-xy")
    numpy.testing.assert_array_equal(matlab, swapped.transpose(0, 2, 1))
    fortran, _ = voxlabel.label(numpy.asfortranarray(class_map.T), multilabel=True, connectivity=connectivity,
                                order="matlab-xy")
    numpy.testing.assert_array_equal(fortran, labels.T)


@SETTINGS
@given(class_maps(), st.integers(0, 6), st.integers(0, 3))
def test_multilabel_min_size_and_largest_per_class(class_map, min_size, largest):
    full, count, sizes, classes = voxlabel.label(class_map, multilabel=True, return_sizes=True,
                                                 return_classes=True)
    kept = [k for k in range(1, count + 1) if sizes[k] >= min_size]
    if largest:
        survivors = []
        for value in set(classes[kept].tolist()):
            mine = [k for k in kept if classes[k] == value]
            survivors += sorted(mine, key=lambda k: (-int(sizes[k]), k))[:largest]
        kept = sorted(survivors)
    labels, n, new_sizes, new_classes = voxlabel.label(class_map, multilabel=True, min_size=min_size,
                                                       largest=largest, return_sizes=True, return_classes=True)
    assert n == len(kept)
    lookup = numpy.zeros(count + 1, numpy.uint32)
    lookup[kept] = numpy.arange(1, n + 1)
    numpy.testing.assert_array_equal(labels, lookup[full])
    numpy.testing.assert_array_equal(new_classes[1:], classes[kept])
    numpy.testing.assert_array_equal(new_sizes, numpy.bincount(labels.ravel(), minlength=n + 1))


def test_multilabel_inputs_and_refusals():
    class_map = numpy.array([[1, 1, 2], [0, 2, 2], [3, 0, 1]], numpy.uint8)
    labels, n, classes = voxlabel.label(class_map, multilabel=True, connectivity=4, return_classes=True)
    assert n == 4 and classes.tolist() == [0, 1, 3, 2, 1]
    bool_labels, m = voxlabel.label(class_map > 0, multilabel=True, connectivity=4)
    mask_labels, k = voxlabel.label(class_map > 0, connectivity=4)
    assert m == k and numpy.array_equal(bool_labels, mask_labels)
    empty = voxlabel.label(numpy.zeros((0, 4), numpy.uint16), multilabel=True, return_sizes=True,
                           return_classes=True)
    assert empty[1] == 0 and empty[3].dtype == numpy.uint16
    big = numpy.array([[0, 2**32 - 1, 2**32 - 1]], numpy.int64)
    assert voxlabel.label(big, multilabel=True, return_classes=True)[2].tolist() == [0, 2**32 - 1]
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="integer class map"):
        voxlabel.label(class_map.astype(numpy.float32), multilabel=True)
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="negative"):
        voxlabel.label(-class_map.astype(numpy.int16), multilabel=True)
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="0..4294967295"):
        voxlabel.label(class_map.astype(numpy.int64) - 1, multilabel=True)
    with pytest.raises(voxlabel.VoxlabelArgumentError, match="return_classes"):
        voxlabel.label(class_map, return_classes=True)
