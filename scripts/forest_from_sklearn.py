#!/usr/bin/env python3
"""Converts a fitted scikit-learn RandomForestClassifier into voxlabel's .vlrf model (docs/forest.md), so that
the same forest can be evaluated by scikit-learn, voxlabel's CPU and voxlabel's GPU.

The forest must have been fitted on voxlabel's filter bank channels, in voxlabel's channel order (as
`voxlabel train` or tests/forest_tool.c compute them), with classes 1..C. Thresholds become the largest
float32 not above scikit-learn's float64 threshold, so `x <= threshold` decides alike for float32 features.

usage: forest_from_sklearn.py MODEL.pkl OUT.vlrf [--features 2d|3d] [--sigmas 0.3,0.7,...]
  MODEL.pkl   a pickled (or joblib-dumped) RandomForestClassifier
As a module: write_vlrf(forest, path, dims=3, sigmas=ILASTIK_SIGMAS)."""
import argparse
import pickle
import struct
import sys

import numpy as np

ILASTIK_SIGMAS = (0.3, 0.7, 1.0, 1.6, 3.5, 5.0, 10.0)
FAMILY_ALL, FAMILY_SMOOTHING = 63, 1
FORMAT_VERSION = 2


def bank_channels(dims, sigmas):
    """Channels of the bank: smoothing only below 0.5 mm, else 4 + 2 * dims (see include/voxlabel/filters.h)."""
    return sum(1 if s < 0.5 else 4 + 2 * dims for s in sigmas)


def float32_at_most(value):
    f = np.float32(value)
    if float(f) > value:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def write_vlrf(forest, path, dims=3, sigmas=ILASTIK_SIGMAS):
    classes = [int(c) for c in forest.classes_]
    if classes != list(range(1, len(classes) + 1)):
        raise ValueError('the forest\'s classes are %s; voxlabel models need 1..C' % classes)
    features = int(forest.n_features_in_)
    if features != bank_channels(dims, sigmas):
        raise ValueError('the forest uses %d features, but the %dd bank with sigmas %s makes %d: a model trained '
                         'on other features' % (features, dims, list(sigmas), bank_channels(dims, sigmas)))
    out = bytearray()
    out += b'VLRF' + struct.pack('<III', FORMAT_VERSION, dims, len(sigmas))
    out += struct.pack('<%dd' % len(sigmas), *sigmas)
    out += struct.pack('<%dI' % len(sigmas), *[FAMILY_SMOOTHING if s < 0.5 else FAMILY_ALL for s in sigmas])
    out += struct.pack('<dddI', 4.0, 0.66, 0.5, 0)  # truncate, DoG ratio, structure inner ratio, no offsets
    out += struct.pack('<III', features, len(classes), len(forest.estimators_))
    out += struct.pack('<ddd', 0.0, 0.0, 0.0)  # training spacing unknown
    out += struct.pack('<QQd', 0, 0, -1.0)      # samples, seed, out-of-bag accuracy unknown
    importances = np.asarray(forest.feature_importances_, np.float32)
    out += struct.pack('<I', 1) + importances.tobytes()
    for estimator in forest.estimators_:
        tree = estimator.tree_
        leaf_of = {}
        values = []
        for node in range(tree.node_count):
            if tree.children_left[node] == -1:
                leaf_of[node] = len(values)
                counts = np.asarray(tree.value[node][0], np.float64)
                values.append(counts / counts.sum())
        out += struct.pack('<II', tree.node_count, len(values))
        for node in range(tree.node_count):
            if tree.children_left[node] == -1:
                out += struct.pack('<ifii', -1, 0.0, leaf_of[node], -1)
            else:
                out += struct.pack('<ifii', int(tree.feature[node]), float32_at_most(float(tree.threshold[node])),
                                   int(tree.children_left[node]), int(tree.children_right[node]))
        out += np.asarray(values, np.float32).tobytes()
    out += b'FRLV'
    with open(path, 'wb') as f:
        f.write(bytes(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('model')
    parser.add_argument('output')
    parser.add_argument('--features', choices=('2d', '3d'), default='3d')
    parser.add_argument('--sigmas', default=','.join(str(s) for s in ILASTIK_SIGMAS))
    args = parser.parse_args()
    with open(args.model, 'rb') as f:
        forest = pickle.load(f)
    try:
        write_vlrf(forest, args.output, int(args.features[0]), [float(s) for s in args.sigmas.split(',')])
    except ValueError as error:
        print('forest_from_sklearn: error: %s' % error, file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
