/* Parallel gzip for .nii.gz and gzip-encoded NRRD, after pigz: one standard gzip member (gunzip, zlib's
 * gzread, Python's gzip and Java's GZIPInputStream read it), compressed in 1 MiB blocks on every core.
 * Each block is raw deflate primed with the 32 KiB before it (so the ratio stays close to one serial
 * stream) and ended by a sync flush (byte-aligned, not final); the CRCs are joined with crc32_combine and
 * an empty final block ends the stream. The bytes depend on the block size, not on the thread count. */
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "status.h"
#include "volume_formats.h"

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
    unsigned char *batch; /* threads blocks of input */
    size_t batch_bytes;
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
    if (fwrite(data, 1, bytes, z->file) != bytes)
        return vl_fail(VL_ERR_OUTPUT, "%s: write failed (disk full?)", z->path);
    return VL_OK;
}

static vl_status flush_batch(vl_pgz *z)
{
    if (z->batch_bytes == 0)
        return VL_OK;
    int used = 0;
    for (size_t offset = 0; offset < z->batch_bytes; offset += block_bytes, used++) {
        pgz_job *job = &z->jobs[used];
        job->input = z->batch + offset;
        job->input_bytes = z->batch_bytes - offset < block_bytes ? z->batch_bytes - offset : block_bytes;
        job->dictionary = offset ? job->input - window_bytes : z->history;
        job->dictionary_bytes = offset ? window_bytes : z->history_bytes;
    }
    vl_run_parallel(compress_block, z->jobs, sizeof z->jobs[0], used);
    vl_status status = VL_OK;
    for (int t = 0; t < used && status == VL_OK; t++) {
        if (z->jobs[t].failed)
            return vl_fail(VL_ERR_INTERNAL, "%s: zlib could not compress a block", z->path);
        status = write_bytes(z, z->jobs[t].output, z->jobs[t].output_bytes);
        z->crc = crc32_combine(z->crc, z->jobs[t].crc, (z_off_t)z->jobs[t].input_bytes);
    }
    /* The next block's dictionary: the last 32 KiB of everything so far. */
    if (z->batch_bytes >= window_bytes) {
        memcpy(z->history, z->batch + z->batch_bytes - window_bytes, window_bytes);
        z->history_bytes = window_bytes;
    } else {
        const size_t room = window_bytes - z->batch_bytes;
        const size_t keep = room < z->history_bytes ? room : z->history_bytes;
        memmove(z->history, z->history + z->history_bytes - keep, keep);
        memcpy(z->history + keep, z->batch, z->batch_bytes);
        z->history_bytes = keep + z->batch_bytes;
    }
    z->total += z->batch_bytes;
    z->batch_bytes = 0;
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
    const size_t capacity = (size_t)z->threads * block_bytes;
    while (bytes > 0) {
        size_t piece = capacity - z->batch_bytes < bytes ? capacity - z->batch_bytes : bytes;
        memcpy(z->batch + z->batch_bytes, cursor, piece);
        z->batch_bytes += piece;
        cursor += piece;
        bytes -= piece;
        if (z->batch_bytes == capacity) {
            vl_status status = flush_batch(z);
            if (status != VL_OK)
                return status;
        }
    }
    return VL_OK;
}

vl_status vl_pgz_close(vl_pgz *z, int finish)
{
    vl_status status = VL_OK;
    if (finish) {
        status = flush_batch(z);
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
