"""ctypes binding of libvoxlabel.so: the structs the package passes, the function prototypes, and errors.

The library is found, in this order, at $VOXLABEL_LIBRARY, next to this file (where `make python` and
`pip install ./python` put it), then through the dynamic linker (`libvoxlabel.so.0` on the library path).
Every struct mirrored here is checked against the library's own sizeof (vl_struct_size) when it loads, so a
library built from other headers is refused rather than trusted. ctypes releases the GIL during every call.
"""
import ctypes
import ctypes.util
import os

c_int, c_int64, c_uint32, c_uint64, c_double, c_char_p, c_void_p, c_size_t = (
    ctypes.c_int, ctypes.c_int64, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_double, ctypes.c_char_p,
    ctypes.c_void_p, ctypes.c_size_t)

# vl_status
OK, ERR_ARGUMENT, ERR_INPUT, ERR_OUTPUT, ERR_DEVICE, ERR_MEMORY, ERR_INTERNAL = range(7)
# vl_dtype
U8, I16, U16, U32, F32 = 1, 2, 3, 4, 5


class VoxlabelError(RuntimeError):
    """A failure reported by libvoxlabel. `status` is the C status name ("bad input", ...), the message
    is the library's own one-line detail (vl_last_error)."""

    def __init__(self, message, status="internal error"):
        super().__init__(message)
        self.status = status


class VoxlabelArgumentError(VoxlabelError, ValueError):
    """An invalid option or value (VL_ERR_ARGUMENT)."""


class VoxlabelInputError(VoxlabelError, OSError):
    """An input that is missing, unreadable, malformed or unsupported (VL_ERR_INPUT)."""


class VoxlabelOutputError(VoxlabelError, OSError):
    """An output that cannot be written, or exists and force was not given (VL_ERR_OUTPUT)."""


class VoxlabelDeviceError(VoxlabelError):
    """No usable GPU, or a GPU failure (VL_ERR_DEVICE)."""


class VoxlabelMemoryError(VoxlabelError, MemoryError):
    """A host or device allocation failed (VL_ERR_MEMORY)."""


_ERRORS = {ERR_ARGUMENT: VoxlabelArgumentError, ERR_INPUT: VoxlabelInputError, ERR_OUTPUT: VoxlabelOutputError,
           ERR_DEVICE: VoxlabelDeviceError, ERR_MEMORY: VoxlabelMemoryError}


class Geometry(ctypes.Structure):
    _fields_ = [("origin", c_double * 3), ("spacing", c_double * 3), ("direction", c_double * 9)]


class Volume(ctypes.Structure):
    _fields_ = [("nx", c_int64), ("ny", c_int64), ("nz", c_int64), ("dtype", c_int), ("data", c_void_p),
                ("geometry", Geometry)]


class Device(ctypes.Structure):
    _fields_ = [("kind", c_int), ("gpu_index", c_int), ("gpu_memory", c_uint64)]


class DeviceOutcome(ctypes.Structure):
    _fields_ = [("used", c_int), ("fallback_reason", ctypes.c_char * 256), ("gpu_failed", c_int)]


ProgressFn = ctypes.CFUNCTYPE(None, c_char_p, c_double, c_void_p)


class Progress(ctypes.Structure):
    _fields_ = [("callback", ProgressFn), ("user", c_void_p)]


class LabelOptions(ctypes.Structure):
    _fields_ = [("connectivity", c_int), ("order", c_int), ("threads", c_int), ("device", Device),
                ("progress", Progress)]


class LabelResult(ctypes.Structure):
    _fields_ = [("count", c_uint32), ("sizes", ctypes.POINTER(c_uint64)), ("outcome", DeviceOutcome),
                ("device_name", ctypes.c_char * 128), ("slabs", c_int64),
                ("classes", ctypes.POINTER(c_uint32))]


class StatsOptions(ctypes.Structure):
    _fields_ = [("level", c_int), ("device", Device), ("outcome", ctypes.POINTER(DeviceOutcome)),
                ("threads", c_int), ("extras", ctypes.c_uint), ("connectivity", c_int), ("hulls", c_void_p),
                ("progress", Progress)]


