"""Peers of the multilabel bench on one class map, median of REPEATS:
  cpu: cc3d.connected_components (multilabel, label only); cc3d.dust(threshold=MIN_SIZE) (the islands of every
       class removed); label + the largest component of each class kept (cc3d labels, numpy bincount and a
       lookup table: the fast way to write nnU-Net's "keep the largest per class" with cc3d)
  gpu: a CuPy loop of cupyx.scipy.ndimage.label over the classes (the GPU route today), from a device array
Output: "NAME WALL_SECONDS [CPU_SECONDS] ..." per peer (CPU seconds for the CPU peers).
usage: multilabel_peers.py cpu|gpu MAP.raw NX NY NZ CONN REPEATS [MIN_SIZE]"""
import sys
import time

import numpy as np

mode, path = sys.argv[1], sys.argv[2]
nx, ny, nz, conn, repeats = (int(a) for a in sys.argv[3:8])
min_size = int(sys.argv[8]) if len(sys.argv) > 8 else 100
m = np.fromfile(path, dtype=np.uint8).reshape(nz, ny, nx)


def median_time(fn):
    """Median wall seconds and median process CPU seconds of REPEATS calls, and the last result."""
    times, cpu = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    return float(np.median(times)), float(np.median(cpu)), result


if mode == "cpu":
    import cc3d

    t, c, labels = median_time(lambda: cc3d.connected_components(m, connectivity=conn))
    print(f"cc3d_label {t:.4f} {c:.4f} {int(labels.max())}")
    t, c, _ = median_time(lambda: cc3d.dust(m, threshold=min_size, connectivity=conn, in_place=False))
    print(f"cc3d_dust {t:.4f} {c:.4f}")

    def largest_per_class():
        labels = cc3d.connected_components(m, connectivity=conn)
        sizes = np.bincount(labels.ravel())
        cls = np.zeros(len(sizes), dtype=np.int64)
        cls[labels.ravel()] = m.ravel()
        keep = np.zeros(len(sizes), dtype=m.dtype)
        order = np.lexsort((-sizes[1:], cls[1:])) + 1  # by class, larger first
        first = np.ones(len(order), dtype=bool)
        first[1:] = cls[order][1:] != cls[order][:-1]
        keep[order[first]] = cls[order[first]]
        return keep[labels]

    t, c, _ = median_time(largest_per_class)
    print(f"cc3d_largest {t:.4f} {c:.4f}")
else:
    import cupy as cp
    import cupyx.scipy.ndimage as ndi

    d = cp.asarray(m)
    structure = cp.ones((3, 3, 3), dtype=bool) if conn == 26 else None
    classes = [int(c) for c in np.unique(m) if c]

    def loop():
        total = 0
        for c in classes:
            _, n = ndi.label(d == c, structure=structure)
            total += int(n)
        cp.cuda.Device().synchronize()
        return total

    loop()
    t, _, total = median_time(loop)
    print(f"cupy_loop {t:.4f} {total} {len(classes)}")
