#define _POSIX_C_SOURCE 200809L
/* The write stage's compressor for labels.nii.gz: zlib (what io/gzip_parallel.c does: 1 MiB raw-deflate blocks
 * primed with the 32 KiB before them, sync-flushed, one gzip member) against libdeflate (1 MiB blocks, each its
 * own gzip member: also a standard gzip file, as bgzip writes). One core, so the ratio holds for any thread count.
 * usage: cohort_gzip_bench LABELS_FILE [LEVEL...]   (default levels 1 and 6) */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "voxlabel/io.h"

enum { block_bytes = 1 << 20, window_bytes = 32 << 10 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static size_t zlib_blocks(const unsigned char *data, size_t bytes, int level, unsigned char *out, size_t capacity)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    deflateInit2(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    size_t total = 0;
    for (size_t first = 0; first < bytes; first += block_bytes) {
        const size_t length = bytes - first < block_bytes ? bytes - first : block_bytes;
        deflateReset(&stream);
        if (first)
            deflateSetDictionary(&stream, data + first - window_bytes, window_bytes);
        stream.next_in = (Bytef *)(data + first);
        stream.avail_in = (uInt)length;
        stream.next_out = out;
        stream.avail_out = (uInt)capacity;
        deflate(&stream, Z_SYNC_FLUSH);
        total += capacity - stream.avail_out;
        (void)crc32(0L, data + first, (uInt)length);
    }
    deflateEnd(&stream);
    return total;
}

static size_t libdeflate_blocks(const unsigned char *data, size_t bytes, int level, unsigned char *out,
                                size_t capacity)
{
    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(level);
    size_t total = 0;
    for (size_t first = 0; first < bytes; first += block_bytes) {
        const size_t length = bytes - first < block_bytes ? bytes - first : block_bytes;
        total += libdeflate_gzip_compress(compressor, data + first, length, out, capacity);
    }
    libdeflate_free_compressor(compressor);
    return total;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cohort_gzip_bench LABELS_FILE [LEVEL...]\n");
        return 2;
    }
    vl_volume labels;
    vl_read_options read;
    vl_read_options_default(&read);
    if (vl_read_volume(argv[1], &read, &labels) != VL_OK) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 3;
    }
    const size_t bytes = (size_t)vl_volume_voxels(&labels) * vl_dtype_size(labels.dtype);
    const size_t capacity = compressBound(block_bytes) + 1024;
    unsigned char *out = malloc(capacity);
    const int default_levels[] = {1, 6};
    const int level_count = argc > 2 ? argc - 2 : 2;
    printf("%s: %lldx%lldx%lld %s, %.1f MB\n", argv[1], (long long)labels.nx, (long long)labels.ny,
           (long long)labels.nz, vl_dtype_name(labels.dtype), (double)bytes / 1e6);
    printf("%-12s %5s %10s %10s %8s\n", "compressor", "level", "MB/s", "ratio", "seconds");
    for (int l = 0; l < level_count; l++) {
        const int level = argc > 2 ? atoi(argv[2 + l]) : default_levels[l];
        for (int which = 0; which < 2; which++) {
            double best = 1e30;
            size_t size = 0;
            for (int repeat = 0; repeat < 3; repeat++) {
                const double start = now();
                size = which ? libdeflate_blocks(labels.data, bytes, level, out, capacity)
                             : zlib_blocks(labels.data, bytes, level, out, capacity);
                const double took = now() - start;
                best = took < best ? took : best;
            }
            printf("%-12s %5d %10.1f %10.1f %8.4f\n", which ? "libdeflate" : "zlib", level, (double)bytes / 1e6 / best,
                   (double)bytes / (double)size, best);
        }
    }
    free(out);
    vl_volume_free(&labels);
    return 0;
}
