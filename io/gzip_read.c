#define _POSIX_C_SOURCE 200809L
/* Whole-buffer gzip reads with libdeflate: the compressed bytes are read at once and inflated member after
 * member (a gzip file may hold several) into one buffer, each member's CRC and length checked by libdeflate;
 * the bytes before the voxels (a NIfTI header) are then moved off its front. Used when the caller knows
 * exactly how many bytes it needs; gzread stays the path for the rest (see vl_gunzip_exact). */
#include <errno.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "volume_helpers.h"

/* The compressed file is held in memory beside the voxels only up to this size. */
enum { most_compressed_bytes = 1 << 30 };

int vl_gunzip_exact(FILE *in, size_t skip, size_t bytes, void **samples, vl_status *status, const char *path)
{
    *samples = NULL;
    const int64_t left = vl_file_remaining_bytes(in);
    /* Only what deflate can give (1032 bytes per byte in, plus headers) is allocated; a larger claim is left
     * to gzread, which fails at the end of the data without allocating it. */
    const uint64_t most_inflated = (uint64_t)(left > 0 ? left : 0) * 1032u + (1u << 16);
    if (left < 18 || left > most_compressed_bytes || skip > SIZE_MAX - bytes || skip + bytes > most_inflated)
        return 0;
    unsigned char *compressed = malloc((size_t)left);
    unsigned char *whole = malloc(skip + bytes ? skip + bytes : 1);
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    if (!compressed || !whole || !inflater) {
        free(compressed);
        free(whole);
        if (inflater)
            libdeflate_free_decompressor(inflater);
        return 0;
    }
    int handled = 1;
    errno = 0;
    if (fread(compressed, 1, (size_t)left, in) != (size_t)left) {
        *status = vl_fail(VL_ERR_INPUT, "%s: read failed: %s", path, errno ? strerror(errno) : "I/O error");
    } else {
        size_t used = 0, filled = 0;
        enum libdeflate_result result = LIBDEFLATE_SUCCESS;
        /* Members until the bytes are there; what follows them is not read (as gzread would not). */
        while (filled < skip + bytes && used < (size_t)left && result == LIBDEFLATE_SUCCESS) {
            size_t in_bytes = 0, out_bytes = 0;
            result = libdeflate_gzip_decompress_ex(inflater, compressed + used, (size_t)left - used, whole + filled,
                                                   skip + bytes - filled, &in_bytes, &out_bytes);
            used += in_bytes;
            filled += out_bytes;
        }
        if (result == LIBDEFLATE_INSUFFICIENT_SPACE)
            handled = 0; /* a member runs past the end of the voxels: gzread reads up to it */
        else if (result != LIBDEFLATE_SUCCESS)
            *status = vl_fail(VL_ERR_INPUT, "%s: truncated or corrupt data (%s)", path,
                              result == LIBDEFLATE_SHORT_OUTPUT ? "a member is shorter than its length field"
                                                                : "invalid gzip data or checksum");
        else if (filled < skip + bytes)
            *status = vl_fail(VL_ERR_INPUT, "%s: truncated or corrupt data (file ends early)", path);
        else
            *status = VL_OK;
    }
    libdeflate_free_decompressor(inflater);
    free(compressed);
    if (!handled || *status != VL_OK) {
        free(whole);
        if (!handled && fseeko(in, -(off_t)left, SEEK_CUR) != 0) {
            *status = vl_fail(VL_ERR_INPUT, "%s: cannot seek back to the gzip data", path);
            handled = 1;
        }
        return handled;
    }
    if (skip) {
        memmove(whole, whole + skip, bytes);
        unsigned char *shrunk = realloc(whole, bytes ? bytes : 1);
        whole = shrunk ? shrunk : whole;
    }
    *samples = whole;
    return 1;
}
