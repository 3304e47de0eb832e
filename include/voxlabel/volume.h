/* voxlabel: a 3D volume with its geometry.
 *
 * Layout is x fastest: idx = x + nx*(y + ny*z), x = DICOM column, y = DICOM row, z = slice.
 * Sizes and indices are 64-bit, so volumes beyond 2^32 voxels work. */
#ifndef VOXLABEL_VOLUME_H
#define VOXLABEL_VOLUME_H

#include <stddef.h>
#include <stdint.h>
#include "voxlabel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_dtype {
    VL_U8 = 1,   /* masks */
    VL_I16,      /* HU as stored by CT */
    VL_U16,
    VL_U32,      /* labels */
    VL_F32       /* HU after a fractional rescale */
} vl_dtype;

/* World (LPS mm) position of voxel (i,j,k):
 *   p = origin + sum_c direction[3*r + c] * spacing[c] * idx[c]   for each row r.
 * Columns of `direction` are unit vectors: the row direction (x), the column direction (y) and the
 * slice step direction (z). The z column may be sheared off the slice normal (gantry tilt). */
typedef struct vl_geometry {
    double origin[3];     /* LPS mm of voxel (0,0,0): ImagePositionPatient of the first sorted slice */
    double spacing[3];    /* mm: PixelSpacing[1], PixelSpacing[0], step between slice positions */
    double direction[9];  /* row-major 3x3, columns = unit axis directions in LPS */
} vl_geometry;

typedef struct vl_volume {
    int64_t nx, ny, nz;
    vl_dtype dtype;
    void *data;           /* owned by the volume when created with vl_volume_create */
    vl_geometry geometry;
} vl_volume;

size_t vl_dtype_size(vl_dtype dtype);
const char *vl_dtype_name(vl_dtype dtype);

/* Allocates nx*ny*nz zeroed voxels with identity geometry and unit spacing. */
vl_status vl_volume_create(vl_volume *volume, int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype);
/* Like vl_volume_create but the voxels are left uninitialised (for outputs every voxel of which is written). */
vl_status vl_volume_create_uninitialised(vl_volume *volume, int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype);
void vl_volume_free(vl_volume *volume);
/* Memory for voxels, as the volumes above get theirs: blocks of many MiB are 2 MiB aligned and on transparent
 * huge pages, which cut the first-touch page faults; small sizes are plain malloc (0 bytes gives a valid 1-byte
 * block). NULL when out of memory. Release with free(). For callers that keep blocks to decode volumes into
 * (vl_dicom_read_options.reuse). */
void *vl_allocate_large(size_t bytes);

static inline int64_t vl_volume_voxels(const vl_volume *volume)
{
    return volume->nx * volume->ny * volume->nz;
}

/* Voxel `index` (x fastest) as a double, whatever the dtype. */
static inline double vl_volume_value(const vl_volume *volume, int64_t index)
{
    switch (volume->dtype) {
    case VL_U8: return ((const uint8_t *)volume->data)[index];
    case VL_I16: return ((const int16_t *)volume->data)[index];
    case VL_U16: return ((const uint16_t *)volume->data)[index];
    case VL_U32: return ((const uint32_t *)volume->data)[index];
    case VL_F32: return ((const float *)volume->data)[index];
    }
    return 0;
}

void vl_geometry_identity(vl_geometry *geometry);
/* World LPS position of a (possibly fractional) voxel index. */
void vl_geometry_index_to_lps(const vl_geometry *geometry, double i, double j, double k, double lps[3]);
/* Physical volume of one voxel in mm^3 (|det| of the affine, correct under shear). */
double vl_geometry_voxel_volume(const vl_geometry *geometry);

#ifdef __cplusplus
}
#endif
#endif
