"""Class maps for the multilabel bench (bench/multilabel_bench.sh, bench/multilabel_device_run.sh): 512x512x400
u8, TotalSegmentator-like in scale: organs as blocks of 16^3 voxels of K classes inside a body (a third of the
volume background), and 0.05% single-voxel islands of random classes (what a clean-up removes). Fixed seed.
K written as <K>solid: the same organs without the islands (for the profile: what the islands cost).
usage: multilabel_maps.py OUT_DIR K...   writes OUT_DIR/classes<K>.raw"""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name in sys.argv[2:]:
    solid = name.endswith("solid")
    k = int(name[:-len("solid")] if solid else name)
    path = os.path.join(out, f"classes{name}.raw")
    if os.path.exists(path):
        continue
    rng = np.random.default_rng(1000 + k)
    coarse = rng.integers(1, k + 1, size=(25, 32, 32), dtype=np.uint8)
    coarse[rng.random(coarse.shape) < 0.33] = 0
    m = coarse.repeat(16, axis=0).repeat(16, axis=1).repeat(16, axis=2)
    islands = rng.random(m.shape, dtype=np.float32) < (0 if solid else 0.0005)
    m[islands] = rng.integers(1, k + 1, size=int(islands.sum()), dtype=np.uint8)
    np.ascontiguousarray(m).tofile(path)
    print(f"{path}: {k} classes, {int(islands.sum())} island voxels")
