"""How an array's axes map onto the library's volume (x fastest, then y, then z) without copying.

The axes of an array are named by a string: "zyx" (C order a[z, y, x], as pydicom stacks slices), "xyz"
(F order a[x, y, z], as nibabel's dataobj), "yxz" (MATLAB's V(row, col, slice)), any permutation; "yx"
or "xy" for 2D (one slice), "x" for 1D. x is the DICOM column, y the row, z the slice. With axes="auto"
a C-contiguous (or non-contiguous) array is "zyx"/"yx" and an F-contiguous one "xyz"/"xy".

The library needs z slowest in memory. When y, not x, is the fastest axis the buffer is handed over as it
is with x and y trading places: connectivity 4/8/6/18/26 is symmetric in x and y, so only the numbering
changes, and it is restored by asking for the other order of the pair (matlab <-> matlab-xy,
size <-> size-raster). Any other layout is copied once into C order.
"""
import numpy

from . import _lib

_SWAPPED_ORDER = {"matlab": "matlab-xy", "matlab-xy": "matlab", "size": "size-raster", "size-raster": "size"}
ORDERS = tuple(_SWAPPED_ORDER)


def resolve_axes(array, axes):
    """The axis names of `array` (see the module text), checked."""
    ndim = array.ndim
    if ndim not in (1, 2, 3):
        _lib.fail(_lib.VoxlabelArgumentError, "label: a %d-dimensional array; voxlabel takes 1D, 2D or 3D arrays"
                  % ndim)
    if axes is None or axes == "auto":
        names = "zyx"[3 - ndim:]
        if ndim > 1 and array.flags.f_contiguous and not array.flags.c_contiguous:
            names = names[::-1]
        return names
    names = str(axes).lower()
    if len(names) != ndim or set(names) - set("xyz") or len(set(names)) != ndim or (ndim < 3 and "z" in names):
        _lib.fail(_lib.VoxlabelArgumentError,
                  "axes: %r does not name the %d axes of a %dD array (e.g. %r)" % (axes, ndim, ndim, "zyx"[3 - ndim:]))
    return names


class Layout:
    """The buffer handed to the library for `array` and the way back to the caller's axes.

    memory: a C-contiguous 3D view (or one copy) whose axes are (z, y, x), or (z, x, y) when `swapped`.
    nx, ny, nz: the library's dimensions of `memory` (x fastest). copied: whether `memory` is a copy."""

    def __init__(self, array, axes, xp=numpy, allow_swap=True):
        self.shape = array.shape
        self.names = resolve_axes(array, axes)
        view, names = array, self.names
        for missing in "zyx":
            if missing not in names:
                view, names = view[..., None], names + missing
        self.added = 3 - array.ndim
        self.perm = tuple(names.index(axis) for axis in "zyx")
        zyx = view.transpose(self.perm)
        self.swapped, self.copied = False, False
        if zyx.flags.c_contiguous:
            self.memory = zyx
        elif allow_swap and zyx.transpose(0, 2, 1).flags.c_contiguous:
            self.memory, self.swapped = zyx.transpose(0, 2, 1), True
        else:
            self.memory, self.copied = xp.ascontiguousarray(zyx), True
        self.nz, self.ny, self.nx = (int(n) for n in self.memory.shape)

    def library_order(self, order):
        """The library's order name that gives `order` on the caller's axes."""
        if order not in _SWAPPED_ORDER:
            _lib.fail(_lib.VoxlabelArgumentError,
                      "order: %r is not one of %s" % (order, ", ".join(repr(o) for o in ORDERS)))
        return _SWAPPED_ORDER[order] if self.swapped else order

    def restore(self, memory_shaped):
        """An array laid out like `memory` (C order, memory.shape) seen with the caller's axes and shape."""
        zyx = memory_shaped.transpose(0, 2, 1) if self.swapped else memory_shaped
        inverse = tuple(self.perm.index(k) for k in range(3))
        view = zyx.transpose(inverse)
        return view[(slice(None),) * (3 - self.added) + (0,) * self.added]


def foreground_bytes(memory, xp=numpy):
    """`memory` as one byte per voxel, nonzero = foreground, without a copy for bool, uint8 and int8."""
    if memory.dtype in (numpy.bool_, numpy.uint8, numpy.int8):
        return memory.view(numpy.uint8)
    if memory.dtype.kind not in "biuf":
        _lib.fail(_lib.VoxlabelArgumentError,
                  "label: a mask of dtype %s; give bool, an integer or a float array (nonzero = foreground)"
                  % memory.dtype)
    return (memory != 0).view(numpy.uint8)
