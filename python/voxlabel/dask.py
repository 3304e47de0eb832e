"""voxlabel.dask.label: connected components of a Dask array, identical to labelling the whole array.

How (every step is a Dask task, so it runs on the local scheduler or a distributed cluster):
  1. every chunk is labelled on its own by voxlabel.label, numbered by the key family of the requested
     order (matlab or matlab-xy); it reports, per provisional label, the minimum global key of its voxels
     (docs/design.md section 4) and its size, and keeps the six boundary planes of its labels (its shell);
  2. for every pair of chunks that touch through a face, an edge or a corner (as the connectivity allows),
     a task pairs the provisional labels that touch across them, from the two shells only;
  3. one merge task joins the touching pairs with a union-find over the boundary labels alone (the pairs'
     graph), gives every component the minimum key (and the total size) of its provisional labels, ranks
     the components by them exactly as the whole-array order does, and hands each chunk its lookup table;
  4. every chunk is relabelled through its table.
The merge holds, per provisional label, one key, one size and one entry of the table, and the union-find
holds only labels that touch a chunk boundary: nothing in it grows with the voxels. Its tables stay on the
cluster; the client receives only the count.
Chunks may be NumPy or CuPy arrays (voxlabel.label labels CuPy chunks on their GPU).
"""
import itertools

import dask
import dask.array as da
import numpy

from . import _label, _layout, _lib

_KEY_AXES = {"matlab": "zxy", "size": "zxy", "matlab-xy": "zyx", "size-raster": "zyx"}
_KEY_ORDER = {"matlab": "matlab", "size": "matlab", "matlab-xy": "matlab-xy", "size-raster": "matlab-xy"}


def _module(array):
    try:
        import cupy
        return cupy.get_array_module(array)
    except ImportError:
        return numpy


def _host_copy(array):
    """A host array of its own: a view would keep the whole chunk's labels alive with the shell."""
    return array.get() if hasattr(array, "get") and not isinstance(array, numpy.ndarray) else numpy.array(array)


def _first_voxels_and_sizes(xp, flat, count):
    """Where labels 1..count first appear in `flat` (the chunk in key order) and their voxel counts, as host
    arrays. Labels are numbered in that order, so on the host a label first appears where the running
    maximum grows; on a GPU a scatter-min of positions finds the same without moving the voxels."""
    if xp is numpy:
        running = numpy.maximum.accumulate(flat)
        firsts = numpy.flatnonzero(flat > numpy.concatenate(([0], running[:-1])))
        sizes = numpy.bincount(flat, minlength=count + 1)[1:].astype(numpy.int64)
    else:
        import cupyx
        positions = xp.full(count + 1, flat.size, dtype=xp.int64)
        cupyx.scatter_min(positions, flat.astype(xp.int64), xp.arange(flat.size, dtype=xp.int64))
        firsts = xp.asnumpy(positions[1:])
        sizes = xp.asnumpy(xp.bincount(flat, minlength=count + 1)[1:]).astype(numpy.int64)
    if firsts.size != count:
        raise _lib.VoxlabelError("dask: chunk labels are not in key order (%d first voxels, %d labels)"
                                 % (firsts.size, count), "internal error")
    return firsts, sizes


def _label_chunk(block, names, start, full_shape, connectivity, order):
    """Step 1: (local labels, summary (count, keys, sizes), shell) of one chunk at `start` (per array axis)."""
    xp = _module(block)
    labels, count = _label.label(block, connectivity=connectivity, order=_KEY_ORDER[order], axes=names)
    key_axes = [names.index(axis) for axis in _KEY_AXES[order] if axis in names]
    flat = labels.transpose(key_axes).ravel()
    firsts, sizes = _first_voxels_and_sizes(xp, flat, count)
    local_shape = [labels.shape[a] for a in key_axes]
    keys = numpy.zeros(count, dtype=numpy.int64)
    for a, local in zip(key_axes, numpy.unravel_index(firsts, local_shape)):
        stride = int(numpy.prod([full_shape[b] for b in key_axes[key_axes.index(a) + 1:]], dtype=numpy.int64))
        keys += (local.astype(numpy.int64) + start[a]) * stride
    shell = {}
    for axis in range(labels.ndim):
        first = [slice(None)] * labels.ndim
        last = [slice(None)] * labels.ndim
        first[axis], last[axis] = slice(0, 1), slice(-1, None)
        shell[(axis, 0)] = _host_copy(labels[tuple(first)])
        shell[(axis, 1)] = _host_copy(labels[tuple(last)])
    return labels, (count, keys, sizes), shell


def _corner(shell, offset, low):
    """The part of a chunk's shell that touches the neighbour at block `offset` (from the low chunk's side
    when `low`, from the high chunk's side otherwise)."""
    axes = [a for a, o in enumerate(offset) if o]
    side = lambda a: (offset[a] > 0) == low
    region = shell[(axes[0], int(side(axes[0])))]
    for a in axes[1:]:
        index = [slice(None)] * region.ndim
        index[a] = slice(-1, None) if side(a) else slice(0, 1)
        region = region[tuple(index)]
    return region


