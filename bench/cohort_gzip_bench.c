#define _POSIX_C_SOURCE 200809L
/* The write stage's compressor, one core, on a volume file (labels.nii.gz, a CT .nii.gz, ...): every candidate
 * deflates the voxels in independent 1 MiB chunks, as io/gzip_parallel.c does, so the per-core speed holds for
 * any thread count.
 *   zlib L, zlib-rle      raw deflate, sync-flushed: one gzip member when joined (what the writer emits;
 *                         zlib-rle is its label-map strategy, Z_RLE, the same at every level, with the
 *                         writer's memLevel for it)
 *   libdeflate L          a complete gzip member per chunk (libdeflate cannot end a chunk unfinished, so
 *                         joined chunks make a multi-member file)
 *   igzip L               ISA-L's raw deflate, sync-flushed (the writer's default is level VL_PGZ_ISAL_LEVEL)
 * Then the writer itself (vl_write_volume to a .nii.gz under WORK) at 1, 2, 4, ... threads up to all cores,
 * as a label map when the volume is an integer type, and its inflate by zlib's gzread and by voxlabel's reader.
 * usage: cohort_gzip_bench VOLUME_FILE WORK_DIR [LEVEL...]   (default levels 1 2 3 6) */
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "volume_helpers.h"
#include "voxlabel/io.h"
#include "voxlabel/threads.h"
#include "bench_clock.h"

enum { chunk_bytes = 1 << 20 };

static size_t zlib_chunks(const unsigned char *data, size_t bytes, int level, int strategy, unsigned char *out,
                          size_t capacity)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    deflateInit2(&stream, level, Z_DEFLATED, -15, strategy == Z_RLE ? VL_PGZ_RLE_MEM_LEVEL : 8, strategy);
    size_t total = 0;
    for (size_t first = 0; first < bytes; first += chunk_bytes) {
        const size_t length = bytes - first < chunk_bytes ? bytes - first : chunk_bytes;
        deflateReset(&stream);
        stream.next_in = (Bytef *)(data + first);
        stream.avail_in = (uInt)length;
        stream.next_out = out;
        stream.avail_out = (uInt)capacity;
        deflate(&stream, Z_SYNC_FLUSH);
        total += capacity - stream.avail_out;
        (void)libdeflate_crc32(0, data + first, length);
    }
    deflateEnd(&stream);
    return total;
}

static size_t libdeflate_chunks(const unsigned char *data, size_t bytes, int level, unsigned char *out,
                                size_t capacity)
{
    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(level);
    size_t total = 0;
    for (size_t first = 0; first < bytes; first += chunk_bytes) {
        const size_t length = bytes - first < chunk_bytes ? bytes - first : chunk_bytes;
        total += libdeflate_gzip_compress(compressor, data + first, length, out, capacity);
    }
    libdeflate_free_compressor(compressor);
    return total;
}

static size_t igzip_chunks(const unsigned char *data, size_t bytes, int level, unsigned char *out,
                           size_t capacity)
{
    const uint32_t buffer_bytes = vl_pgz_igzip_buffer_bytes(level);
    unsigned char *buffer = malloc(buffer_bytes + 1);
    struct isal_zstream stream;
    size_t total = 0;
    for (size_t first = 0; first < bytes; first += chunk_bytes) {
        const size_t length = bytes - first < chunk_bytes ? bytes - first : chunk_bytes;
        isal_deflate_init(&stream);
        stream.level = (uint32_t)level;
        stream.level_buf = buffer;
        stream.level_buf_size = buffer_bytes;
        stream.flush = SYNC_FLUSH;
        stream.next_in = (uint8_t *)(data + first);
        stream.avail_in = (uint32_t)length;
        stream.next_out = out;
        stream.avail_out = (uint32_t)capacity;
        isal_deflate(&stream);
        total += capacity - stream.avail_out;
        (void)libdeflate_crc32(0, data + first, length);
    }
    free(buffer);
    return total;
}

