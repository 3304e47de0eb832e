/* Internal: the helpers the volume readers and writers share, the room below them: sample types of
 * foreign files and their narrowing to a vl_dtype (volume_samples.c), geometry checks (volume_geometry.c),
 * chunked zlib reads and the voxel writer (volume_gz.c) over parallel gzip (gzip_parallel.c).
 * Calls go down only: volume_io.c -> the format files (volume_formats.h) -> these; nothing here calls a
 * format file or volume_io.c, so these files include this header and never volume_formats.h. */
#ifndef VL_VOLUME_HELPERS_H
#define VL_VOLUME_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "voxlabel/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sample types a file may hold; vl_volume has fewer (vl_dtype), so some are narrowed on read. */
typedef enum vl_sample_type {
    VL_SAMPLE_U8 = 0,
    VL_SAMPLE_I8,
    VL_SAMPLE_U16,
    VL_SAMPLE_I16,
    VL_SAMPLE_U32,
    VL_SAMPLE_I32,
    VL_SAMPLE_U64,
    VL_SAMPLE_I64,
    VL_SAMPLE_F32,
    VL_SAMPLE_F64
} vl_sample_type;

size_t vl_sample_size(vl_sample_type type);
const char *vl_sample_name(vl_sample_type type);
/* The vl_dtype stored without conversion, or 0 when the type needs narrowing. */
vl_dtype vl_sample_native_dtype(vl_sample_type type);
vl_sample_type vl_sample_type_of(vl_dtype dtype);

/* Reverses the bytes of each of `count` elements of `element_size` bytes (big-endian files). */
void vl_swap_bytes(void *data, int64_t count, size_t element_size);

/* Turns the malloc'd `samples` (nx*ny*nz of `type`, host byte order; ownership passes here), scaled by
 * value*slope+intercept when `scaled`, into volume->data of the closest vl_dtype (dims and geometry set, data NULL):
 *   native types (u8, i16, u16, u32, f32) unscaled are copied as they are;
 *   integral values: u32 when all are in 0..2^32-1, else i16 when they fit, else f32 when |v| <= 2^24;
 *   fractional values: f32 (values beyond the f32 range are refused).
 * `what` names the file in error messages. */
vl_status vl_samples_to_volume(void *samples, vl_sample_type type, int scaled, double slope,
                               double intercept, vl_volume *volume, const char *what);

/* The end of a reader of raw samples: when `status` failed, frees `samples` and returns it; otherwise
 * swaps them when `big_endian`, gives `out` (geometry set) the dims and the samples (vl_samples_to_volume,
 * which takes them over), reports the reading done and moves `out` into *volume. */
vl_status vl_finish_samples(vl_status status, void *samples, vl_sample_type type, int big_endian,
                            const int64_t dims[3], vl_volume *out, const vl_read_options *options, vl_volume *volume,
                            const char *path);

/* `data_file` as named by a detached header at `header_path`: absolute, or relative to its directory. */
void vl_detached_path(const char *header_path, const char *data_file, char *out, size_t size);

/* Label maps are written in the smallest unsigned type that holds their largest label (docs/design.md §7). */
vl_dtype vl_disk_dtype_for(const vl_volume *volume, const vl_write_options *options);
/* Converts voxels [first, first+count) of `volume` to `dtype` into `out` (count * size of dtype bytes). */
void vl_convert_voxels(const vl_volume *volume, int64_t first, int64_t count, vl_dtype dtype, void *out);

/* The gzip data from the position of `in` to its end, inflated by libdeflate (io/gzip_read.c): returns 1 when
 * it read them, *samples then holding the `bytes` that follow the first `skip` (malloc'd) and *status VL_OK, or
 * *status an input error for corrupt or short data; returns 0, with nothing done, when the caller should
 * use gzread (a compressed file over 1 GiB, no memory, or a member that runs past the bytes wanted). The
 * caller has bounded skip + bytes by the file's size (vl_check_deflate_claim). */
int vl_gunzip_exact(FILE *in, size_t skip, size_t bytes, void **samples, vl_status *status, const char *path);
/* Chunked zlib reads: gzread takes an unsigned length, so large volumes come in pieces. */
vl_status vl_gz_read_exact(gzFile file, void *data, size_t bytes, const char *path);
/* Bytes from the current position of `file` to its end, -1 when unknown; lets readers refuse a truncated
 * uncompressed file before allocating what its header claims. */
int64_t vl_file_remaining_bytes(FILE *file);
/* Deflate expands at most 1032-fold: a zlib/gzip stream of `compressed` bytes (-1: unknown, no check) that is
 * claimed to inflate to `claimed` bytes is refused (VL_ERR_INPUT) when it cannot, before anything is allocated. */
vl_status vl_check_deflate_claim(int64_t claimed, int64_t compressed, const char *path);
/* zlib's memLevel for label maps (Z_RLE): the run-length strategy never looks at the hash table that zlib keeps
 * sliding along the window, so the table is kept small (an eighth of the default 8's; blocks of 2048 symbols).
 * bench/cohort_gzip_bench compares it with the default. */
#define VL_PGZ_RLE_MEM_LEVEL 5
/* ISA-L's igzip level (0..3) of the default compression: on label maps and CT several times zlib's speed,
 * bench/cohort_gzip_bench compares it with zlib's. */
#define VL_PGZ_ISAL_LEVEL 2
/* igzip's working memory for a level (0..3), as ISA-L sizes it by default. */
uint32_t vl_pgz_igzip_buffer_bytes(int level);
/* Parallel gzip (io/gzip_parallel.c): appends `prefix` then the voxels as `dtype` to `file` as one gzip member,
 * compressed on every core; the bytes do not depend on the thread count. options->compression_level 0 or 1
 * (the default): ISA-L's igzip at VL_PGZ_ISAL_LEVEL; 2..9: zlib at that level, label maps
 * (options->is_label_map) with its run-length strategy. The FILE stays open. */
vl_status vl_pgz_write_volume(FILE *file, const void *prefix, size_t prefix_bytes, const vl_volume *volume,
                              vl_dtype dtype, const vl_write_options *options, const char *path);
/* The same deflate stream of the voxels as `dtype`, in a zlib wrapper (RFC 1950) instead: compressed MetaImage. */
vl_status vl_pzlib_write_volume(FILE *file, const vl_volume *volume, vl_dtype dtype, const vl_write_options *options,
                                const char *path);

/* Writes `prefix` (may be empty), then the voxels as `dtype`, to `out`; through the parallel gzip writer
 * when `compress`. The caller opens and closes `out` (vl_atomic_file_open_stream / _close_stream). */
vl_status vl_write_volume_data(FILE *out, int compress, const void *prefix, size_t prefix_bytes,
                               const vl_volume *volume, vl_dtype dtype, const vl_write_options *options,
                               const char *path);

/* Geometry helpers shared by the formats that store an affine. */
int vl_geometry_is_valid(const vl_geometry *geometry);
/* Builds origin/spacing/direction from a 3x3 LPS matrix whose columns are the axis steps (mm per index). */
vl_status vl_geometry_from_axes(const double axes[9], const double origin[3], vl_geometry *geometry,
                                const char *what);

#ifdef __cplusplus
}
#endif
#endif