def _displacements(offset, names, connectivity):
    """The voxel steps from chunk A into chunk B (at block `offset` from A) that the connectivity allows."""
    free = [a for a, o in enumerate(offset) if o == 0]
    for steps in itertools.product((-1, 0, 1), repeat=len(free)):
        step = list(offset)
        for a, s in zip(free, steps):
            step[a] = s
        moved = sum(1 for s in step if s)
        if connectivity in (4, 8):
            if "z" in names and step[names.index("z")]:
                continue
            limit = 1 if connectivity == 4 else 2
        else:
            limit = {6: 1, 18: 2, 26: 3}[connectivity]
        if moved <= limit:
            yield step


def _touching_pairs(shell_a, shell_b, offset, names, connectivity):
    """Step 2: the unique (label in A, label in B) pairs of voxels adjacent across the two chunks."""
    a_region, b_region = _corner(shell_a, offset, True), _corner(shell_b, offset, False)
    found = []
    for step in _displacements(offset, names, connectivity):
        a_index, b_index = [], []
        for a, (s, o) in enumerate(zip(step, offset)):
            if o or s == 0:
                a_index.append(slice(None))
                b_index.append(slice(None))
            elif s > 0:
                a_index.append(slice(None, -1))
                b_index.append(slice(1, None))
            else:
                a_index.append(slice(1, None))
                b_index.append(slice(None, -1))
        a_labels, b_labels = a_region[tuple(a_index)].ravel(), b_region[tuple(b_index)].ravel()
        touching = (a_labels != 0) & (b_labels != 0)
        found.append((a_labels[touching].astype(numpy.uint64) << numpy.uint64(32)) | b_labels[touching])
    pairs = numpy.unique(numpy.concatenate(found)) if found else numpy.zeros(0, numpy.uint64)
    return (pairs >> numpy.uint64(32)).astype(numpy.int64), (pairs & numpy.uint64(0xFFFFFFFF)).astype(numpy.int64)


def _merge(summaries, pair_lists, pair_chunks, order):
    """Step 3: the final label of every provisional label, as one lookup table per chunk, and the count."""
    counts = numpy.array([s[0] for s in summaries], dtype=numpy.int64)
    offsets = numpy.concatenate(([0], numpy.cumsum(counts)))
    total = int(offsets[-1])
    keys = numpy.concatenate([s[1] for s in summaries]) if total else numpy.zeros(0, numpy.int64)
    sizes = numpy.concatenate([s[2] for s in summaries]) if total else numpy.zeros(0, numpy.int64)
    group = numpy.arange(total, dtype=numpy.int64)
    ends = [(offsets[a] + la - 1, offsets[b] + lb - 1) for (la, lb), (a, b) in zip(pair_lists, pair_chunks)]
    if ends:
        left = numpy.concatenate([e[0] for e in ends])
        right = numpy.concatenate([e[1] for e in ends])
        if left.size:
            group = _union(group, left, right)
    # Components are the groups; each takes its members' minimum key and total size.
    roots, component = numpy.unique(group, return_inverse=True)
    component_key = numpy.full(roots.size, numpy.iinfo(numpy.int64).max, dtype=numpy.int64)
    numpy.minimum.at(component_key, component, keys)
    if order in ("size", "size-raster"):
        component_size = numpy.zeros(roots.size, dtype=numpy.int64)
        numpy.add.at(component_size, component, sizes)
        ranking = numpy.lexsort((component_key, -component_size))
    else:
        ranking = numpy.argsort(component_key, kind="stable")
    final = numpy.empty(roots.size, dtype=numpy.uint32)
    final[ranking] = numpy.arange(1, roots.size + 1, dtype=numpy.uint32)
    table = final[component]
    return roots.size, [numpy.concatenate(([0], table[offsets[c]:offsets[c + 1]])).astype(numpy.uint32)
                        for c in range(len(summaries))]


def _union(group, left, right):
    """Union-find over the labels that appear in touching pairs only, compressed to those ids: each round
    hooks the root of both ends of every pair to the smaller of the two roots, then compresses every path
    fully, until no pair joins two roots. Each component ends at its smallest id; written back into `group`."""
    boundary, inverse = numpy.unique(numpy.concatenate((left, right)), return_inverse=True)
    a, b = inverse[:left.size], inverse[left.size:]
    parent = numpy.arange(boundary.size, dtype=numpy.int64)
    while True:
        root_a, root_b = parent[a], parent[b]
        apart = root_a != root_b
        if not apart.any():
            break
        low = numpy.minimum(root_a[apart], root_b[apart])
        numpy.minimum.at(parent, root_a[apart], low)
        numpy.minimum.at(parent, root_b[apart], low)
        while True:
            jumped = parent[parent]
            if numpy.array_equal(jumped, parent):
                break
            parent = jumped
    group[boundary] = boundary[parent]
    return group


def _summarise_chunk(block, names, start, full_shape, connectivity, order):
    """Step 1 without keeping the labels: (summary, shell) of one chunk."""
    return _label_chunk(block, names, start, full_shape, connectivity, order)[1:]


