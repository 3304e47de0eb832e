#define _POSIX_C_SOURCE 200809L
/* Voxel I/O shared by the NIfTI, NRRD and raw readers and writers. gzread takes an unsigned length and
 * returns an int, so volumes over 2 GiB are read in 256 MiB pieces. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_helpers.h"

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

static vl_status write_plain(FILE *out, const void *data, size_t bytes, const char *path)
{
    errno = 0;
    if (fwrite(data, 1, bytes, out) != bytes) {
        char shown[VL_PATH_MAX];
        return vl_fail(VL_ERR_OUTPUT, "%s: write failed: %s", vl_output_name(path, shown, sizeof shown),
                       errno ? strerror(errno) : "disk full or I/O error");
    }
    return VL_OK;
}

/* Uncompressed voxels in bounded chunks, for the progress and so that only a conversion needs a buffer. */
static vl_status write_plain_voxels(FILE *out, const vl_volume *volume, vl_dtype dtype, const vl_progress *progress,
                                    const char *path)
{
    const int64_t total = vl_volume_voxels(volume);
    const size_t size = vl_dtype_size(dtype);
    void *buffer = NULL;
    if (dtype != volume->dtype && !(buffer = malloc((size_t)VL_CONVERT_CHUNK_VOXELS * size)))
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate a conversion buffer", path);
    vl_status status = VL_OK;
    for (int64_t first = 0; first < total && status == VL_OK; first += VL_CONVERT_CHUNK_VOXELS) {
        int64_t count = total - first < VL_CONVERT_CHUNK_VOXELS ? total - first : VL_CONVERT_CHUNK_VOXELS;
        const void *chunk = (const char *)volume->data + (size_t)first * size;
        if (buffer) {
            vl_convert_voxels(volume, first, count, dtype, buffer);
            chunk = buffer;
        }
        status = write_plain(out, chunk, (size_t)count * size, path);
        vl_progress_report(progress, "writing", (double)(first + count) / (double)total);
    }
    free(buffer);
    return status;
}

vl_status vl_write_volume_data(FILE *out, int compress, const void *prefix, size_t prefix_bytes,
                               const vl_volume *volume, vl_dtype dtype, const vl_write_options *options,
                               const char *path)
{
    if (compress)
        return vl_pgz_write_volume(out, prefix, prefix_bytes, volume, dtype, options, path);
    vl_status status = prefix_bytes ? write_plain(out, prefix, prefix_bytes, path) : VL_OK;
    return status == VL_OK ? write_plain_voxels(out, volume, dtype, &options->progress, path) : status;
}

vl_status vl_check_deflate_claim(int64_t claimed, int64_t compressed, const char *path)
{
    const int64_t max_ratio = 1032, slack = 1 << 16; /* deflate's limit; headers and trailers */
    if (compressed < 0 || compressed > (INT64_MAX - slack) / max_ratio || claimed <= compressed * max_ratio + slack)
        return VL_OK;
    return vl_fail(VL_ERR_INPUT,
                   "%s: claims %lld bytes of voxels, more than its %lld compressed bytes can inflate to (deflate "
                   "expands at most %lld-fold): a corrupt or truncated header",
                   path, (long long)claimed, (long long)compressed, (long long)max_ratio);
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