class CsvOptions(ctypes.Structure):
    _fields_ = [("level", c_int), ("matlab_columns", c_int), ("intensity", c_int), ("force", c_int),
                ("columns", c_char_p), ("class_column", c_int), ("class_names", c_void_p),
                ("class_name_count", c_uint32)]


class ReadOptions(ctypes.Structure):
    _fields_ = [("format", c_int), ("raw_nx", c_int64), ("raw_ny", c_int64), ("raw_nz", c_int64),
                ("raw_dtype", c_int), ("mat_variable", c_char_p), ("mat_xy", c_int), ("progress", Progress)]


class WriteOptions(ctypes.Structure):
    _fields_ = [("format", c_int), ("force", c_int), ("is_label_map", c_int), ("mat_class", c_int),
                ("mat_xy", c_int), ("compression_level", c_int), ("threads", c_int), ("progress", Progress)]


class DicomReadOptions(ctypes.Structure):
    _fields_ = [("series", c_char_p), ("on_irregular", c_int), ("keep_padding", c_int),
                ("padding_fill_hu", c_double), ("threads", c_int), ("progress", Progress),
                ("reuse", c_void_p), ("reuse_bytes", c_size_t)]


class DicomReport(ctypes.Structure):
    _fields_ = [("series_uid", ctypes.c_char * 80), ("series_description", ctypes.c_char * 80),
                ("modality", ctypes.c_char * 24), ("series_number", ctypes.c_long), ("slice_count", c_int64),
                ("transfer_syntax", ctypes.c_char * 160), ("tilt_degrees", c_double),
                ("gantry_tilt_tag", c_double), ("window_center", c_double), ("window_width", c_double),
                ("step_min_mm", c_double), ("step_median_mm", c_double), ("step_max_mm", c_double),
                ("gap_count", c_int64), ("duplicate_count", c_int64), ("resampled", c_int),
                ("padded_voxels", c_int64), ("slice_positions", ctypes.POINTER(c_double)),
                ("slice_position_count", c_int64), ("warnings", ctypes.POINTER(c_char_p)),
                ("warning_count", c_size_t), ("notes", ctypes.POINTER(c_char_p)), ("note_count", c_size_t)]


class CompareDifference(ctypes.Structure):
    _fields_ = [("x", c_int64), ("y", c_int64), ("z", c_int64), ("ours", c_uint32), ("reference", c_uint32)]


class CompareResult(ctypes.Structure):
    _fields_ = [("verdict", c_int), ("voxels", c_int64), ("ours_components", c_uint32),
                ("reference_components", c_uint32), ("differing_voxels", c_int64), ("unmatched_voxels", c_int64),
                ("foreground_mismatch", c_int64), ("reference_split", c_uint32), ("ours_merged", c_uint32),
                ("ours_unmatched", c_uint32), ("reference_unmatched", c_uint32),
                ("ours_rule", ctypes.c_char * 96), ("reference_rule", ctypes.c_char * 96),
                ("mapping_rule", ctypes.c_char * 256), ("shown", c_int), ("first", CompareDifference * 10)]


_MIRRORED = {"vl_geometry": Geometry, "vl_volume": Volume, "vl_device": Device,
             "vl_device_outcome": DeviceOutcome, "vl_progress": Progress, "vl_label_options": LabelOptions,
             "vl_label_result": LabelResult, "vl_stats_options": StatsOptions, "vl_csv_options": CsvOptions,
             "vl_read_options": ReadOptions, "vl_write_options": WriteOptions,
             "vl_dicom_read_options": DicomReadOptions, "vl_dicom_report": DicomReport,
             "vl_compare_result": CompareResult, "vl_compare_difference": CompareDifference}

