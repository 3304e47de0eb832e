"""CPU peers for bench/run: cc3d and scipy.ndimage.label on the same raw masks, timed in the same run.

usage: cpu_peers.py MASK.raw NX NY NZ CONN REPEATS
prints: "cc3d SECONDS N" and "scipy SECONDS N" (median of REPEATS; label only, output allocation included)
"""
import sys
import time

import numpy as np


def median_time(function, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2], result


def main():
    path, nx, ny, nz, conn, repeats = sys.argv[1], *map(int, sys.argv[2:7])
    # C order (z, y, x) on an x-fastest file: the same memory layout voxlabel reads.
    mask = np.fromfile(path, dtype=np.uint8).reshape(nz, ny, nx).astype(bool)
    try:
        import cc3d

        seconds, (labels, n) = median_time(
            lambda: cc3d.connected_components(mask, connectivity=conn, return_N=True), repeats)
        print(f"cc3d {seconds:.4f} {n}")
    except ImportError:
        print("cc3d nan 0")
    from scipy import ndimage

    rank = {6: 1, 18: 2, 26: 3}[conn]
    structure = ndimage.generate_binary_structure(3, rank)
    seconds, (labels, n) = median_time(lambda: ndimage.label(mask, structure=structure), repeats)
    print(f"scipy {seconds:.4f} {n}")


if __name__ == "__main__":
    main()
