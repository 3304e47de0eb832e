"""voxlabel.Geometry: where the voxels of a volume are in the patient (docs/design.md section 3)."""
import numpy

from . import _lib

# LPS (DICOM) to RAS (NIfTI, nibabel): x and y change sign.
_LPS_TO_RAS = numpy.diag([-1.0, -1.0, 1.0, 1.0])


class Geometry:
    """Origin, spacing and direction of a volume whose voxel (x, y, z) = (column, row, slice).

    origin: LPS mm of voxel (0, 0, 0); spacing: (x, y, z) mm; direction: 3x3, columns are the unit LPS
    directions of x, y and z (z may be sheared off the slice normal by gantry tilt).
    affine_lps: 4x4, maps (x, y, z, 1) to LPS mm. affine_ras: the same to RAS mm, the affine nibabel expects
    for the array vol.T (a[x, y, z]) when vol is read_dicom's a[z, y, x].
    """

    def __init__(self, origin=(0.0, 0.0, 0.0), spacing=(1.0, 1.0, 1.0), direction=None):
        self.origin = numpy.array(origin, dtype=float).reshape(3)
        self.spacing = numpy.array(spacing, dtype=float).reshape(3)
        self.direction = numpy.eye(3) if direction is None else numpy.array(direction, dtype=float).reshape(3, 3)

    @property
    def affine_lps(self):
        affine = numpy.eye(4)
        affine[:3, :3] = self.direction * self.spacing
        affine[:3, 3] = self.origin
        return affine

    @property
    def affine_ras(self):
        return _LPS_TO_RAS @ self.affine_lps

    def __repr__(self):
        return "Geometry(origin=%s, spacing=%s, direction=%s)" % (
            self.origin.tolist(), self.spacing.tolist(), self.direction.tolist())

    @classmethod
    def from_library(cls, geometry):
        return cls(list(geometry.origin), list(geometry.spacing), list(geometry.direction))

    def to_library(self):
        geometry = _lib.Geometry()
        geometry.origin[:] = [float(v) for v in self.origin]
        geometry.spacing[:] = [float(v) for v in self.spacing]
        geometry.direction[:] = [float(v) for v in self.direction.reshape(9)]
        return geometry


def library_geometry(spacing, geometry):
    """The vl_geometry for a geometry= or spacing= argument (geometry wins)."""
    if geometry is None:
        spacing = numpy.array(spacing, dtype=float).reshape(-1)
        if spacing.size != 3 or not numpy.all(spacing > 0):
            _lib.fail(_lib.VoxlabelArgumentError, "spacing: give three positive (x, y, z) mm, not %s" % spacing)
        geometry = Geometry(spacing=spacing)
    if not isinstance(geometry, Geometry):
        _lib.fail(_lib.VoxlabelArgumentError, "geometry: a voxlabel.Geometry, not %s" % type(geometry).__name__)
    return geometry.to_library()

