"""voxlabel.label: connected components of a NumPy mask (CPU or GPU through the library's device policy),
or of a CuPy / CUDA DLPack mask on its own device (_gpu.py)."""
import ctypes
import weakref

import numpy

from . import _gpu, _layout, _lib

_UNSIGNED = (numpy.uint8, numpy.uint16, numpy.uint32)
# Below this many voxels one CPU thread labels faster than several: starting threads costs more than the work.
_ONE_THREAD_VOXELS = 1 << 15


def output_dtype(out_dtype, count):
    """The labels' dtype: uint32 by default, the smallest unsigned type that holds `count` for "auto", or
    the caller's integer dtype when `count` fits in it."""
    if out_dtype is None:
        return numpy.dtype(numpy.uint32)
    if isinstance(out_dtype, str) and out_dtype == "auto":
        return next(numpy.dtype(t) for t in _UNSIGNED if count <= numpy.iinfo(t).max)
    dtype = numpy.dtype(out_dtype)
    if dtype.kind not in "iu":
        _lib.fail(_lib.VoxlabelArgumentError, "out_dtype: %s is not an integer type" % dtype)
    if count > numpy.iinfo(dtype).max:
        _lib.fail(_lib.VoxlabelArgumentError, "out_dtype: %d labels do not fit in %s" % (count, dtype))
    return dtype


def host_array(volume, shape, dtype):
    """The library-allocated buffer of `volume` as a NumPy array of `shape` without a copy; the buffer is
    released with vl_volume_free when the last array over it goes."""
    count = shape[0] * shape[1] * shape[2]
    buffer = (ctypes.c_ubyte * (count * numpy.dtype(dtype).itemsize)).from_address(volume.data)
    owned = _lib.Volume()
    ctypes.pointer(owned)[0] = volume
    weakref.finalize(buffer, _lib.lib.vl_volume_free, ctypes.byref(owned))
    return numpy.frombuffer(buffer, dtype=dtype).reshape(shape)


def volume_over(memory, dtype_code, geometry=None):
    """A vl_volume describing the C-contiguous 3D array `memory` (z, y, x) without copying it."""
    volume = _lib.Volume()
    volume.nz, volume.ny, volume.nx = (int(n) for n in memory.shape)
    volume.dtype = dtype_code
    volume.data = memory.ctypes.data
    if geometry is None:
        _lib.lib.vl_geometry_identity(ctypes.byref(volume.geometry))
    else:
        volume.geometry = geometry
    return volume


def order_code(order):
    """The library's vl_label_order for an order name."""
    code = ctypes.c_int()
    _lib.check(_lib.lib.vl_label_order_parse(order.encode(), ctypes.byref(code)))
    return code.value


def _label_options(connectivity, order, device, threads, voxels):
    options = _lib.LabelOptions()
    _lib.lib.vl_label_options_default(ctypes.byref(options))
    options.connectivity = int(connectivity)
    options.order = order_code(order)
    if threads is None:
        threads = 1 if voxels < _ONE_THREAD_VOXELS else 0
    options.threads = int(threads)
    if options.threads < 0:
        _lib.fail(_lib.VoxlabelArgumentError, "threads: %d is negative" % options.threads)
    options.device = _lib.parse_device(device)
    return options


_CLASS_CODES = {numpy.dtype(numpy.uint8): _lib.U8, numpy.dtype(numpy.uint16): _lib.U16,
                numpy.dtype(numpy.uint32): _lib.U32, numpy.dtype(numpy.int16): _lib.I16}


def class_map_memory(memory):
    """`memory` (C-contiguous, the library's axes) as a class map the library takes, with its dtype code:
    u8, u16, u32 and i16 (the library refuses a negative i16 voxel) without a copy, bool as u8, any other
    integer dtype checked (no negative class, none above 2**32 - 1) and copied to uint32."""
    dtype = memory.dtype
    if dtype == numpy.bool_:
        return memory.view(numpy.uint8), _lib.U8
    if dtype in _CLASS_CODES:
        return memory, _CLASS_CODES[dtype]
    if dtype.kind not in "iu":
        _lib.fail(_lib.VoxlabelArgumentError,
                  "label: multilabel needs an integer class map (0 = background), not %s" % dtype)
    if memory.size and (int(memory.min()) < 0 or int(memory.max()) > 0xFFFFFFFF):
        _lib.fail(_lib.VoxlabelArgumentError,
                  "label: multilabel classes must lie in 0..4294967295; this %s map holds %d..%d"
                  % (dtype, int(memory.min()), int(memory.max())))
    return memory.astype(numpy.uint32), _lib.U32


