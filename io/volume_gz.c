#define _POSIX_C_SOURCE 200809L
/* Chunked zlib stream I/O shared by the NIfTI, NRRD and raw readers and writers. gzread/gzwrite take an
 * unsigned length and return an int, so volumes over 2 GiB are moved in 256 MiB pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "status.h"
#include "volume_formats.h"

enum { VL_GZ_CHUNK = 256u << 20, VL_CONVERT_CHUNK_VOXELS = 1 << 22 };

static const char *gz_detail(gzFile file)
{
    int code = 0;
    const char *message = gzerror(file, &code);
    return code == Z_ERRNO ? "I/O error" : (message && message[0] ? message : "unexpected end of data");
}

vl_status vl_gz_read_exact(gzFile file, void *data, size_t bytes, const char *path)
{
    unsigned char *cursor = data;
    while (bytes > 0) {
        unsigned piece = bytes > VL_GZ_CHUNK ? VL_GZ_CHUNK : (unsigned)bytes;
        int got = gzread(file, cursor, piece);
        if (got <= 0)
            return vl_fail(VL_ERR_INPUT, "%s: truncated or corrupt data (%s)", path,
                           got == 0 ? "file ends early" : gz_detail(file));
        cursor += got;
        bytes -= (size_t)got;
    }
    return VL_OK;
}

vl_status vl_gz_write_exact(gzFile file, const void *data, size_t bytes, const char *path)
{
    const unsigned char *cursor = data;
    while (bytes > 0) {
        unsigned piece = bytes > VL_GZ_CHUNK ? VL_GZ_CHUNK : (unsigned)bytes;
        int put = gzwrite(file, cursor, piece);
        if (put <= 0)
            return vl_fail(VL_ERR_OUTPUT, "%s: write failed (%s)", path, gz_detail(file));
        cursor += put;
        bytes -= (size_t)put;
    }
    return VL_OK;
}

static vl_status sink_write(vl_voxel_sink sink, const void *data, size_t bytes, const char *path)
{
    return sink.pgz ? vl_pgz_write(sink.pgz, data, bytes) : vl_gz_write_exact(sink.gz, data, bytes, path);
}

vl_status vl_write_voxels(vl_voxel_sink sink, const vl_volume *volume, vl_dtype dtype, const char *path,
                          const vl_progress *progress)
{
    const int64_t total = vl_volume_voxels(volume);
    if (dtype == volume->dtype && total * (int64_t)vl_dtype_size(dtype) <= (int64_t)VL_GZ_CHUNK)
        return sink_write(sink, volume->data, (size_t)total * vl_dtype_size(dtype), path);
    void *buffer = malloc((size_t)VL_CONVERT_CHUNK_VOXELS * vl_dtype_size(dtype));
    if (!buffer)
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate a conversion buffer", path);
    vl_status status = VL_OK;
    for (int64_t first = 0; first < total && status == VL_OK; first += VL_CONVERT_CHUNK_VOXELS) {
        int64_t count = total - first < VL_CONVERT_CHUNK_VOXELS ? total - first : VL_CONVERT_CHUNK_VOXELS;
        vl_convert_voxels(volume, first, count, dtype, buffer);
        status = sink_write(sink, buffer, (size_t)count * vl_dtype_size(dtype), path);
        vl_progress_report(progress, "writing", (double)(first + count) / (double)total);
    }
    free(buffer);
    return status;
}

int64_t vl_file_remaining_bytes(FILE *file)
{
    off_t here = ftello(file);
    if (here < 0 || fseeko(file, 0, SEEK_END) != 0)
        return -1;
    off_t end = ftello(file);
    if (fseeko(file, here, SEEK_SET) != 0 || end < here)
        return -1;
    return (int64_t)(end - here);
}

vl_status vl_finish_gzip_file(vl_atomic_file *file, FILE *out, const void *prefix, size_t prefix_bytes,
                              const vl_volume *volume, vl_dtype dtype, const vl_write_options *options,
                              const char *path)
{
    vl_pgz *z = NULL;
    vl_status status = vl_pgz_open(&z, out, options->compression_level, path);
    if (status == VL_OK && prefix_bytes)
        status = vl_pgz_write(z, prefix, prefix_bytes);
    if (status == VL_OK)
        status = vl_write_voxels((vl_voxel_sink){NULL, z}, volume, dtype, path, &options->progress);
    if (z) {
        vl_status closed = vl_pgz_close(z, status == VL_OK);
        status = status == VL_OK ? closed : status;
    }
    if (fclose(out) != 0 && status == VL_OK)
        status = vl_fail(VL_ERR_OUTPUT, "%s: write failed when closing (disk full?)", path);
    if (status == VL_OK)
        return vl_atomic_file_commit(file);
    vl_atomic_file_discard(file);
    return status;
}