def _relabel(labels, table):
    """Step 4: one chunk's labels through its lookup table."""
    xp = _module(labels)
    return xp.asarray(table)[labels]


def _label_again_and_relabel(block, names, connectivity, order, table):
    """Step 4 when the provisional labels were not kept: the chunk is labelled again (the labelling is
    deterministic, so its provisional numbering is the one the summary described) and relabelled."""
    labels, _ = _label.label(block, connectivity=connectivity, order=_KEY_ORDER[order], axes=names)
    return _relabel(labels, table)


def _block_offsets(darr):
    neighbours = [o for o in itertools.product((-1, 0, 1), repeat=darr.ndim) if any(o)]
    return [o for o in neighbours if next(v for v in o if v) > 0]


def label(darr, connectivity=26, order="matlab", axes=None, keep_labels=True):
    """Labels a Dask array chunk by chunk, with the numbering voxlabel.label gives the whole array.

    darr: a 2D or 3D Dask array (NumPy or CuPy chunks); nonzero = foreground. Any chunking, including chunks
        one voxel thick.
    connectivity: 6, 18, 26, or 4 and 8 (per z-slice); order: "matlab", "matlab-xy", "size", "size-raster".
    axes: the array's axes, "zyx" (3D) or "yx" (2D) by default; any permutation as in voxlabel.label.

    keep_labels: True keeps every chunk's provisional labels in the cluster's memory (4 bytes per voxel) until
        the labels are computed; False keeps only the summaries and shells, and computing the labels computes
        darr's chunks and labels them again. False is for arrays whose labels exceed the cluster's memory:
        with the result streamed out chunk by chunk (da.store, to_zarr) a worker holds a few chunks at a time.

    The chunks are labelled and their summaries merged now (on the current scheduler: the local one, or a
    dask.distributed Client); with keep_labels the provisional labels are persisted where they were computed.
    Returns (labels, n): labels is a lazy uint32 Dask array with darr's chunks, n the component count.
    """
    if darr.ndim not in (2, 3):
        _lib.fail(_lib.VoxlabelArgumentError, "dask: a %dD array; voxlabel.dask takes 2D or 3D" % darr.ndim)
    names = _layout.resolve_axes(numpy.empty((1,) * darr.ndim), "zyx"[3 - darr.ndim:] if axes is None else axes)
    _layout.Layout(numpy.empty((1,) * darr.ndim), names).library_order(order)
    if connectivity not in (4, 6, 8, 18, 26):
        _lib.fail(_lib.VoxlabelArgumentError,
                  "--conn: %r is not one of 6, 18, 26 (3D) or 4, 8 (per slice)" % (connectivity,))
    blocks = darr.to_delayed()
    grid = blocks.shape
    starts = [numpy.concatenate(([0], numpy.cumsum(c)))[:-1] for c in darr.chunks]
    indices = list(numpy.ndindex(*grid))
    labelled = {}
    for index in indices:
        start = tuple(int(starts[a][i]) for a, i in enumerate(index))
        if keep_labels:
            labelled[index] = tuple(dask.delayed(_label_chunk, nout=3, pure=True)(
                blocks[index], names, start, darr.shape, connectivity, order))
        else:
            labelled[index] = (None,) + tuple(dask.delayed(_summarise_chunk, nout=2, pure=True)(
                blocks[index], names, start, darr.shape, connectivity, order))
    kept = 3 if keep_labels else 2
    persisted = dask.persist(*[part for index in indices for part in labelled[index][3 - kept:]])
    labelled = {index: (None,) * (3 - kept) + persisted[kept * k:kept * k + kept] for k, index in enumerate(indices)}
    position = {index: k for k, index in enumerate(indices)}
    pair_tasks, pair_chunks = [], []
    for index in indices:
        for offset in _block_offsets(darr):
            other = tuple(i + o for i, o in zip(index, offset))
            if all(0 <= i < n for i, n in zip(other, grid)):
                pair_tasks.append(dask.delayed(_touching_pairs, pure=True)(
                    labelled[index][2], labelled[other][2], offset, names, connectivity))
                pair_chunks.append((position[index], position[other]))
    # The merge result stays on the cluster; the client takes only the count, each relabel task its table.
    merged, = dask.persist(dask.delayed(_merge, pure=True)(
        [labelled[i][1] for i in indices], pair_tasks, pair_chunks, order))
    count = dask.compute(merged[0])[0]
    meta = darr._meta.astype(numpy.uint32)   # an empty NumPy or CuPy array: the chunks' kind
    relabelled = numpy.empty(grid, dtype=object)
    for index in indices:
        shape = tuple(int(darr.chunks[a][i]) for a, i in enumerate(index))
        table = merged[1][position[index]]
        if keep_labels:
            chunk = dask.delayed(_relabel, pure=True)(labelled[index][0], table)
        else:
            chunk = dask.delayed(_label_again_and_relabel, pure=True)(blocks[index], names, connectivity, order, table)
        relabelled[index] = da.from_delayed(chunk, shape=shape, dtype=numpy.uint32, meta=meta)
    return da.block(relabelled.tolist()), int(count)
