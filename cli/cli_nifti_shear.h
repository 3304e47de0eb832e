/* A sheared grid (gantry tilt) bound for NIfTI: ITK's NIfTI reader (3D Slicer, SimpleITK) accepts only
 * orthonormal axes, so it misplaces a sheared sform's voxels by up to tens of mm. Shared by label and convert. */
#ifndef VL_CLI_NIFTI_SHEAR_H
#define VL_CLI_NIFTI_SHEAR_H

#include "voxlabel/dicom.h"
#include "voxlabel/io.h"

/* When `format` is NIfTI and `volume` is sheared by more than 0.01 degrees: under the default or resample
 * policy, replaces it by its deskewed copy (vl_volume_deskew), sets *deskewed_degrees (else 0; may be NULL)
 * and prints a note naming `output`; under
 * `--on-irregular warn` keeps it and warns that ITK-based readers misplace it. The replaced voxels are freed,
 * or handed to *replaced when `replaced` is given (memory the caller reuses). Returns 0 or the exit code
 * (the error printed). */
int cli_nifti_shear(vl_volume *volume, vl_file_format format, vl_dicom_irregular policy, const char *output,
                    double *deskewed_degrees, void **replaced);

#endif
