"""voxlabel.dask.label on a CuPy-backed Dask array (chunks labelled on the GPU, first voxels and sizes found
there by a scatter-min, chunks relabelled there) must give CuPy chunks whose labels and count equal
voxlabel.label of the whole array on the CPU, for random and one-voxel-thick chunkings, every connectivity
and order, 3D and 2D. Exit 77 without dask, CuPy or a usable CUDA device.
usage: python_dask_gpu.py"""
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402


def random_chunks(rng, shape):
    chunks = []
    for side in shape:
        cuts = sorted(set(int(c) for c in rng.integers(1, side, int(rng.integers(0, 4))))) if side > 1 else []
        bounds = [0] + cuts + [side]
        chunks.append(tuple(b - a for a, b in zip(bounds, bounds[1:])))
    return tuple(chunks)


def main():
    try:
        import dask.array as da
    except ImportError as error:
        print("SKIP: dask is not importable (%s)" % error)
        return 77
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        cupy.zeros(1).sum()
    except Exception as error:
        print("SKIP: no CuPy or no CUDA device (%s)" % error)
        return 77
    import dask
    import voxlabel
    import voxlabel.dask
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    rng = numpy.random.default_rng(seed)
    cases = [((40, 50, 60), (16, 20, 25)), ((9, 10, 11), (1, 10, 3)), ((12, 12, 12), (4, 1, 12)),
             ((64, 64), (16, 20))]
    cases += [(shape, random_chunks(rng, shape)) for shape in [(20, 21, 22), (7, 30, 9), (33, 17)]]
    orders = ("matlab", "matlab-xy", "size", "size-raster")
    compared = 0
    with dask.config.set(scheduler="threads"):
        for number, (shape, chunks) in enumerate(cases):
            mask = rng.random(shape) < rng.choice([0.3, 0.5])
            darr = da.from_array(cupy.asarray(mask), chunks=chunks, asarray=False)
            check(isinstance(darr._meta, cupy.ndarray), "%s: the Dask array is not CuPy-backed" % (shape,))
            # every connectivity, each with the next order in turn: all pairs over the cases, in seconds
            for turn, connectivity in enumerate((6, 18, 26, 4, 8) if len(shape) == 3 else (4, 8)):
                for order in (orders[(number + turn) % len(orders)],):
                    expected, expected_count = voxlabel.label(mask, connectivity=connectivity, order=order,
                                                              device="cpu")
                    labels, count = voxlabel.dask.label(darr, connectivity=connectivity, order=order)
                    what = "%s chunks %s conn %d %s" % (shape, chunks, connectivity, order)
                    check(count == expected_count, what + ": count %d, whole array %d" % (count, expected_count))
                    computed = labels.compute()
                    check(isinstance(computed, cupy.ndarray), what + ": labels did not stay on the GPU")
                    check(numpy.array_equal(cupy.asnumpy(computed), expected), what + ": labels differ")
                    compared += 1
    print("dask on CuPy chunks: %d labellings equal to the whole array" % compared)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
