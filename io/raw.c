/* Headerless raw volumes: x-fastest voxels in host (little-endian) byte order; the caller gives dims and type. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_formats.h"
#include "volume_helpers.h"

vl_status vl_raw_read(const char *path, const vl_read_options *options, vl_volume *volume)
{
    if (options->raw_nx <= 0 || options->raw_ny <= 0 || options->raw_nz <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "%s: a raw file has no header: give its dimensions (NX NY NZ) and type", path);
    size_t element = vl_dtype_size(options->raw_dtype);
    if (element == 0)
        return vl_fail(VL_ERR_ARGUMENT, "%s: unknown raw voxel type", path);
    struct stat info;
    if (stat(path, &info) != 0)
        return vl_fail(VL_ERR_INPUT, "%s: %s", path, strerror(errno));
    /* The file must hold exactly what the dimensions claim: checked before anything is allocated. */
    int64_t bytes = 0;
    vl_status status = vl_size_product(options->raw_nx, options->raw_ny, options->raw_nz, (int64_t)element, path,
                                       &bytes);
    if (status != VL_OK)
        return status;
    if ((int64_t)info.st_size != bytes)
        return vl_fail(VL_ERR_INPUT, "%s: holds %lld bytes, but %lldx%lldx%lld %s needs %lld", path,
                       (long long)info.st_size, (long long)options->raw_nx, (long long)options->raw_ny,
                       (long long)options->raw_nz, vl_dtype_name(options->raw_dtype), (long long)bytes);
    vl_volume out;
    if ((status = vl_volume_create_uninitialised(&out, options->raw_nx, options->raw_ny, options->raw_nz,
                                                 options->raw_dtype)) != VL_OK)
        return status;
    const int64_t count = vl_volume_voxels(&out);
    FILE *in = fopen(path, "rb");
    if (!in) {
        int error = errno;
        vl_volume_free(&out);
        return vl_fail(VL_ERR_INPUT, "%s: %s", path, strerror(error));
    }
    size_t got = fread(out.data, element, (size_t)count, in);
    fclose(in);
    if (got != (size_t)count) {
        vl_volume_free(&out);
        return vl_fail(VL_ERR_INPUT, "%s: read failed after %zu of %lld voxels", path, got, (long long)count);
    }
    vl_progress_report(&options->progress, "reading", 1.0);
    *volume = out;
    return VL_OK;
}

/* Raw output keeps the volume's own type (it has no header to tell a narrower one). */
vl_status vl_raw_write(const char *path, const vl_volume *volume, const vl_write_options *options)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, options->force, "wb", &out);
    if (status != VL_OK)
        return status;
    status = vl_write_volume_data(out, 0, NULL, 0, volume, volume->dtype, options, path);
    return vl_atomic_file_close_stream(&file, out, status);
}
