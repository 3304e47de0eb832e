#!/usr/bin/env python3
"""CuPy peer for bench/gpu_bench: cupyx.scipy.ndimage.label on the same masks (raw u8, x fastest, written
by `gpu_bench --write DIR`), conn 6/18/26, CUDA events, median of REPEATS after 3 warm-ups.
Prints one tab-separated PEER line per (volume, conn): name, conn, components, median ms."""
import sys

import cupy
import numpy
from cupyx.scipy import ndimage

VOLUMES = (("noise50", (512, 512, 512)), ("noise20", (512, 512, 512)), ("ct", (400, 512, 512)))


def main():
    directory = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    for name, shape in VOLUMES:
        mask = cupy.asarray(numpy.fromfile(f"{directory}/{name}.raw", dtype=numpy.uint8).reshape(shape))
        for conn, rank in ((6, 1), (18, 2), (26, 3)):
            structure = ndimage.generate_binary_structure(3, rank)
            times = []
            count = 0
            for run in range(3 + repeats):
                start, stop = cupy.cuda.Event(), cupy.cuda.Event()
                start.record()
                _, count = ndimage.label(mask, structure)
                stop.record()
                stop.synchronize()
                if run >= 3:
                    times.append(cupy.cuda.get_elapsed_time(start, stop))
            print(f"PEER\t{name}\t{conn}\t{int(count)}\t{float(numpy.median(times)):.4f}", flush=True)
        del mask
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
