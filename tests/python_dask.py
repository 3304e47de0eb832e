"""voxlabel.dask.label against voxlabel.label on the whole array (itself checked against scipy and Octave):
random chunkings, chunks one voxel thick along any axis included, every connectivity and order, must give
identical labels and counts, on the local scheduler (threads) and on a two-worker dask.distributed
LocalCluster."""
import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dask
import dask.array as da

import voxlabel
import voxlabel.dask

SETTINGS = settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
ORDERS = ["matlab", "matlab-xy", "size", "size-raster"]


@st.composite
def chunked(draw, ndim=3, max_side=10):
    shape = tuple(draw(st.integers(1, max_side)) for _ in range(ndim))
    chunks = []
    for side in shape:
        # Random cuts along each axis; one voxel thick chunks come up often.
        cuts = sorted(draw(st.sets(st.integers(1, side - 1), max_size=side - 1))) if side > 1 else []
        bounds = [0] + cuts + [side]
        chunks.append(tuple(b - a for a, b in zip(bounds, bounds[1:])))
    density = draw(st.sampled_from([0.2, 0.4, 0.6, 0.9]))
    mask = numpy.random.default_rng(draw(st.integers(0, 2**32 - 1))).random(shape) < density
    return mask, tuple(chunks)


def assert_same_as_whole(mask, chunks, connectivity, order, keep_labels=True):
    expected, expected_count = voxlabel.label(mask, connectivity=connectivity, order=order, device="cpu")
    darr = da.from_array(mask, chunks=chunks)
    labels, count = voxlabel.dask.label(darr, connectivity=connectivity, order=order, keep_labels=keep_labels)
    assert labels.chunks == darr.chunks
    assert count == expected_count
    numpy.testing.assert_array_equal(labels.compute(), expected)


@SETTINGS
@given(chunked(), st.sampled_from([6, 18, 26, 4, 8]), st.sampled_from(ORDERS))
def test_random_chunkings_equal_the_whole_array(case, connectivity, order):
    mask, chunks = case
    with dask.config.set(scheduler="threads"):
        assert_same_as_whole(mask, chunks, connectivity, order)


@SETTINGS
@given(chunked(), st.sampled_from([6, 18, 26]), st.sampled_from(ORDERS))
def test_labels_not_kept_are_labelled_again_identically(case, connectivity, order):
    mask, chunks = case
    with dask.config.set(scheduler="threads"):
        assert_same_as_whole(mask, chunks, connectivity, order, keep_labels=False)


@SETTINGS
@given(chunked(ndim=2, max_side=16), st.sampled_from([4, 8]), st.sampled_from(ORDERS))
def test_2d_chunkings(case, connectivity, order):
    mask, chunks = case
    with dask.config.set(scheduler="sync"):
        assert_same_as_whole(mask, chunks, connectivity, order)


def test_one_voxel_chunks_everywhere():
    mask = numpy.random.default_rng(3).random((4, 5, 6)) < 0.5
    for connectivity in (6, 18, 26):
        assert_same_as_whole(mask, ((1,) * 4, (1,) * 5, (1,) * 6), connectivity, "matlab")


def test_a_component_spanning_every_chunk():
    # A helix through all chunks: the merge must chain many chunk boundaries into one component.
    mask = numpy.zeros((24, 9, 9), bool)
    for z in range(24):
        angle = z * numpy.pi / 6
        mask[z, 4 + int(round(3 * numpy.sin(angle))), 4 + int(round(3 * numpy.cos(angle)))] = True
    for connectivity in (18, 26):
        assert_same_as_whole(mask, (3, 2, 2), connectivity, "matlab")


def test_axes_and_errors():
    mask = numpy.random.default_rng(4).random((6, 7, 8)) < 0.4
    labels, count = voxlabel.dask.label(da.from_array(mask.T, chunks=3), axes="xyz")
    expected, expected_count = voxlabel.label(mask)
    assert count == expected_count
    numpy.testing.assert_array_equal(labels.compute(), expected.T)
    with pytest.raises(voxlabel.VoxlabelArgumentError):
        voxlabel.dask.label(da.from_array(mask, chunks=3), connectivity=5)
    with pytest.raises(voxlabel.VoxlabelArgumentError):
        voxlabel.dask.label(da.from_array(mask, chunks=3), order="bogus")


def test_two_worker_local_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster):
        rng = numpy.random.default_rng(5)
        for shape, chunks, connectivity, order in [((20, 21, 22), (7, 5, 8), 26, "matlab"),
                                                   ((9, 10, 11), (1, 10, 3), 18, "size"),
                                                   ((12, 12, 12), (4, 1, 12), 6, "matlab-xy")]:
            mask = rng.random(shape) < 0.45
            assert_same_as_whole(mask, chunks, connectivity, order)
            assert_same_as_whole(mask, chunks, connectivity, order, keep_labels=False)
