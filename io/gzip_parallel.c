/* Parallel gzip for .nii.gz and gzip-encoded NRRD, after pigz: one standard gzip member (gunzip, zlib's
 * gzread, Python's gzip and Java's GZIPInputStream read it), compressed in 1 MiB blocks on every core.
 * Each block is raw deflate primed with the 32 KiB before it (so the ratio stays close to one serial
 * stream) and ended by a sync flush (byte-aligned, not final); the CRCs are joined with crc32_combine and
 * an empty final block ends the stream. The bytes depend on the block size, not on the thread count.
 * Whole blocks are compressed where the caller's data lies; only a block that straddles two writes is
 * copied, so the voxels are not copied a second time on one core. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_helpers.h"

enum { block_bytes = 1 << 20, window_bytes = 32 << 10, most_threads = 32 };

typedef struct pgz_job {
    z_stream stream;
    int ready, failed, level;
    const unsigned char *input, *dictionary;
    size_t input_bytes, dictionary_bytes;
    unsigned char *output;
    size_t output_capacity, output_bytes;
    uLong crc;
} pgz_job;

struct vl_pgz {
    FILE *file;
    const char *path;
    int threads;
    const unsigned char *block[most_threads]; /* whole blocks waiting, in stream order */
    int listed;
    int borrowed;                             /* some of them lie in the caller's memory */
    unsigned char *batch;                     /* copies: slot i for block i, slot `listed` for the partial one */
    size_t partial;                           /* bytes of the block being copied together */
    unsigned char history[window_bytes];
    size_t history_bytes;
    uLong crc;
    uint64_t total;
    pgz_job jobs[most_threads];
};

