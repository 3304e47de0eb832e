#!/usr/bin/env python3
"""Python call overhead: voxlabel.label against cc3d.connected_components on the same NumPy arrays, from tiny
(where the cost of crossing into C dominates) to 256^3 (where the labeller does). Both on the CPU with every
core; voxlabel with order="matlab-xy" (cc3d's numbering) and with its default bwlabeln order. Median of
REPEATS calls (more for tiny arrays) after one warm-up; labels checked equal to cc3d's.
usage: python_overhead.py [REPEATS]   (PYTHONPATH and VOXLABEL_LIBRARY set by bench/python_bench.sh)"""
import os
import sys
import time

import cc3d
import numpy

import voxlabel


def median_seconds(function, repeats):
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(numpy.median(times))


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = numpy.random.default_rng(1)
    print("cores: %d, cc3d %s, voxlabel %s (%s)" % (os.cpu_count(), getattr(cc3d, "__version__", "?"),
                                                 voxlabel.__version__, voxlabel.library_path))
    print("| array | p | conn | N | voxlabel matlab-xy | voxlabel matlab | cc3d | cc3d / voxlabel |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in [(1, 1, 1), (4, 4, 4), (16, 16, 16), (64, 64, 64), (128, 128, 128), (256, 256, 256)]:
        for density in (0.2, 0.5):
            mask = rng.random(shape) < density
            calls = max(repeats, int(2e6 // mask.size)) if mask.size < 2e6 else repeats
            calls = min(calls, 2000)
            for conn in (6, 26):
                ours, n = voxlabel.label(mask, connectivity=conn, order="matlab-xy", device="cpu")
                theirs = cc3d.connected_components(mask, connectivity=conn)
                if not numpy.array_equal(ours, theirs):
                    print("MISMATCH %s p=%.1f conn %d" % (shape, density, conn))
                xy = median_seconds(lambda: voxlabel.label(mask, connectivity=conn, order="matlab-xy",
                                                           device="cpu"), calls)
                matlab = median_seconds(lambda: voxlabel.label(mask, connectivity=conn, device="cpu"), calls)
                peer = median_seconds(lambda: cc3d.connected_components(mask, connectivity=conn), calls)
                unit, scale = ("us", 1e6) if max(xy, peer) < 1e-2 else ("ms", 1e3)
                print("| %s | %.1f | %d | %d | %.1f %s | %.1f %s | %.1f %s | %.2f |" % (
                    "x".join(map(str, shape)), density, conn, n, xy * scale, unit, matlab * scale, unit,
                    peer * scale, unit, peer / xy), flush=True)


if __name__ == "__main__":
    main()
