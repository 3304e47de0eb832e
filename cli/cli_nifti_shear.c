#include "cli.h"
#include "cli_nifti_shear.h"

/* The shear below which a grid counts as regular: the DICOM reader's own tilt tolerance. */
static const double kShearToleranceDegrees = 0.01;

int cli_nifti_shear(vl_volume *volume, vl_file_format format, vl_dicom_irregular policy, const char *output,
                    double *deskewed_degrees, void **replaced)
{
    if (deskewed_degrees)
        *deskewed_degrees = 0;
    if (format != VL_FORMAT_NIFTI && format != VL_FORMAT_NIFTI_GZ)
        return 0;
    const double degrees = vl_geometry_shear_degrees(&volume->geometry);
    if (!(degrees > kShearToleranceDegrees))
        return 0;
    if (policy == VL_IRREGULAR_WARN) {
        cli_warning("%s: the grid is sheared by %.3f degrees (gantry tilt) and kept so (--on-irregular warn): "
                    "nibabel, FSL and SPM read the exact sform, but ITK-based tools (3D Slicer, SimpleITK) reject "
                    "it and misplace the voxels; write .nrrd or .mha to keep the native grid for them",
                    output, degrees);
        return 0;
    }
    vl_volume deskewed;
    vl_status status = vl_volume_deskew(volume, &deskewed);
    if (status != VL_OK)
        return cli_status_error(status);
    if (replaced)
        *replaced = volume->data;
    else
        vl_volume_free(volume);
    *volume = deskewed;
    if (deskewed_degrees)
        *deskewed_degrees = degrees;
    cli_note("%s: the grid is sheared by %.3f degrees (gantry tilt), which ITK-based readers of NIfTI (3D Slicer, "
             "SimpleITK) cannot place; the input was resampled onto the un-sheared grid (z along the slice normal, "
             "%.4f mm steps, each slice shifted in its own plane) so that it overlays the CT everywhere. "
             ".nrrd/.mha keep the native grid; --on-irregular warn keeps the shear",
             output, degrees, volume->geometry.spacing[2]);
    return 0;
}
