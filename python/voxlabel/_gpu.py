"""Labelling arrays that live on a CUDA device (CuPy, or any DLPack producer such as PyTorch) in place:
the library's device labeller (vl_label_device_array) reads the caller's buffer and writes a CuPy array on
the same device, on the caller's current CuPy stream. No byte crosses to the host but the count."""
import ctypes

import numpy

from . import _label, _layout, _lib

_DLPACK_CUDA, _DLPACK_CUDA_MANAGED = 2, 13


def is_device_array(array):
    """True for a CuPy array, a __cuda_array_interface__ object or a CUDA DLPack tensor."""
    try:
        if hasattr(array, "__cuda_array_interface__"):
            return True
    except Exception:   # a producer that cannot describe this dtype that way may still export DLPack
        pass
    dlpack_device = getattr(array, "__dlpack_device__", None)
    if dlpack_device is None:
        return False
    try:
        return dlpack_device()[0] in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED)
    except Exception:
        return False


def _cupy():
    try:
        import cupy
    except ImportError as error:
        raise _lib.VoxlabelArgumentError("label: a GPU array needs CuPy to hold the labels (%s)" % error,
                                         "invalid argument") from None
    return cupy


def as_cupy(array):
    """`array` as a CuPy array over the same device memory."""
    cupy = _cupy()
    if isinstance(array, cupy.ndarray):
        return array
    try:
        return cupy.asarray(array)          # __cuda_array_interface__: zero copy
    except Exception:
        return cupy.from_dlpack(array)


def label_device(mask, connectivity, order, out, return_sizes, min_size, largest, out_dtype, axes):
    """voxlabel.label for a device array (see its docstring); returns CuPy arrays."""
    cupy = _cupy()
    mask = as_cupy(mask)
    with mask.device:
        if mask.size == 0:
            labels = cupy.zeros(mask.shape, dtype=_label.output_dtype(out_dtype, 0))
            sizes = cupy.zeros(1, dtype=cupy.uint64)
            return (labels, 0, sizes) if return_sizes else (labels, 0)
        layout = _layout.Layout(mask, axes, xp=cupy)
        order = _label.order_code(layout.library_order(order))
        memory = layout.memory
        foreground = memory.view(cupy.uint8) if memory.dtype in (numpy.bool_, numpy.uint8, numpy.int8) \
            else (memory != 0).view(cupy.uint8)
        labels = cupy.empty(memory.shape, dtype=cupy.uint32)
        count = ctypes.c_uint32()
        stream = cupy.cuda.get_current_stream()
        _lib.check(_lib.lib.vl_label_device_array(foreground.data.ptr, labels.data.ptr, layout.nx, layout.ny,
                                                  layout.nz, int(connectivity), order, mask.device.id,
                                                  stream.ptr or None, ctypes.byref(count)))
        n = int(count.value)
        sizes = cupy.bincount(labels.ravel(), minlength=n + 1) if (return_sizes or min_size or largest) else None
        if min_size or largest:
            labels, n, sizes = _filter(cupy, labels, sizes, n, int(min_size), int(largest))
        labels = layout.restore(labels)
        dtype = _label.output_dtype(out_dtype, n)
        if out is not None:
            out = as_cupy(out)
            if out.shape != labels.shape:
                _lib.fail(_lib.VoxlabelArgumentError, "out: shape %s, the mask's is %s" % (out.shape, labels.shape))
            out[...] = labels
            labels = out
        elif labels.dtype != dtype:
            labels = labels.astype(dtype)
        if return_sizes:
            return labels, n, sizes.astype(cupy.uint64)
        return labels, n


def _filter(cupy, labels, sizes, count, min_size, largest):
    """min_size and largest on the device, with the rule of vl_label_filter: keep sizes >= min_size, then the
    `largest` biggest (ties to the lower label), renumbered 1..m in their existing order."""
    if min_size < 0 or largest < 0:
        _lib.fail(_lib.VoxlabelArgumentError, "min_size and largest must not be negative")
    keep = sizes >= max(min_size, 1)
    keep[0] = False
    if largest and int(keep.sum()) > largest:
        candidates = cupy.where(keep, sizes.astype(cupy.int64), -1)
        ranked = cupy.lexsort(cupy.stack([cupy.arange(count + 1), -candidates]))
        keep[:] = False
        keep[ranked[:largest]] = True
    renumber = cupy.where(keep, cupy.cumsum(keep), 0).astype(cupy.uint32)
    labels = renumber[labels]
    kept = int(keep.sum())
    new_sizes = cupy.zeros(kept + 1, dtype=sizes.dtype)
    new_sizes[1:] = sizes[keep]
    new_sizes[0] = labels.size - new_sizes[1:].sum()
    return labels, kept, new_sizes