P = ctypes.POINTER
_PROTOTYPES = {
    "vl_last_error": (c_char_p, []),
    "vl_status_name": (c_char_p, [c_int]),
    "vl_version": (c_char_p, []),
    "vl_struct_size": (c_size_t, [c_char_p]),
    "vl_device_parse": (c_int, [c_char_p, P(Device)]),
    "vl_device_gpu_usable": (c_int, [c_int, c_char_p, c_size_t]),
    "vl_label_options_default": (None, [P(LabelOptions)]),
    "vl_label_order_parse": (c_int, [c_char_p, P(c_int)]),
    "vl_label_volume": (c_int, [P(Volume), P(Volume), P(LabelOptions), P(LabelResult)]),
    "vl_label_filter": (c_int, [P(Volume), P(LabelResult), c_uint64, c_uint32]),
    "vl_label_multilabel": (c_int, [P(Volume), P(Volume), P(LabelOptions), P(LabelResult)]),
    "vl_label_filter_per_class": (c_int, [P(Volume), P(LabelResult), c_uint64, c_uint32]),
    "vl_label_result_free": (None, [P(LabelResult)]),
    "vl_label_device_array": (c_int, [c_void_p, c_void_p, c_int64, c_int64, c_int64, c_int, c_int, c_int,
                                      c_void_p, P(c_uint32)]),
    "vl_volume_free": (None, [P(Volume)]),
    "vl_geometry_identity": (None, [P(Geometry)]),
    "vl_stats_options_default": (None, [P(StatsOptions)]),
    "vl_component_stats_compute": (c_int, [P(Volume), P(Volume), c_uint32, P(StatsOptions), P(c_void_p)]),
    "vl_component_stats_free": (None, [c_void_p]),
    "vl_csv_options_default": (None, [P(CsvOptions)]),
    "vl_stats_table_column_count": (c_size_t, [P(CsvOptions)]),
    "vl_stats_table_column": (c_char_p, [P(CsvOptions), c_size_t, P(c_int)]),
    "vl_stats_table_fill": (c_int, [c_void_p, c_uint32, P(CsvOptions), c_size_t, c_void_p]),
    "vl_write_options_default": (None, [P(WriteOptions)]),
    "vl_file_format_parse": (c_int, [c_char_p, P(c_int)]),
    "vl_write_volume": (c_int, [c_char_p, P(Volume), P(WriteOptions)]),
    "vl_read_options_default": (None, [P(ReadOptions)]),
    "vl_read_volume": (c_int, [c_char_p, P(ReadOptions), P(Volume)]),
    "vl_dicom_read_options_default": (None, [P(DicomReadOptions)]),
    "vl_dicom_read_series": (c_int, [c_char_p, P(DicomReadOptions), P(Volume), P(DicomReport)]),
    "vl_dicom_report_free": (None, [P(DicomReport)]),
    "vl_compare_labels": (c_int, [P(Volume), P(Volume), P(CompareResult)]),
    "vl_compare_verdict_name": (c_char_p, [c_int]),
}


def _candidates():
    explicit = os.environ.get("VOXLABEL_LIBRARY")
    if explicit:
        return [explicit]
    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, name) for name in ("libvoxlabel.so", "libvoxlabel.so.0")]
    found = [path for path in found if os.path.exists(path)]
    system = ctypes.util.find_library("voxlabel")
    return found + ([system] if system else []) + ["libvoxlabel.so.0"]


def _load():
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as error:
            tried.append("%s (%s)" % (path, error))
    else:
        raise ImportError("voxlabel: libvoxlabel.so not found; build it (make python) or set VOXLABEL_LIBRARY. "
                          "Tried: " + "; ".join(tried))
    for name, (restype, argtypes) in _PROTOTYPES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    for name, mirror in _MIRRORED.items():
        size = lib.vl_struct_size(name.encode())
        if size != ctypes.sizeof(mirror):
            raise ImportError("voxlabel: %s is %d bytes in %s but %d in this package: the library and the "
                              "package come from different versions" % (name, size, lib._name, ctypes.sizeof(mirror)))
    return lib


lib = _load()
library_path = lib._name


def check(status):
    """Raises the exception for a failed vl_status, with the library's detail text."""
    if status != OK:
        detail = lib.vl_last_error().decode(errors="replace")
        name = lib.vl_status_name(status).decode()
        raise _ERRORS.get(status, VoxlabelError)(detail or name, name)


def fail(kind, message):
    """Raises a package-side refusal worded like the library's."""
    raise kind(message, {VoxlabelArgumentError: "invalid argument"}.get(kind, "internal error"))


def parse_device(text):
    device = Device()
    check(lib.vl_device_parse(str(text).encode(), ctypes.byref(device)))
    return device
