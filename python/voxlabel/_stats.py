"""voxlabel.statistics: per-component measurements as columns, named as in docs/csv.md."""
import ctypes

import numpy

from . import _geometry, _label, _layout, _lib

_LABEL_TYPES = {numpy.dtype(numpy.uint8): _lib.U8, numpy.dtype(numpy.uint16): _lib.U16,
                numpy.dtype(numpy.uint32): _lib.U32}
_INTENSITY_TYPES = {numpy.dtype(numpy.uint8): _lib.U8, numpy.dtype(numpy.int16): _lib.I16,
                    numpy.dtype(numpy.uint16): _lib.U16, numpy.dtype(numpy.uint32): _lib.U32,
                    numpy.dtype(numpy.float32): _lib.F32}


def _label_memory(labels, axes):
    layout = _layout.Layout(labels, axes, allow_swap=False)
    memory = layout.memory
    if memory.dtype not in _LABEL_TYPES:
        if memory.dtype.kind not in "biu" or (memory.size and memory.min() < 0):
            _lib.fail(_lib.VoxlabelArgumentError, "statistics: labels must be non-negative integers, not %s"
                      % memory.dtype)
        if memory.size and int(memory.max()) > numpy.iinfo(numpy.uint32).max:
            _lib.fail(_lib.VoxlabelArgumentError, "statistics: a label above 2^32 - 1")
        memory = memory.astype(numpy.uint32)
    return layout, memory


def _intensity_memory(intensity, shape, axes):
    intensity = numpy.asarray(intensity)
    if intensity.shape != shape:
        _lib.fail(_lib.VoxlabelArgumentError, "statistics: intensity has shape %s, the labels %s"
                  % (intensity.shape, shape))
    memory = _layout.Layout(intensity, axes, allow_swap=False).memory
    if memory.dtype == numpy.bool_:
        memory = memory.view(numpy.uint8)
    if memory.dtype not in _INTENSITY_TYPES or not memory.dtype.isnative:
        memory = memory.astype(numpy.float32)
    return memory


def statistics(labels, intensity=None, spacing=(1.0, 1.0, 1.0), geometry=None, full=False, matlab=False,
               device="auto", threads=None, axes="auto", frame=None):
    """Measures the components 1..labels.max() of an integer label array.

    labels: NumPy labels (any non-negative integer dtype), with the same axis rules as label() (axes=).
    intensity: an array of the same shape (HU); adds the hu_* and weighted_* columns. uint8, int16,
        uint16, uint32 and float32 are read as they are; other dtypes are converted to float32.
    spacing: voxel size in mm as (x, y, z): x the column, y the row, z the slice, whatever the array's
        memory order. geometry: a voxlabel.Geometry (from read_dicom) instead, for LPS positions.
    full: the full column set (shape, surface, principal axes, median); matlab: add the regionprops3 columns.
    device: "auto", "cpu", "gpu" or "gpu:N"; threads: CPU threads (None: all cores).
    frame: True for a pandas DataFrame, False for a dict of NumPy columns, None: a DataFrame when pandas is
        installed.

    Returns the columns of docs/csv.md: row k-1 is label k (a label with no voxel has voxels 0 and NaN
    averages); integer columns are int64 (-1 for a box index of an absent label), the others float64.
    Voxel indices and centroids are 0-based (x, y, z); *_mm positions are LPS millimetres.
    """
    labels = numpy.asarray(labels)
    layout, memory = _label_memory(labels, axes)
    count = int(memory.max()) if memory.size else 0
    volume = _label.volume_over(memory, _LABEL_TYPES[memory.dtype], _geometry.library_geometry(spacing, geometry))
    intensity_volume = None
    if intensity is not None:
        intensity_memory = _intensity_memory(intensity, labels.shape, layout.names)
        intensity_volume = _label.volume_over(intensity_memory, _INTENSITY_TYPES[intensity_memory.dtype],
                                              volume.geometry)
    options = _lib.StatsOptions()
    _lib.lib.vl_stats_options_default(ctypes.byref(options))
    options.level = 1 if full else 0
    options.device = _lib.parse_device(device)
    options.threads = 0 if threads is None else int(threads)
    table = _lib.CsvOptions()
    _lib.lib.vl_csv_options_default(ctypes.byref(table))
    table.level, table.matlab_columns, table.intensity = options.level, int(bool(matlab)), int(intensity is not None)
    stats = ctypes.c_void_p()
    _lib.check(_lib.lib.vl_component_stats_compute(
        ctypes.byref(volume), ctypes.byref(intensity_volume) if intensity_volume is not None else None, count,
        ctypes.byref(options), ctypes.byref(stats)))
    columns = {}
    try:
        for index in range(_lib.lib.vl_stats_table_column_count(ctypes.byref(table))):
            kind = ctypes.c_int()
            name = _lib.lib.vl_stats_table_column(ctypes.byref(table), index, ctypes.byref(kind)).decode()
            values = numpy.empty(count, dtype=numpy.int64 if kind.value == 0 else numpy.float64)
            if count:
                _lib.check(_lib.lib.vl_stats_table_fill(stats, count, ctypes.byref(table), index,
                                                        values.ctypes.data))
            columns[name] = values
    finally:
        _lib.lib.vl_component_stats_free(stats)
    return _as_frame(columns, frame)


def _as_frame(columns, frame):
    if frame is False:
        return columns
    try:
        import pandas
    except ImportError:
        if frame:
            raise
        return columns
    return pandas.DataFrame(columns)
