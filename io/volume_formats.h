/* Internal: the per-format readers and writers behind vl_read_volume / vl_write_volume (volume_io.c).
 * What they share lies one room lower, in volume_helpers.h; they never call volume_io.c or each other. */
#ifndef VL_VOLUME_FORMATS_H
#define VL_VOLUME_FORMATS_H

#include "voxlabel/io.h"

#ifdef __cplusplus
extern "C" {
#endif

vl_status vl_nifti_read(const char *path, const vl_read_options *options, vl_volume *volume);
vl_status vl_nifti_write(const char *path, const vl_volume *volume, const vl_write_options *options,
                         int compress);
vl_status vl_nrrd_read(const char *path, const vl_read_options *options, vl_volume *volume);
vl_status vl_nrrd_write(const char *path, const vl_volume *volume, const vl_write_options *options);
vl_status vl_mha_read(const char *path, const vl_read_options *options, vl_volume *volume);
vl_status vl_mha_write(const char *path, const vl_volume *volume, const vl_write_options *options);
vl_status vl_raw_read(const char *path, const vl_read_options *options, vl_volume *volume);
vl_status vl_raw_write(const char *path, const vl_volume *volume, const vl_write_options *options);
vl_status vl_mat_read(const char *path, const vl_read_options *options, vl_volume *volume);
vl_status vl_mat_write(const char *path, const vl_volume *volume, const vl_write_options *options);

#ifdef __cplusplus
}
#endif
#endif