def _finish(labels, count, sizes, out, out_dtype, return_sizes, classes=None):
    """Applies out_dtype and out to the labels, and builds the return value (classes last, when given)."""
    dtype = output_dtype(out_dtype, count)
    if out is not None:
        if out.shape != labels.shape:
            _lib.fail(_lib.VoxlabelArgumentError, "out: shape %s, the mask's is %s" % (out.shape, labels.shape))
        if out.dtype.kind not in "iu" or count > numpy.iinfo(out.dtype).max:
            _lib.fail(_lib.VoxlabelArgumentError, "out: %s cannot hold %d labels" % (out.dtype, count))
        out[...] = labels
        labels = out
    elif labels.dtype != dtype:
        labels = labels.astype(dtype, order="K")
    extra = ((sizes,) if return_sizes else ()) + ((classes,) if classes is not None else ())
    return (labels, count) + extra


def label(mask, connectivity=26, order="matlab", device="auto", out=None, return_sizes=False, min_size=0,
          largest=0, threads=None, out_dtype=None, axes="auto", multilabel=False, return_classes=False):
    """Labels the connected components of the nonzero voxels of `mask`, or with multilabel=True those of
    every class of a class map.

    mask: a 1D, 2D or 3D NumPy array of bool, any integer or any float (nonzero, NaN included, is
        foreground), or a CuPy array / CUDA DLPack tensor (PyTorch), labelled on its own GPU on the current
        stream and returned as a CuPy array.
    connectivity: 6, 18 or 26 (3D); 4 or 8 label every z-slice on its own (numbering stays global). On a 2D
        array 4 and 6 are the same, and 8, 18, 26.
    order: numbering of the labels 1..n, by the minimum over each component of a key:
        "matlab"      z, then x (column), then y (row): MATLAB bwlabeln on V(row, col, slice);
        "matlab-xy"   z, then y, then x: raster order, as scipy.ndimage.label, cc3d and ITK;
        "size"        descending size, ties by the matlab key; "size-raster" ties by the raster key.
    axes: what the array's axes are, "auto" (C order a[z, y, x] or a[y, x]; F order a[x, y, z] or a[x, y]),
        or a permutation such as "zyx", "xyz", "yxz" (MATLAB's V(row, col, slice)). See docs/python.md.
    device: "auto" (a GPU when usable, else the CPU), "cpu", "gpu" or "gpu:N". Ignored for device arrays.
    out: an integer array of the mask's shape to write the labels into (returned).
    return_sizes: also return sizes, a uint64 array with sizes[k] = voxels of label k and sizes[0] the
        background, equal to numpy.bincount(labels.ravel()).
    min_size: drop components smaller than this; largest: then keep only the `largest` biggest (0 = all).
        Survivors are renumbered 1..n keeping their relative order.
    threads: CPU threads (0: all online cores; None: all, or one for arrays under 32768 voxels).
    out_dtype: None (uint32), "auto" (the smallest unsigned type that holds n) or an integer dtype.
    multilabel: `mask` is a class map (bool or any integer dtype, 0 = background, classes 0..2**32-1; u8,
        u16, u32 and non-negative i16 are read without a copy): two voxels join only when they are neighbours
        and hold the same class. The components of all classes are numbered 1..n together by `order`
        ("matlab-xy" is cc3d.connected_components' multilabel numbering of a C-order array). min_size applies
        to every component; largest keeps the `largest` biggest components of each class
        (vl_label_filter_per_class). Host arrays only: a CuPy or DLPack class map raises
        VoxlabelDeviceError.
    return_classes: (multilabel only) also return classes, with classes[k] = class of label k and
        classes[0] = 0, in the class map's dtype (uint8 for bool).

    Returns (labels, n), (labels, n, sizes) with return_sizes, and classes appended with return_classes. labels has the mask's shape and, where
    no copy was needed, its memory layout. The GIL is released while the library works.
    """
    if return_classes and not multilabel:
        _lib.fail(_lib.VoxlabelArgumentError, "return_classes: only with multilabel=True")
    if multilabel:
        return _label_multilabel(mask, connectivity, order, device, out, return_sizes, min_size, largest, threads,
                                 out_dtype, axes, return_classes)
    if _gpu.is_device_array(mask):
        return _gpu.label_device(mask, connectivity, order, out, return_sizes, min_size, largest, out_dtype, axes)
    mask = numpy.asarray(mask)
    if mask.size == 0:
        labels = numpy.zeros(mask.shape, dtype=output_dtype(out_dtype, 0))
        return _finish(labels, 0, numpy.zeros(1, numpy.uint64), out, out_dtype, return_sizes)
    layout = _layout.Layout(mask, axes)
    options = _label_options(connectivity, layout.library_order(order), device, threads, mask.size)
    foreground = _layout.foreground_bytes(layout.memory)
    volume = volume_over(foreground, _lib.U8)
    labelled = _lib.Volume()
    result = _lib.LabelResult()
    _lib.check(_lib.lib.vl_label_volume(ctypes.byref(volume), ctypes.byref(labelled), ctypes.byref(options),
                                        ctypes.byref(result)))
    try:
        memory_labels = host_array(labelled, layout.memory.shape, numpy.uint32)
        if min_size or largest:
            if min_size < 0 or largest < 0:
                _lib.fail(_lib.VoxlabelArgumentError, "min_size and largest must not be negative")
            _lib.check(_lib.lib.vl_label_filter(ctypes.byref(labelled), ctypes.byref(result), int(min_size),
                                                int(largest)))
        count = int(result.count)
        sizes = _sizes_with_background(result, mask.size) if return_sizes else None
    finally:
        _lib.lib.vl_label_result_free(ctypes.byref(result))
    return _finish(layout.restore(memory_labels), count, sizes, out, out_dtype, return_sizes)


