"""Peers of bench/graphcut_bench.c: PyMaxflow (Boykov-Kolmogorov, the reference implementation's C++ behind
Python) on the graphs graphcut_bench wrote, and OpenCV's BackgroundSubtractorMOG2 on all cores.
usage: graphcut_peers.py maxflow GRAPH_FILE... | mog2 WIDTH HEIGHT FRAMES"""
import os
import sys
import time

import numpy as np


def offsets(connectivity):
    half = {4: [(1, 0, 0), (0, 1, 0)], 8: [(1, 0, 0), (0, 1, 0), (1, 1, 0), (1, -1, 0)],
            6: [(1, 0, 0), (0, 1, 0), (0, 0, 1)]}.get(connectivity)
    if half is None:
        raise SystemExit("the peer bench covers connectivity 4, 8 and 6")
    return [o for h in half for o in (h, tuple(-v for v in h))]


def maxflow_peer(path):
    import maxflow
    with open(path, "rb") as f:
        nx, ny, nz = np.frombuffer(f.read(24), np.int64)
        connectivity = int(np.frombuffer(f.read(4), np.int32)[0])
        n, dirs = int(nx * ny * nz), len(offsets(connectivity))
        source = np.frombuffer(f.read(4 * n), np.int32).reshape(nz, ny, nx)
        sink = np.frombuffer(f.read(4 * n), np.int32).reshape(nz, ny, nx)
        arcs = np.frombuffer(f.read(4 * n * dirs), np.int32).reshape(nz, ny, nx, dirs)
    start = time.perf_counter()
    graph = maxflow.Graph[int]()
    ids = graph.add_grid_nodes(source.shape)
    for d, (dx, dy, dz) in enumerate(offsets(connectivity)):
        structure = np.zeros((3, 3, 3), np.int64)
        structure[1 + dz, 1 + dy, 1 + dx] = 1
        graph.add_grid_edges(ids, weights=np.ascontiguousarray(arcs[..., d]), structure=structure, symmetric=False)
    graph.add_grid_tedges(ids, source, sink)
    built = time.perf_counter()
    flow = graph.maxflow()
    done = time.perf_counter()
    print(f"maxflow {nx}x{ny}x{nz} c{connectivity} PyMaxflow (BK, 1 core): flow {flow}, build {1e3 * (built - start):.1f} ms,"
          f" solve {1e3 * (done - built):.3f} ms")


def mog2_peer(width, height, frames):
    import cv2
    cv2.setNumThreads(os.cpu_count())
    rng = np.random.default_rng(1)
    yy, xx = np.mgrid[0:height, 0:width]
    background = 90 + 40 * np.sin(xx / 23.0) * np.cos(yy / 31.0)
    sequence = []
    for t in range(frames):
        image = background + rng.normal(0, 6, background.shape)
        image[(xx - (t * 5) % width) ** 2 + (yy - height // 2) ** 2 < (height // 14) ** 2] = 200
        sequence.append(np.clip(image, 0, 255).astype(np.uint8))
    model = cv2.createBackgroundSubtractorMOG2(500, 16, False)
    start = time.perf_counter()
    for frame in sequence:
        model.apply(frame)
    seconds = time.perf_counter() - start
    print(f"mog2 {width}x{height} x {frames} frames OpenCV {cv2.__version__} ({cv2.getNumThreads()} threads): "
          f"{1e3 * seconds:.1f} ms, {frames / seconds:.0f} frames/s")


if sys.argv[1] == "maxflow":
    try:
        import maxflow  # noqa: F401
    except ImportError:
        print("maxflow peer: PyMaxflow is not installed (scripts/oracle-venv BUILD has it)")
        sys.exit(0)
    for graph_path in sys.argv[2:]:
        maxflow_peer(graph_path)
else:
    mog2_peer(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