static void *compress_block(void *argument)
{
    pgz_job *job = argument;
    job->crc = crc32(0L, job->input, (uInt)job->input_bytes);
    int result = job->ready ? deflateReset(&job->stream)
                            : deflateInit2(&job->stream, job->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    job->ready = 1;
    if (result == Z_OK && job->dictionary_bytes)
        result = deflateSetDictionary(&job->stream, job->dictionary, (uInt)job->dictionary_bytes);
    if (result == Z_OK) {
        job->stream.next_in = (Bytef *)job->input;
        job->stream.avail_in = (uInt)job->input_bytes;
        job->stream.next_out = job->output;
        job->stream.avail_out = (uInt)job->output_capacity;
        result = deflate(&job->stream, Z_SYNC_FLUSH);
    }
    /* The output has room for the worst case, so a complete block leaves some of it free. */
    job->failed = result != Z_OK || job->stream.avail_in != 0 || job->stream.avail_out == 0;
    job->output_bytes = job->output_capacity - job->stream.avail_out;
    return NULL;
}

static vl_status write_bytes(vl_pgz *z, const void *data, size_t bytes)
{
    errno = 0;
    if (fwrite(data, 1, bytes, z->file) != bytes) {
        char shown[VL_PATH_MAX];
        return vl_fail(VL_ERR_OUTPUT, "%s: write failed: %s", vl_output_name(z->path, shown, sizeof shown),
                       errno ? strerror(errno) : "disk full or I/O error");
    }
    return VL_OK;
}

/* Compresses the listed blocks and, with `last`, the partial one after them; then writes them in order. */
static vl_status flush_blocks(vl_pgz *z, int last)
{
    const int used = z->listed + (last && z->partial);
    if (used == 0)
        return VL_OK;
    for (int t = 0; t < used; t++) {
        pgz_job *job = &z->jobs[t];
        job->input = t < z->listed ? z->block[t] : z->batch + (size_t)t * block_bytes;
        job->input_bytes = t < z->listed ? block_bytes : z->partial;
        job->dictionary = t ? z->block[t - 1] + block_bytes - window_bytes : z->history;
        job->dictionary_bytes = t ? window_bytes : z->history_bytes;
    }
    vl_run_parallel(compress_block, z->jobs, sizeof z->jobs[0], used);
    vl_status status = VL_OK;
    for (int t = 0; t < used && status == VL_OK; t++) {
        if (z->jobs[t].failed)
            return vl_fail(VL_ERR_INTERNAL, "%s: zlib could not compress a block", z->path);
        status = write_bytes(z, z->jobs[t].output, z->jobs[t].output_bytes);
        z->crc = crc32_combine(z->crc, z->jobs[t].crc, (z_off_t)z->jobs[t].input_bytes);
        z->total += z->jobs[t].input_bytes;
    }
    /* The next block's dictionary: the last 32 KiB of the last whole block. */
    if (z->listed) {
        memcpy(z->history, z->block[z->listed - 1] + block_bytes - window_bytes, window_bytes);
        z->history_bytes = window_bytes;
    }
    /* The partial block moves to slot 0, where the next write goes on filling it. */
    if (z->partial && !last && z->listed)
        memmove(z->batch, z->batch + (size_t)z->listed * block_bytes, z->partial);
    z->listed = 0;
    z->borrowed = 0;
    return status;
}

vl_status vl_pgz_open(vl_pgz **out, FILE *file, int level, const char *path)
{
    *out = NULL;
    vl_pgz *z = calloc(1, sizeof *z);
    if (!z)
        return vl_fail(VL_ERR_MEMORY, "%s: no memory for the gzip writer", path);
    z->file = file;
    z->path = path;
    z->threads = vl_cpu_thread_count(0) < most_threads ? vl_cpu_thread_count(0) : most_threads;
    z->crc = crc32(0L, Z_NULL, 0);
    z->batch = malloc((size_t)z->threads * block_bytes);
    int failed = !z->batch;
    for (int t = 0; t < z->threads && !failed; t++) {
        z->jobs[t].level = level >= 1 && level <= 9 ? level : 1;
        z->jobs[t].output_capacity = compressBound(block_bytes) + 64;
        z->jobs[t].output = malloc(z->jobs[t].output_capacity);
        failed = !z->jobs[t].output;
    }
    if (failed) {
        const int threads = z->threads;
        vl_pgz_close(z, 0);
        return vl_fail(VL_ERR_MEMORY, "%s: no memory for the gzip writer's %d blocks", path, threads);
    }
    /* gzip member header: deflate, no name, no time, Unix. */
    static const unsigned char header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    vl_status status = write_bytes(z, header, sizeof header);
    if (status != VL_OK) {
        vl_pgz_close(z, 0);
        return status;
    }
    *out = z;
    return VL_OK;
}

vl_status vl_pgz_write(vl_pgz *z, const void *data, size_t bytes)
{
    const unsigned char *cursor = data;
    while (bytes > 0) {
        if (z->partial || bytes < block_bytes) {
            unsigned char *slot = z->batch + (size_t)z->listed * block_bytes;
            const size_t piece = block_bytes - z->partial < bytes ? block_bytes - z->partial : bytes;
            memcpy(slot + z->partial, cursor, piece);
            z->partial += piece;
            cursor += piece;
            bytes -= piece;
            if (z->partial == block_bytes) {
                z->block[z->listed++] = slot;
                z->partial = 0;
            }
        } else {
            z->block[z->listed++] = cursor;
            z->borrowed = 1;
            cursor += block_bytes;
            bytes -= block_bytes;
        }
        if (z->listed == z->threads) {
            vl_status status = flush_blocks(z, 0);
            if (status != VL_OK)
                return status;
        }
    }
    /* Blocks in the caller's memory are compressed before it may change. */
    return z->borrowed ? flush_blocks(z, 0) : VL_OK;
}

vl_status vl_pgz_close(vl_pgz *z, int finish)
{
    vl_status status = VL_OK;
    if (finish) {
        status = flush_blocks(z, 1);
        /* An empty final block (fixed Huffman, end of block), then CRC-32 and length mod 2^32, little endian. */
        unsigned char trailer[10] = {0x03, 0x00};
        for (int i = 0; i < 4; i++) {
            trailer[2 + i] = (unsigned char)(z->crc >> (8 * i));
            trailer[6 + i] = (unsigned char)(z->total >> (8 * i));
        }
        if (status == VL_OK)
            status = write_bytes(z, trailer, sizeof trailer);
    }
    for (int t = 0; t < z->threads; t++) {
        if (z->jobs[t].ready)
            deflateEnd(&z->jobs[t].stream);
        free(z->jobs[t].output);
    }
    free(z->batch);
    free(z);
    return status;
}
