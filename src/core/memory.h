/* Internal: allocation of large working arrays and outputs (vl_allocate_large, voxlabel/volume.h), and volumes
 * placed in a caller's block. */
#ifndef VL_MEMORY_H
#define VL_MEMORY_H

#include <stddef.h>

#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

/* vl_volume_create_uninitialised, with the voxels in `block` (the caller's, `block_bytes` long) when they fit
 * there; otherwise allocated as usual. The volume's data is then the block, which stays the caller's. */
vl_status vl_volume_create_in(vl_volume *volume, int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype, void *block,
                              size_t block_bytes);

#ifdef __cplusplus
}
#endif

#endif
