"""Random class maps for the multilabel tests: coarse blocks of random classes (a quarter background), each
block 2 to `block_divisor_below - 1` times smaller than the axis, plus single-voxel noise of random classes."""
import numpy as np


def random_class_map(rng, shape, classes, dtype, values_below, block_divisor_below, noise_fraction):
    """zyx map of `classes` distinct class values drawn from 1..values_below-1, cast to dtype."""
    values = rng.choice(np.arange(1, values_below), size=classes, replace=False).astype(dtype)
    coarse = [max(1, s // int(rng.integers(2, block_divisor_below))) for s in shape]
    grid = values[rng.integers(0, classes, size=coarse)]
    grid[rng.random(coarse) < 0.25] = 0
    reps = [-(-s // c) for s, c in zip(shape, coarse)]
    m = np.kron(grid, np.ones(reps, dtype=dtype))[: shape[0], : shape[1], : shape[2]].copy()
    noise = rng.random(shape) < noise_fraction
    m[noise] = values[rng.integers(0, classes, size=int(noise.sum()))]
    return m
