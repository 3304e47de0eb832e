#!/usr/bin/env python3
"""Dask: voxlabel.dask.label against dask-image's ndmeasure.label on the same chunked array, on a two-worker
dask.distributed LocalCluster (one thread each): wall time to labels whose every chunk is computed, the component
count, and the peak resident memory of each worker (its RSS polled every 0.2 s). The mask is a function of the
global coordinates (three sine waves plus hashed noise, thresholded), so chunks are made on the workers and
components cross every chunk face.
Without --store, the labels' maximum is reduced on the workers and nothing is gathered. With --store DIR, for
arrays whose labels exceed the machine's memory, voxlabel labels with keep_labels=False and streams the labels
into a zarr array at DIR chunk by chunk (the time includes the store), then checks them: the maximum equals N,
a sub-box labelled whole by voxlabel.label has the same foreground and each of its components lies in exactly
one stored label, and with --verify CHUNK2 the array labelled again in another chunking equals the store voxel
for voxel. dask-image runs under a time limit (--peer-minutes, default 10; 0 skips it) and is reported as not
finished with its peak memory up to then.
--sample K compares K chunks of the second chunking (picked at random, seed 0) instead of all; --check-only N
checks an existing store of N components without labelling; --peer-only runs dask-image alone.
usage: python_dask_bench.py SIDE CHUNK [CONN] [MEMORY_LIMIT] [--store DIR] [--verify CHUNK2] [--sample K]
                            [--check-only N] [--peer-only] [--peer-minutes M]
  e.g. 512 128 26 6GB;  2048 256 26 4GB --store /tmp/labels.zarr --verify 512,256,128 --peer-minutes 15"""
import os
import sys
import threading
import time

import dask
import dask.array as da
import numpy
from distributed import Client, LocalCluster


def mask_block(block, block_info=None):
    """The mask of one chunk, made one z plane at a time (the hash and the y and x waves are per plane), with
    the same floating-point expression order for every voxel whatever the chunking."""
    (z0, z1), (y0, y1), (x0, x1) = block_info[None]["array-location"]
    y, x = numpy.arange(y0, y1)[:, None], numpy.arange(x0, x1)[None, :]
    plane_hash = (y * 19349663) ^ (x * 83492791)
    wave_y, wave_x = numpy.sin(y / 11.0), numpy.sin(x / 13.0)
    out = numpy.empty((z1 - z0, y1 - y0, x1 - x0), dtype=bool)
    for k, z in enumerate(range(z0, z1)):
        noise = ((numpy.int64(z) * 73856093) ^ plane_hash) % 1000 / 1000.0
        out[k] = numpy.sin(z / 7.0) + wave_y + wave_x + noise > 1.2
    return out


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


def row(name, seconds, n, top, memory, status):
    peaks = " / ".join("%.2f" % (v / 2**30) for v in sorted(memory.peaks.values()))
    print("| %s | %s | %d | %d | %s | %s |" % (name, seconds, n, top, peaks, status), flush=True)


def run(name, client, function, minutes=None):
    """Times function() -> (labels, n) to the labels' maximum, in a thread so that a time limit can stop
    waiting; returns n, or None when the limit passed (the cluster must then be closed)."""
    client.run(lambda: __import__("gc").collect())
    outcome = {}

    def work():
        try:
            labels, n = function()
            outcome["result"] = (int(n), int(labels.max().compute()), "ok")
        except Exception as error:
            outcome["result"] = (-1, -1, "failed: %s" % str(error).splitlines()[0][:120])

    start = time.perf_counter()
    with PeakMemory(client) as memory:
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join(None if minutes is None else minutes * 60)
    seconds = time.perf_counter() - start
    if "result" not in outcome:
        row(name, "> %.0f" % seconds, -1, -1, memory, "not finished in %g min (peak RSS up to then)" % minutes)
        return None
    n, top, status = outcome["result"]
    row(name, "%.1f" % seconds, n, top, memory, status)
    return n


def label_and_store(client, side, chunk, conn, path):
    """voxlabel.dask.label with keep_labels=False, the labels streamed into a zarr array at `path`;
    returns (n, the labels' maximum) and prints the row."""
    import zarr

    import voxlabel.dask
    client.run(lambda: __import__("gc").collect())
    start = time.perf_counter()
    with PeakMemory(client) as memory:
        labels, n = voxlabel.dask.label(make_mask(side, chunk), connectivity=conn, keep_labels=False)
        merged = time.perf_counter() - start
        store = zarr.open(path, mode="w", shape=labels.shape, chunks=labels.chunksize, dtype=numpy.uint32)
        stored = da.store(labels, store, lock=False, compute=False)
        _, top = dask.compute(stored, labels.max())
    seconds = time.perf_counter() - start
    row("voxlabel.dask.label, keep_labels=False, stored to zarr", "%.1f (merge done at %.1f)" % (seconds, merged),
        n, int(top), memory, "ok")
    return n, int(top)


def count_differences(block, region, path):
    import zarr
    return int(numpy.count_nonzero(zarr.open(path, mode="r")[region] != block))