def _sizes_with_background(result, voxels):
    """sizes[k] = voxels of component k from a vl_label_result; sizes[0] = the background's voxels."""
    count = int(result.count)
    sizes = numpy.empty(count + 1, dtype=numpy.uint64)
    if count:
        sizes[1:] = numpy.ctypeslib.as_array(result.sizes, shape=(count,))
    sizes[0] = voxels - int(sizes[1:].sum())
    return sizes


def _label_multilabel(classes, connectivity, order, device, out, return_sizes, min_size, largest, threads,
                      out_dtype, axes, return_classes):
    """label(..., multilabel=True): vl_label_multilabel, then vl_label_filter_per_class."""
    if _gpu.is_device_array(classes):
        raise _lib.VoxlabelDeviceError("label: multilabel=True takes a host (NumPy) class map; the library has no "
                                       "device-array multilabel entry, so copy it first (cupy.asnumpy) or "
                                       "label per class on the device",
                                       _lib.lib.vl_status_name(_lib.ERR_DEVICE).decode())
    classes = numpy.asarray(classes)
    if min_size < 0 or largest < 0:
        _lib.fail(_lib.VoxlabelArgumentError, "min_size and largest must not be negative")
    class_dtype = numpy.dtype(numpy.uint8) if classes.dtype == numpy.bool_ else classes.dtype
    if classes.size == 0:
        class_map_memory(classes)
        labels = numpy.zeros(classes.shape, dtype=output_dtype(out_dtype, 0))
        return _finish(labels, 0, numpy.zeros(1, numpy.uint64), out, out_dtype, return_sizes,
                       numpy.zeros(1, class_dtype) if return_classes else None)
    layout = _layout.Layout(classes, axes)
    options = _label_options(connectivity, layout.library_order(order), device, threads, classes.size)
    memory, code = class_map_memory(layout.memory)
    volume = volume_over(memory, code)
    labelled = _lib.Volume()
    result = _lib.LabelResult()
    _lib.check(_lib.lib.vl_label_multilabel(ctypes.byref(volume), ctypes.byref(labelled), ctypes.byref(options),
                                            ctypes.byref(result)))
    try:
        memory_labels = host_array(labelled, layout.memory.shape, numpy.uint32)
        if min_size or largest:
            _lib.check(_lib.lib.vl_label_filter_per_class(ctypes.byref(labelled), ctypes.byref(result),
                                                          int(min_size), int(largest)))
        count = int(result.count)
        sizes = _sizes_with_background(result, classes.size) if return_sizes else None
        component_classes = None
        if return_classes:
            component_classes = numpy.zeros(count + 1, dtype=class_dtype)
            if count:
                component_classes[1:] = numpy.ctypeslib.as_array(result.classes, shape=(count,))
    finally:
        _lib.lib.vl_label_result_free(ctypes.byref(result))
    return _finish(layout.restore(memory_labels), count, sizes, out, out_dtype, return_sizes, component_classes)
