#!/usr/bin/env python3
"""Dask: voxlabel.dask.label against dask-image's ndmeasure.label on the same chunked array, on a two-worker
dask.distributed LocalCluster (one thread each): wall time to labels whose every chunk is computed (the labels'
maximum is reduced on the workers, nothing gathered), the component count, and the peak resident memory of each
worker (its RSS polled every 0.2 s). The mask is a function of the global coordinates (three sine waves plus
hashed noise, thresholded), so chunks are made on the workers and components cross every chunk face.
usage: python_dask_bench.py SIDE CHUNK [CONN] [MEMORY_LIMIT]   e.g. 512 128 26 6GB"""
import sys
import threading
import time

import dask.array as da
import numpy
from distributed import Client, LocalCluster


def mask_block(block, block_info=None):
    (z0, z1), (y0, y1), (x0, x1) = block_info[None]["array-location"]
    z, y, x = numpy.meshgrid(numpy.arange(z0, z1), numpy.arange(y0, y1), numpy.arange(x0, x1), indexing="ij",
                             sparse=True)
    noise = ((z * 73856093) ^ (y * 19349663) ^ (x * 83492791)) % 1000 / 1000.0
    wave = numpy.sin(z / 7.0) + numpy.sin(y / 11.0) + numpy.sin(x / 13.0)
    return (wave + noise) > 1.2


def make_mask(side, chunk):
    template = da.zeros((side, side, side), chunks=chunk, dtype=bool)
    return template.map_blocks(mask_block, dtype=bool)


def rss():
    import psutil
    return psutil.Process().memory_info().rss


class PeakMemory:
    """Polls every worker's RSS in a background thread; peaks[address] = the largest seen."""

    def __init__(self, client):
        self.client, self.peaks, self.running = client, {}, True
        self.thread = threading.Thread(target=self.poll, daemon=True)

    def poll(self):
        while self.running:
            for address, value in self.client.run(rss).items():
                self.peaks[address] = max(self.peaks.get(address, 0), value)
            time.sleep(0.2)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()


def run(name, client, function):
    client.run(lambda: __import__("gc").collect())
    start = time.perf_counter()
    with PeakMemory(client) as memory:
        try:
            labels, n = function()
            top = int(labels.max().compute())
            status = "ok"
        except Exception as error:
            n, top, status = -1, -1, "failed: %s" % str(error).splitlines()[0][:120]
    seconds = time.perf_counter() - start
    peaks = " / ".join("%.2f" % (v / 2**30) for v in sorted(memory.peaks.values()))
    print("| %s | %.1f | %d | %d | %s | %s |" % (name, seconds, n, top, peaks, status), flush=True)
    return n


def main():
    side, chunk = int(sys.argv[1]), int(sys.argv[2])
    conn = int(sys.argv[3]) if len(sys.argv) > 3 else 26
    memory_limit = sys.argv[4] if len(sys.argv) > 4 else "6GB"
    import dask_image.ndmeasure
    import scipy.ndimage

    import voxlabel.dask
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=memory_limit, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:
        print("%d^3 voxels in %d^3 chunks (%d chunks), conn %d, 2 workers x 1 thread, memory_limit %s per worker"
              % (side, chunk, (side // chunk) ** 3, conn, memory_limit))
        print("| labeller | seconds | N | max label | peak RSS per worker GiB | status |")
        print("|---|---|---|---|---|---|")
        ours = run("voxlabel.dask.label", client, lambda: voxlabel.dask.label(make_mask(side, chunk), connectivity=conn))
        structure = scipy.ndimage.generate_binary_structure(3, {6: 1, 18: 2, 26: 3}[conn])
        theirs = run("dask_image.ndmeasure.label", client,
                     lambda: dask_image.ndmeasure.label(make_mask(side, chunk), structure=structure))
        if ours >= 0 and theirs >= 0 and int(theirs) != ours:
            print("MISMATCH: component counts differ (voxlabel %d, dask-image %d)" % (ours, int(theirs)))


if __name__ == "__main__":
    main()