def verify(client, side, chunk, conn, path, n, top, chunk2, sample):
    """Checks the stored labels three ways (printed; returns False on any failure)."""
    import zarr

    import voxlabel
    import voxlabel.dask
    ok = top == n
    print("check: stored maximum %d, N %d: %s" % (top, n, "equal" if ok else "DIFFERENT"))
    # A sub-box off the chunk grid, labelled whole on the client: every component of it is part of one global
    # component, so each must carry one stored label, and the foreground must agree.
    origin, size = (side // 2 - 97, side // 3 + 41, side - 300), (260, 290, 300)
    origin = tuple(max(0, min(o, side - s)) for o, s in zip(origin, size))
    size = tuple(min(s, side) for s in size)
    box = tuple(slice(o, o + s) for o, s in zip(origin, size))
    mask = mask_block(None, {None: {"array-location": [(b.start, b.stop) for b in box]}})
    local, local_n = voxlabel.label(mask, connectivity=conn, device="cpu")
    stored = zarr.open(path, mode="r")[box]
    same_foreground = numpy.array_equal(stored != 0, mask)
    pairs = numpy.unique((local[mask].astype(numpy.uint64) << numpy.uint64(32)) | stored[mask])
    one_label_each = pairs.size == local_n
    print("check: sub-box %s at %s, %d components labelled whole: foreground %s, each in one stored label %s"
          % ("x".join(map(str, size)), origin, local_n, "equal" if same_foreground else "DIFFERENT",
             "yes" if one_label_each else "NO (%d pairs)" % pairs.size))
    ok = ok and same_foreground and one_label_each
    if chunk2:
        start = time.perf_counter()
        labels, n2 = voxlabel.dask.label(make_mask(side, chunk2), connectivity=conn, keep_labels=False)
        merged = time.perf_counter() - start
        # Every chunk of the second chunking, or `sample` of them picked at random (seed 0), against the store.
        blocks = labels.to_delayed()
        indices = list(numpy.ndindex(*blocks.shape))
        if sample:
            picks = numpy.random.default_rng(0).choice(len(indices), min(sample, len(indices)), replace=False)
            indices = [indices[k] for k in sorted(picks)]
        starts = [numpy.concatenate(([0], numpy.cumsum(c))) for c in labels.chunks]
        parts = [dask.delayed(count_differences)(blocks[index], tuple(slice(int(starts[a][i]), int(starts[a][i + 1]))
                                                                      for a, i in enumerate(index)), path)
                 for index in indices]
        mismatched = sum(dask.compute(*parts))
        print("check: chunks %s: N %d (merge %.1f s); %d of its %d chunks compared voxel for voxel with the store: "
              "%d voxels differ (%.1f s)" % ("x".join(map(str, chunk2)), n2, merged, len(indices), blocks.size,
                                             mismatched, time.perf_counter() - start))
        ok = ok and n2 == n and mismatched == 0
    print("check: %s" % ("all passed" if ok else "FAILED"), flush=True)
    return ok


def main():
    arguments = sys.argv[1:]
    options = {}
    for name in ("--store", "--verify", "--sample", "--peer-minutes", "--check-only"):
        if name in arguments:
            at = arguments.index(name)
            options[name] = arguments[at + 1]
            del arguments[at:at + 2]
    side, chunk = int(arguments[0]), int(arguments[1])
    conn = int(arguments[2]) if len(arguments) > 2 else 26
    memory_limit = arguments[3] if len(arguments) > 3 else "6GB"
    chunk2 = tuple(int(c) for c in options["--verify"].split(",")) if "--verify" in options else None
    minutes = float(options.get("--peer-minutes", 10))
    sample = int(options.get("--sample", 0))
    peer_only = "--peer-only" in arguments
    if peer_only:
        arguments.remove("--peer-only")
    import scipy.ndimage

    import voxlabel.dask
    ok, finished = True, True
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=memory_limit, dashboard_address=None,
                           silence_logs=50)
    client = Client(cluster)
    print("%d^3 voxels in %d^3 chunks (%d chunks), conn %d, 2 workers x 1 thread, memory_limit %s per worker"
          % (side, chunk, (side // chunk) ** 3, conn, memory_limit))
    print("| labeller | seconds | N | max label | peak RSS per worker GiB | status |")
    print("|---|---|---|---|---|---|")
    if peer_only:
        ours = -1
    elif "--check-only" in options:
        # The store of an earlier --store run, whose N is given: its maximum is reduced on the workers.
        ours = int(options["--check-only"])
        top = int(da.from_zarr(options["--store"]).max().compute())
        ok = verify(client, side, chunk, conn, options["--store"], ours, top, chunk2, sample)
    elif "--store" in options:
        ours, top = label_and_store(client, side, chunk, conn, options["--store"])
        ok = verify(client, side, chunk, conn, options["--store"], ours, top, chunk2, sample)
    else:
        ours = run("voxlabel.dask.label", client,
                   lambda: voxlabel.dask.label(make_mask(side, chunk), connectivity=conn))
    if minutes > 0:
        import dask_image.ndmeasure
        structure = scipy.ndimage.generate_binary_structure(3, {6: 1, 18: 2, 26: 3}[conn])
        theirs = run("dask_image.ndmeasure.label", client,
                     lambda: dask_image.ndmeasure.label(make_mask(side, chunk), structure=structure), minutes)
        finished = theirs is not None
        if finished and ours >= 0 and theirs >= 0 and theirs != ours:
            print("MISMATCH: component counts differ (voxlabel %d, dask-image %d)" % (ours, theirs))
    if finished:
        client.close()
        cluster.close()
    else:
        # The unfinished peer's tasks cannot be cancelled mid-task: stop the workers outright.
        try:
            client.shutdown()
        finally:
            sys.stdout.flush()
            os._exit(0 if ok else 1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
