/* voxlabel: reading and writing volume files (labels and intensities).
 * DICOM series are read through voxlabel/dicom.h; this header covers the single-file formats. */
#ifndef VOXLABEL_IO_H
#define VOXLABEL_IO_H

#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_file_format {
    VL_FORMAT_AUTO = 0,  /* from the file name: .nii.gz .nii .nrrd .nhdr .mha .mat .raw */
    VL_FORMAT_NIFTI_GZ,
    VL_FORMAT_NIFTI,
    VL_FORMAT_NRRD,
    VL_FORMAT_MHA,
    VL_FORMAT_MAT,
    VL_FORMAT_RAW
} vl_file_format;

/* Parses "nii.gz", "nii", "nrrd", "mha", "mat", "raw". */
vl_status vl_file_format_parse(const char *text, vl_file_format *format);
const char *vl_file_format_extension(vl_file_format format); /* ".nii.gz", ... */
/* The format a file name implies, VL_FORMAT_AUTO when none. */
vl_file_format vl_file_format_from_path(const char *path);

typedef struct vl_read_options {
    vl_file_format format;   /* AUTO: from the name */
    /* Raw files carry no header: dimensions and type must be given. */
    int64_t raw_nx, raw_ny, raw_nz;
    vl_dtype raw_dtype;
    /* MAT files: variable name (NULL = the only / first numeric array) and how MATLAB's axes map to x,y
     * (0: V(y,x,z) as bwlabeln on dicomread stacks, docs/design.md §4's `matlab` order; 1: V(x,y,z), `matlab-xy`). */
    const char *mat_variable;
    int mat_xy;
    vl_progress progress;
} vl_read_options;

typedef enum vl_mat_class { VL_MAT_DOUBLE = 0, VL_MAT_UINT32, VL_MAT_NATIVE } vl_mat_class;

typedef struct vl_write_options {
    vl_file_format format;   /* AUTO: from the name */
    int force;               /* replace an existing file; otherwise an existing file is an error */
    int is_label_map;        /* NIfTI intent LABEL, NRRD/Slicer label hints */
    vl_mat_class mat_class;  /* MAT: double (what bwlabeln returns) by default */
    int mat_xy;              /* MAT axis convention, as in vl_read_options */
    int compression_level;   /* .nii.gz/.nrrd: 0 or 1, ISA-L igzip (the fastest); 2..9, zlib at that level */
    int threads;             /* compressing threads for .nii.gz/.nrrd/.mha; 0 = every core (vl_set_thread_limit caps
                              * both); the bytes are the same for any count */
    vl_progress progress;
} vl_write_options;

void vl_read_options_default(vl_read_options *options);
void vl_write_options_default(vl_write_options *options);

vl_status vl_read_volume(const char *path, const vl_read_options *options, vl_volume *volume);
/* Writes atomically: a temporary file in the same directory, renamed over `path` only on success. */
vl_status vl_write_volume(const char *path, const vl_volume *volume, const vl_write_options *options);

/* Angle in degrees between the z axis and the normal of the x and y axes: the gantry-tilt shear (0 = none). */
double vl_geometry_shear_degrees(const vl_geometry *geometry);
/* `in` on the un-sheared grid (z axis along the slice normal, spacing the step along it, same size and
 * origin): slice k shifted in its own plane, bilinear for I16/F32 (the minimum value outside), nearest
 * neighbour for U8/U16/U32 label maps (0 outside). What ITK-based readers of NIfTI need (docs/formats.md). */
vl_status vl_volume_deskew(const vl_volume *in, vl_volume *out);

/* Smallest unsigned type (U8, U16, U32) that holds labels up to `max_label`. */
vl_dtype vl_label_dtype_for(uint32_t max_label);

#ifdef __cplusplus
}
#endif
#endif
