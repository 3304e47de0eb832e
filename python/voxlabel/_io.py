"""voxlabel.read_dicom, voxlabel.write_labels and voxlabel.compare: the library's readers, writers and label
comparison on NumPy arrays."""
import ctypes
import os

import numpy

from . import _geometry, _label, _layout, _lib

_HOST_DTYPES = {_lib.U8: numpy.uint8, _lib.I16: numpy.int16, _lib.U16: numpy.uint16, _lib.U32: numpy.uint32,
                _lib.F32: numpy.float32}
_IRREGULAR = {"default": 0, "error": 1, "warn": 2, "resample": 3}
_MAT_CLASSES = {"double": 0, "uint32": 1, "native": 2}
_VERDICTS = {0: "identical", 1: "same partition", 2: "different"}


class DicomSeries:
    """What read_dicom read besides the voxels: series_uid, series_description, modality, series_number,
    slice_count, transfer_syntax, tilt_degrees, window_center, window_width, resampled, warnings, notes."""

    def __init__(self, report):
        text = lambda field: getattr(report, field).decode(errors="replace")
        self.series_uid = text("series_uid")
        self.series_description = text("series_description")
        self.modality = text("modality")
        self.series_number = int(report.series_number)
        self.slice_count = int(report.slice_count)
        self.transfer_syntax = text("transfer_syntax")
        self.tilt_degrees = float(report.tilt_degrees)
        self.window_center = float(report.window_center)
        self.window_width = float(report.window_width)
        self.resampled = bool(report.resampled)
        self.warnings = [report.warnings[i].decode(errors="replace") for i in range(report.warning_count)]
        self.notes = [report.notes[i].decode(errors="replace") for i in range(report.note_count)]

    def __repr__(self):
        return "DicomSeries(%r, %r, %d slices)" % (self.series_uid, self.series_description, self.slice_count)


def _format_code(format):
    """The library's vl_file_format for a format name: nii.gz, nii, nrrd, mha, mat or raw."""
    code = ctypes.c_int()
    _lib.check(_lib.lib.vl_file_format_parse(str(format).encode(), ctypes.byref(code)))
    return code.value


def read_dicom(path, series=None, on_irregular="default", keep_padding=False, threads=None, return_series=False):
    """Reads one CT series (a folder, scanned recursively, or one file) into Hounsfield units.

    series: SeriesInstanceUID or SeriesNumber (None: the largest CT-like series).
    on_irregular: "default", "error", "warn" or "resample" (docs/dicom.md).
    keep_padding: keep PixelPaddingValue voxels as stored; by default they become -1024 HU (air).
    Returns (volume, geometry): volume is a C-ordered a[z, y, x] (slice, row, column) int16 array, float32 when
    the rescale is fractional; geometry a voxlabel.Geometry with origin, spacing, direction, affine_lps and
    affine_ras (for nibabel: nibabel.Nifti1Image(volume.T, geometry.affine_ras)). With return_series, a third
    item describes the series (voxlabel.DicomSeries).
    """
    options = _lib.DicomReadOptions()
    _lib.lib.vl_dicom_read_options_default(ctypes.byref(options))
    series_text = None if series is None else str(series).encode()
    options.series = series_text
    if on_irregular not in _IRREGULAR:
        _lib.fail(_lib.VoxlabelArgumentError, "on_irregular: %r is not one of %s" % (on_irregular, list(_IRREGULAR)))
    options.on_irregular = _IRREGULAR[on_irregular]
    options.keep_padding = int(bool(keep_padding))
    options.threads = 0 if threads is None else int(threads)
    volume = _lib.Volume()
    report = _lib.DicomReport()
    try:
        _lib.check(_lib.lib.vl_dicom_read_series(os.fsencode(path), ctypes.byref(options), ctypes.byref(volume),
                                                 ctypes.byref(report)))
        described = DicomSeries(report)
    finally:
        _lib.lib.vl_dicom_report_free(ctypes.byref(report))
    voxels = _label.host_array(volume, (volume.nz, volume.ny, volume.nx), _HOST_DTYPES[volume.dtype])
    geometry = _geometry.Geometry.from_library(volume.geometry)
    return (voxels, geometry, described) if return_series else (voxels, geometry)


def read_volume(path, format=None, mat_variable=None, mat_order="matlab", raw_shape=None, raw_dtype=numpy.uint8):
    """Reads a volume file (NIfTI .nii/.nii.gz, NRRD, MHA, MAT, raw) as (a[z, y, x] array, voxlabel.Geometry).

    Raw files have no header: raw_shape is (z, y, x) and raw_dtype one of uint8, int16, uint16, uint32, float32.
    MAT files: mat_variable names the array (None: the first numeric one); mat_order "matlab" reads it as
    V(row, col, slice) (bwlabeln output), "matlab-xy" as V(x, y, z).
    """
    options = _lib.ReadOptions()
    _lib.lib.vl_read_options_default(ctypes.byref(options))
    if format is not None:
        options.format = _format_code(format)
    if mat_order not in ("matlab", "matlab-xy"):
        _lib.fail(_lib.VoxlabelArgumentError, "mat_order: %r is not matlab or matlab-xy" % (mat_order,))
    if raw_shape is not None:
        codes = {numpy.dtype(t): code for code, t in _HOST_DTYPES.items()}
        if numpy.dtype(raw_dtype) not in codes or len(raw_shape) != 3:
            _lib.fail(_lib.VoxlabelArgumentError, "raw_shape/raw_dtype: (z, y, x) and one of %s"
                      % ", ".join(str(numpy.dtype(t)) for t in _HOST_DTYPES.values()))
        options.raw_nz, options.raw_ny, options.raw_nx = (int(n) for n in raw_shape)
        options.raw_dtype = codes[numpy.dtype(raw_dtype)]
    variable = None if mat_variable is None else str(mat_variable).encode()
    options.mat_variable = variable
    options.mat_xy = int(mat_order == "matlab-xy")
    volume = _lib.Volume()
    _lib.check(_lib.lib.vl_read_volume(os.fsencode(path), ctypes.byref(options), ctypes.byref(volume)))
    voxels = _label.host_array(volume, (volume.nz, volume.ny, volume.nx), _HOST_DTYPES[volume.dtype])
    return voxels, _geometry.Geometry.from_library(volume.geometry)


