"""Multilabel labelling against cc3d's multilabel mode (connected-components-3d, the tool segmentation
users run today): fresh random class maps every run (seed printed), 2 to 200 classes in blobs that
touch, odd shapes, u8/u16/u32. For every map and connectivity 6/18/26 (and 4/8 through cc3d's 2D mode,
slice by slice): the partition equal to cc3d's, the `matlab-xy` numbering equal to cc3d's raster
numbering on the C-order [z,y,x] array, the sizes equal to the label counts, each component's class
equal to the voxels' class; `matlab` and `size` orders give the same partition renumbered. Then
--min-size against cc3d.dust (per class islands under N voxels removed) on the cleaned class map.
usage: multilabel_cc3d.py TOOL [SEED]"""
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

try:
    import cc3d
except ImportError:
    print("SKIP: cc3d is not importable (scripts/oracle-venv BUILD makes the oracle venv)")
    sys.exit(77)

tool = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else int.from_bytes(os.urandom(4), "little")
print(f"seed {seed} (rerun: {sys.argv[0]} {tool} {seed})")
rng = np.random.default_rng(seed)
work_dir = tempfile.TemporaryDirectory()
work = work_dir.name
warnings.filterwarnings("ignore", message="loadtxt: input contained no data")
types = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32}


def class_map(shape, classes, dtype):
    """Blobs of random classes: a coarse random grid upsampled, plus noise voxels and background."""
    top = np.iinfo(dtype).max
    values = rng.choice(np.arange(1, min(top, 10**6)), size=classes, replace=False).astype(dtype)
    coarse = [max(1, s // int(rng.integers(1, 5))) for s in shape]
    grid = values[rng.integers(0, classes, size=coarse)]
    grid[rng.random(coarse) < 0.2] = 0
    reps = [-(-s // c) for s, c in zip(shape, coarse)]
    m = np.kron(grid, np.ones(reps, dtype=dtype))[: shape[0], : shape[1], : shape[2]].copy()
    noise = rng.random(shape) < rng.uniform(0.0, 0.3)
    m[noise] = values[rng.integers(0, classes, size=int(noise.sum()))]
    m[rng.random(shape) < 0.05] = 0
    return np.ascontiguousarray(m)


def run_tool(m, type_name, conn, order, extra=()):
    nz, ny, nx = m.shape
    raw = os.path.join(work, "map.raw")
    m.tofile(raw)
    prefix = os.path.join(work, "out")
    r = subprocess.run([tool, raw, str(nx), str(ny), str(nz), type_name, str(conn), order, "cpu", prefix, *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    labels = np.fromfile(prefix + ".labels", dtype=np.uint32).reshape(m.shape)
    table = np.loadtxt(prefix + ".csv", delimiter=",", skiprows=1, dtype=np.uint64, ndmin=2)
    cleaned = np.fromfile(prefix + ".cleaned", dtype=m.dtype).reshape(m.shape) if extra else None
    return labels, table, cleaned


def cc3d_labels(m, conn):
    if conn in (6, 18, 26):
        return cc3d.connected_components(m, connectivity=conn).astype(np.uint32)
    out = np.zeros(m.shape, dtype=np.uint32)
    offset = 0
    for z in range(m.shape[0]):
        s = cc3d.connected_components(m[z], connectivity=conn).astype(np.uint32)
        out[z] = np.where(s > 0, s + offset, 0)
        offset += int(s.max())
    return out


def same_partition(a, b):
    """Labels a and b name the same components (a bijection between their nonzero labels)."""
    if not np.array_equal(a > 0, b > 0):
        return False
    pairs = np.unique(np.stack([a[a > 0], b[b > 0]]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


maps = 0
for case in range(36):
    type_name = ["u8", "u16", "u32"][case % 3]
    shape = tuple(int(s) for s in rng.integers(1, 40, size=3))
    classes = int(rng.integers(2, 201 if type_name != "u8" else 255))
    classes = min(classes, 200)
    m = class_map(shape, classes, types[type_name])
    conn = [6, 18, 26, 4, 8][case % 5]
    what = f"case {case} {shape[::-1]} (x,y,z) {type_name} {classes} classes conn {conn}"
    expected = cc3d_labels(m, conn)
    got = run_tool(m, type_name, conn, "matlab-xy")
    if not check(got is not None, f"{what}: the tool failed"):
        continue
    labels, table, _ = got
    check(np.array_equal(labels, expected), f"{what}: matlab-xy labels differ from cc3d's raster numbering")
    count = int(expected.max())
    check(len(table) == count, f"{what}: {len(table)} components, cc3d {count}")
    if len(table) == count and count:
        sizes = np.bincount(expected.ravel(), minlength=count + 1)[1:]
        check(np.array_equal(table[:, 2], sizes), f"{what}: sizes differ from cc3d's voxel counts")
        first = np.zeros(count + 1, dtype=np.uint64)
        first[expected.ravel()[::-1]] = m.ravel()[::-1]
        check(np.array_equal(table[:, 1], first[1:]), f"{what}: component classes differ")
    for order in ("matlab", "size", "size-raster"):
        other = run_tool(m, type_name, conn, order)
        check(other is not None and same_partition(other[0], expected), f"{what}: order {order} partition differs")
    if conn in (6, 18, 26):
        threshold = int(rng.integers(2, 30))
        cleaned = run_tool(m, type_name, conn, "matlab-xy", (str(threshold), "0"))
        dusted = cc3d.dust(m, threshold=threshold, connectivity=conn, in_place=False)
        check(cleaned is not None and np.array_equal(cleaned[2], dusted),
              f"{what}: --min-size {threshold} cleaned map differs from cc3d.dust")
    maps += 1

np.array([1.5], dtype=np.float32).tofile(os.path.join(work, "map.raw"))
bad = subprocess.run([tool, os.path.join(work, "map.raw"), "1", "1", "1", "f32", "26", "matlab", "cpu",
                      os.path.join(work, "float")], capture_output=True, text=True)
check(bad.returncode == 1 and "f32" in bad.stderr and not os.path.exists(os.path.join(work, "float.labels")),
      f"a float class map: exit {bad.returncode}, {bad.stderr.strip()}")
print(f"{maps} class maps against cc3d")
sys.exit(finish())
