"""voxlabel.label against cc3d (PyPI connected-components-3d, in the oracle venv): cc3d numbers components in
the scan order of the array's memory, which is voxlabel's order="matlab-xy" for a C-ordered a[z, y, x] and for
an F-ordered a[x, y, z] alike, so labels must be equal voxel for voxel; voxel counts equal cc3d.statistics,
and min_size keeps exactly the voxels cc3d.dust keeps; class maps (multilabel=True) likewise against cc3d's multilabel mode. 2D with connectivity 8 is left to scipy
(python_label.py): cc3d 4.1.1 there labels some background pixels as foreground (e.g. [[1 1 0 0 0 1]] gives
[[1 1 2 0 0 2]]). Runs under the oracle venv's python (re-executing
itself there when started by another); exit 77 when the venv is absent.
usage: python_cc3d.py [ORACLE_PYTHON]"""
import os
import sys

try:
    import cc3d
except ImportError:
    oracle = sys.argv[1] if len(sys.argv) > 1 else ""
    if oracle and os.path.exists(oracle) and not os.environ.get("VOXLABEL_CC3D_REEXEC"):
        os.environ["VOXLABEL_CC3D_REEXEC"] = "1"
        os.execv(oracle, [oracle, os.path.abspath(__file__)])
    print("SKIP: cc3d not importable; scripts/oracle-venv BUILD makes the oracle venv")
    sys.exit(77)

import numpy  # noqa: E402

import voxlabel  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402


def multilabel(rng):
    """Class maps: cc3d's multilabel mode joins voxels of one class only and numbers the components of all
    classes together in memory scan order, which is voxlabel's multilabel=True, order="matlab-xy" on a C-order
    a[z, y, x] (and on the F-order transpose). Sizes equal cc3d.statistics, each label's class is the class
    its voxels hold in the map, and min_size keeps the voxels cc3d.dust(in_place=False) keeps."""
    cases = 0
    for _ in range(25):
        shape = tuple(int(n) for n in rng.integers(1, 36, 3))
        classes = int(rng.integers(1, 8))
        dtype = rng.choice([numpy.uint8, numpy.uint16, numpy.uint32])
        class_map = rng.integers(0, classes + 1, shape).astype(dtype)
        class_map[rng.random(shape) < rng.choice([0.0, 0.4])] = 0
        for layout in ("C", "F"):
            array = class_map if layout == "C" else numpy.asfortranarray(class_map.T)
            for connectivity in (6, 18, 26):
                ours, n, sizes, ours_classes = voxlabel.label(array, multilabel=True, connectivity=connectivity,
                                                              order="matlab-xy", return_sizes=True,
                                                              return_classes=True)
                theirs, m = cc3d.connected_components(array, connectivity=connectivity, return_N=True)
                what = "multilabel %s %s %s conn %d" % (shape, numpy.dtype(dtype), layout, connectivity)
                check(n == m, what + ": %d components, cc3d %d" % (n, m))
                check(numpy.array_equal(ours, theirs), what + ": labels differ from cc3d")
                counts = numpy.asarray(cc3d.statistics(theirs)["voxel_counts"])
                check(numpy.array_equal(sizes, counts), what + ": sizes differ from cc3d.statistics")
                expected_classes = numpy.zeros(m + 1, array.dtype)
                expected_classes[theirs.ravel()] = array.ravel()
                check(numpy.array_equal(ours_classes, expected_classes), what + ": classes differ from the map's")
                cases += 1
        kept, _ = voxlabel.label(class_map, multilabel=True, connectivity=26, min_size=3)
        dusted = cc3d.dust(class_map, threshold=3, connectivity=26, in_place=False)
        check(numpy.array_equal(numpy.where(kept > 0, class_map, 0), dusted),
              "multilabel %s: min_size=3 keeps other voxels than cc3d.dust" % (shape,))
    return cases


def main():
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    rng = numpy.random.default_rng(seed)
    cases = 0
    for _ in range(40):
        ndim = int(rng.choice([2, 3]))
        shape = tuple(int(n) for n in rng.integers(1, 40, ndim))
        mask = rng.random(shape) < rng.choice([0.1, 0.3, 0.5, 0.8])
        for layout in ("C", "F"):
            array = numpy.asfortranarray(mask) if layout == "F" else numpy.ascontiguousarray(mask)
            for connectivity in ((4,) if ndim == 2 else (6, 18, 26)):
                ours, n = voxlabel.label(array, connectivity=connectivity, order="matlab-xy")
                theirs, m = cc3d.connected_components(array, connectivity=connectivity, return_N=True)
                what = "%s %s conn %d" % (shape, layout, connectivity)
                check(n == m, what + ": %d components, cc3d %d" % (n, m))
                check(numpy.array_equal(ours, theirs), what + ": labels differ from cc3d")
                cases += 1
        if ndim == 3:
            ours, n, sizes = voxlabel.label(mask, connectivity=26, order="matlab-xy", return_sizes=True)
            theirs = cc3d.connected_components(mask, connectivity=26)
            counts = numpy.asarray(cc3d.statistics(theirs)["voxel_counts"])
            check(numpy.array_equal(sizes, counts), "%s: sizes differ from cc3d.statistics" % (shape,))
            kept, _ = voxlabel.label(mask, connectivity=26, min_size=4)
            dusted = cc3d.dust(mask, threshold=4, connectivity=26)
            check(numpy.array_equal(kept > 0, dusted), "%s: min_size=4 keeps other voxels than cc3d.dust" % (shape,))
    cases += multilabel(rng)
    print("cc3d oracle: %d labellings compared" % cases)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