def _label_volume(labels, axes, geometry):
    """A vl_volume over an integer label array (u8/u16/u32 as they are, others as u32), and the array it
    points into, which the caller keeps while the volume is in use."""
    labels = numpy.asarray(labels)
    memory = _layout.Layout(labels, axes, allow_swap=False).memory
    codes = {numpy.dtype(numpy.uint8): _lib.U8, numpy.dtype(numpy.uint16): _lib.U16,
             numpy.dtype(numpy.uint32): _lib.U32}
    if memory.dtype not in codes:
        if memory.dtype == numpy.bool_:
            memory = memory.view(numpy.uint8)
        elif memory.dtype.kind not in "iu" or (memory.size and (memory.min() < 0 or memory.max() > 2**32 - 1)):
            _lib.fail(_lib.VoxlabelArgumentError, "labels: integers 0..2^32-1 expected, not %s" % memory.dtype)
        else:
            memory = memory.astype(numpy.uint32)
    volume = _label.volume_over(memory, codes[memory.dtype],
                                None if geometry is None else _geometry.library_geometry(None, geometry))
    return volume, memory


def write_labels(path, labels, geometry=None, format=None, force=False, mat_class="double", mat_order="matlab",
                 compression_level=0, axes="auto"):
    """Writes a label array as a label map, atomically (nothing is left behind on failure).

    format: "nii.gz", "nii", "nrrd", "mha", "mat" or "raw"; None: from the file name.
    geometry: a voxlabel.Geometry (from read_dicom) for the file's origin, spacing and direction.
    force: replace an existing file (otherwise it is an error).
    MAT files: mat_class "double" (what bwlabeln returns), "uint32" or "native"; mat_order "matlab" stores
    V(row, col, slice), "matlab-xy" V(x, y, z).
    compression_level (.nii.gz, gzip .nrrd): 0 or 1, ISA-L's igzip (the fastest); 2..9, zlib at that level.
    """
    volume, memory = _label_volume(labels, axes, geometry)
    options = _lib.WriteOptions()
    _lib.lib.vl_write_options_default(ctypes.byref(options))
    if format is not None:
        options.format = _format_code(format)
    if mat_class not in _MAT_CLASSES or mat_order not in ("matlab", "matlab-xy"):
        _lib.fail(_lib.VoxlabelArgumentError, "mat_class %r / mat_order %r: not one of %s / matlab, matlab-xy"
                  % (mat_class, mat_order, list(_MAT_CLASSES)))
    options.force = int(bool(force))
    options.is_label_map = 1
    options.mat_class = _MAT_CLASSES[mat_class]
    options.mat_xy = int(mat_order == "matlab-xy")
    options.compression_level = int(compression_level)
    _lib.check(_lib.lib.vl_write_volume(os.fsencode(path), ctypes.byref(volume), ctypes.byref(options)))


def compare(ours, reference, axes="auto"):
    """Compares two label arrays of one shape: are they identical, the same components numbered differently
    (and by which rule), or different components?

    Returns a dict: verdict ("identical", "same partition", "different"), voxels, ours_components,
    reference_components, differing_voxels, unmatched_voxels, foreground_mismatch, reference_split,
    ours_merged, ours_unmatched, reference_unmatched, ours_rule, reference_rule, mapping_rule, and first:
    up to 10 (x, y, z, ours, reference) voxels that differ.
    """
    ours_volume, ours_memory = _label_volume(ours, axes, None)
    reference_volume, reference_memory = _label_volume(reference, axes, None)
    result = _lib.CompareResult()
    _lib.check(_lib.lib.vl_compare_labels(ctypes.byref(ours_volume), ctypes.byref(reference_volume),
                                          ctypes.byref(result)))
    out = {name: getattr(result, name) for name in (
        "voxels", "ours_components", "reference_components", "differing_voxels", "unmatched_voxels",
        "foreground_mismatch", "reference_split", "ours_merged", "ours_unmatched", "reference_unmatched")}
    out["verdict"] = _VERDICTS[result.verdict]
    for name in ("ours_rule", "reference_rule", "mapping_rule"):
        out[name] = getattr(result, name).decode(errors="replace")
    out["first"] = [(d.x, d.y, d.z, d.ours, d.reference) for d in result.first[:result.shown]]
    return out
