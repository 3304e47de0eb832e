"""G3: the maximum flow of voxlabel's max-flow solver equals PyMaxflow's (Boykov-Kolmogorov, the oracle) on
random grid graphs with integer capacities, 4/8-connected planes from 64^2 to 1024^2 and 6/26-connected
volumes; and the energy of voxlabel's labelling equals that flow (a minimum cut). Labels are never compared:
minimum cuts are not unique.

usage: graphcut_oracle_maxflow.py GRAPHCUT_TOOL WORKDIR [cpu|gpu]"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

try:
    import maxflow
    import numpy as np
except ImportError as error:
    print(f"SKIP: the oracle venv lacks PyMaxflow or numpy ({error}); run scripts/oracle-venv BUILD")
    sys.exit(77)

tool, work = sys.argv[1], sys.argv[2]
device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
os.makedirs(work, exist_ok=True)


def offsets(connectivity):
    text = subprocess.run([tool, "offsets", str(connectivity)], check=True, capture_output=True, text=True).stdout
    return [tuple(int(v) for v in line.split()) for line in text.splitlines()]


def random_graph(rng, shape, connectivity, kind):
    """Capacities as numpy arrays of shape (nz, ny, nx) and (directions, nz, ny, nx)."""
    n_dirs = len(offsets(connectivity))
    if kind == "uniform":
        source = rng.integers(0, 100, shape)
        sink = rng.integers(0, 100, shape)
        arcs = rng.integers(0, 60, (n_dirs,) + shape)
    else:
        # Segmentation-like: a smooth unary field and strong, partly asymmetric pair terms.
        field = rng.normal(size=shape)
        for axis in range(len(shape)):
            for _ in range(3):
                field = (field + np.roll(field, 1, axis) + np.roll(field, -1, axis)) / 3
        field = field / (np.abs(field).max() + 1e-9)
        source = np.clip(200 * field, 0, None).astype(np.int64) + rng.integers(0, 3, shape)
        sink = np.clip(-200 * field, 0, None).astype(np.int64) + rng.integers(0, 3, shape)
        arcs = rng.integers(20, 120, (n_dirs,) + shape)
        arcs[rng.random(arcs.shape) < 0.1] = 0
    return source.astype(np.int32), sink.astype(np.int32), arcs.astype(np.int32)


def oracle_flow(source, sink, arcs, connectivity):
    graph = maxflow.Graph[int]()
    ids = graph.add_grid_nodes(source.shape)
    for d, (dx, dy, dz) in enumerate(offsets(connectivity)):
        structure = np.zeros((3, 3, 3), dtype=np.int64)
        structure[1 + dz, 1 + dy, 1 + dx] = 1
        graph.add_grid_edges(ids, weights=arcs[d], structure=structure, symmetric=False)
    graph.add_grid_tedges(ids, source, sink)
    return graph.maxflow()


def ours(source, sink, arcs, connectivity, name):
    nz, ny, nx = source.shape
    path = os.path.join(work, name + ".graph")
    with open(path, "wb") as out:
        out.write(np.array([nx, ny, nz], dtype=np.int64).tobytes())
        out.write(np.array([connectivity], dtype=np.int32).tobytes())
        out.write(source.tobytes())
        out.write(sink.tobytes())
        # Node-major: arc_cap[p * directions + d].
        out.write(np.ascontiguousarray(np.moveaxis(arcs, 0, -1)).tobytes())
    result = subprocess.run([tool, "maxflow", path, device], capture_output=True, text=True)
    os.unlink(path)
    if result.returncode == 77:
        print(result.stdout.strip())
        sys.exit(77)
    if result.returncode != 0:
        return None, None, result.stderr.strip()
    fields = result.stdout.split()
    return int(fields[0]), int(fields[1]), ""


rng = np.random.default_rng(23)
# Uniform random capacities make hard graphs (PyMaxflow takes seconds at 512^2), so they stay small;
# the large grids are segmentation-like. Bigger graphs are in bench/graphcut_bench.py.
cases = [((1, 64, 64), 4, "uniform"), ((1, 64, 64), 8, "uniform"), ((1, 256, 256), 4, "smooth"),
         ((1, 256, 256), 8, "smooth"), ((1, 1024, 1024), 4, "smooth"), ((1, 300, 170), 8, "smooth"),
         ((32, 32, 32), 6, "uniform"), ((24, 24, 24), 26, "smooth"), ((48, 48, 48), 6, "smooth"),
         ((20, 24, 28), 26, "uniform"), ((1, 50, 70), 6, "smooth")]
for shape, connectivity, kind in cases:
    name = "%dx%dx%d-c%d-%s" % (shape[2], shape[1], shape[0], connectivity, kind)
    source, sink, arcs = random_graph(rng, shape, connectivity, kind)
    want = oracle_flow(source, sink, arcs, connectivity)
    flow, energy, error = ours(source, sink, arcs, connectivity, name)
    if check(flow is not None, f"{name}: graphcut_tool failed: {error}"):
        check(flow == want, f"{name}: flow {flow}, PyMaxflow {want}")
        check(energy == flow, f"{name}: labelling energy {energy} != flow {flow}")
        print(f"{name}: flow {flow} (PyMaxflow {want}), energy {energy}")
sys.exit(finish())