static void row(const char *name, int level, size_t bytes, size_t size, double seconds)
{
    printf("%-12s %5d %10.1f %10.1f %8.4f\n", name, level, (double)bytes / 1e6 / seconds,
           (double)bytes / (double)size, seconds);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cohort_gzip_bench VOLUME_FILE WORK_DIR [LEVEL...]\n");
        return 2;
    }
    vl_volume volume;
    vl_read_options read;
    vl_read_options_default(&read);
    if (vl_read_volume(argv[1], &read, &volume) != VL_OK) {
        fprintf(stderr, "cannot read %s: %s\n", argv[1], vl_last_error());
        return 3;
    }
    const size_t bytes = (size_t)vl_volume_voxels(&volume) * vl_dtype_size(volume.dtype);
    const size_t capacity = compressBound(chunk_bytes) + 1024;
    unsigned char *out = malloc(capacity);
    const int default_levels[] = {1, 2, 3, 6};
    const int level_count = argc > 3 ? argc - 3 : 4;
    printf("%s: %lldx%lldx%lld %s, %.1f MB\n", argv[1], (long long)volume.nx, (long long)volume.ny,
           (long long)volume.nz, vl_dtype_name(volume.dtype), (double)bytes / 1e6);
    printf("%-12s %5s %10s %10s %8s\n", "compressor", "level", "MB/s", "ratio", "seconds");
    static const char *const names[4] = {"zlib", "zlib-rle", "libdeflate", "igzip"};
    for (int which = 0; which < 4; which++)
        for (int l = 0; l < (which == 1 ? 1 : which == 3 ? 4 : level_count); l++) {
            const int level = which == 1 ? 1 : which == 3 ? l : argc > 3 ? atoi(argv[3 + l]) : default_levels[l];
            double best = 1e30;
            size_t size = 0;
            for (int repeat = 0; repeat < 3; repeat++) {
                const double start = now();
                size = which == 3   ? igzip_chunks(volume.data, bytes, level, out, capacity)
                       : which == 2 ? libdeflate_chunks(volume.data, bytes, level, out, capacity)
                                    : zlib_chunks(volume.data, bytes, level, which ? Z_RLE : Z_DEFAULT_STRATEGY, out,
                                                  capacity);
                const double took = now() - start;
                best = took < best ? took : best;
            }
            row(names[which], level, bytes, size, best);
        }
    free(out);

    /* The writer and the readers. */
    char path[4096];
    snprintf(path, sizeof path, "%s/cohort_gzip_bench.nii.gz", argv[2]);
    vl_write_options write;
    vl_write_options_default(&write);
    write.force = 1;
    write.is_label_map = volume.dtype == VL_U32 || volume.dtype == VL_U16 || volume.dtype == VL_U8;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("\nwriter (%s, igzip %d): threads, seconds, MB/s of voxels\n", write.is_label_map ? "label map" : "volume",
           VL_PGZ_ISAL_LEVEL);
    for (long threads = 1;; threads *= 2) {
        threads = threads < cores ? threads : cores;
        vl_set_thread_limit((int)threads);
        double best = 1e30;
        for (int repeat = 0; repeat < 3; repeat++) {
            const double start = now();
            if (vl_write_volume(path, &volume, &write) != VL_OK) {
                fprintf(stderr, "write %s: %s\n", path, vl_last_error());
                return 4;
            }
            const double took = now() - start;
            best = took < best ? took : best;
        }
        printf("writer %3ld %8.4f %10.1f\n", threads, best, (double)bytes / 1e6 / best);
        if (threads == cores)
            break;
    }
    vl_set_thread_limit(0);
    double best_gzread = 1e30, best_reader = 1e30;
    unsigned char *plain = malloc(bytes + 4096);
    for (int repeat = 0; repeat < 3; repeat++) {
        double start = now();
        gzFile file = gzopen(path, "rb");
        gzbuffer(file, 1 << 20);
        while (gzread(file, plain, (unsigned)(bytes + 4096 < (1u << 30) ? bytes + 4096 : (1u << 30))) > 0)
            ;
        gzclose(file);
        double took = now() - start;
        best_gzread = took < best_gzread ? took : best_gzread;
        vl_volume back;
        start = now();
        if (vl_read_volume(path, &read, &back) != VL_OK) {
            fprintf(stderr, "read %s: %s\n", path, vl_last_error());
            return 3;
        }
        took = now() - start;
        best_reader = took < best_reader ? took : best_reader;
        vl_volume_free(&back);
    }
    printf("inflate: zlib gzread %.4f s, voxlabel reader (libdeflate) %.4f s\n", best_gzread, best_reader);
    free(plain);
    unlink(path);
    vl_volume_free(&volume);
    return 0;
}
