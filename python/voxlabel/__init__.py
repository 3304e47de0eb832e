"""voxlabel: connected components of CT volumes, numbered exactly as MATLAB's bwlabeln, from Python.

    import voxlabel
    volume, geometry = voxlabel.read_dicom("ct/")          # a[z, y, x] in HU, and where it is
    labels, n = voxlabel.label(volume > 300)               # bwlabeln numbering, 26-connected
    table = voxlabel.statistics(labels, volume, geometry=geometry)

NumPy arrays are labelled by libvoxlabel.so (CPU, or the GPU under device="auto"); CuPy arrays and CUDA
DLPack tensors on their own device; Dask arrays by voxlabel.dask.label. docs/python.md has the details.
"""
from ._geometry import Geometry
from ._io import DicomSeries, compare, read_dicom, read_volume, write_labels
from ._label import label
from ._lib import (VoxlabelArgumentError, VoxlabelDeviceError, VoxlabelError, VoxlabelInputError,
                   VoxlabelMemoryError, VoxlabelOutputError, library_path, lib as _library)
from ._stats import statistics

__version__ = _library.vl_version().decode()

__all__ = ["label", "statistics", "read_dicom", "read_volume", "write_labels", "compare", "Geometry", "DicomSeries",
           "VoxlabelError", "VoxlabelArgumentError", "VoxlabelInputError", "VoxlabelOutputError",
           "VoxlabelDeviceError", "VoxlabelMemoryError", "library_path", "__version__"]
