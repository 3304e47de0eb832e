/* Parallel gzip for .nii.gz and gzip-encoded NRRD: one standard gzip member (gunzip, zlib's gzread, Python's
 * gzip and zlib.decompress, Java's GZIPInputStream, Rust's GzDecoder read all of it), compressed on every core;
 * and the same deflate stream in a zlib wrapper (RFC 1950, Adler-32) for compressed MetaImage.
 *
 * The stream is cut into chunks of a fixed number of voxels (the first also carries the prefix, e.g. the NIfTI
 * header). Each chunk is raw deflate from a reset state, so chunks are independent: a worker converts its
 * voxels to the disk type itself (no serial conversion pass), deflates them and ends with a sync flush
 * (byte-aligned, not final); the last chunk ends the stream. Checksums are joined with crc32_combine (or
 * adler32_combine). Workers take
 * chunks in turn from a counter and hand them to a ring of output slots that the thread finishing the oldest
 * chunk writes out in order, so any thread count gives the same bytes, and memory stays bounded by the ring.
 * The default level deflates with ISA-L's igzip (VL_PGZ_ISAL_LEVEL), several times zlib's speed at a similar
 * size; levels 2 to 9 ask for zlib's stronger match finder at that level. With zlib, label maps use the
 * run-length strategy: labels are long runs of one value, which it finds faster and stores smaller than the
 * general match finder; with a small memLevel (VL_PGZ_RLE_MEM_LEVEL) the hash table that zlib slides along the
 * window, unused by that strategy, is small, and blocks are shorter. */
#include <errno.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_helpers.h"

enum { chunk_bytes = 1 << 20, slots_per_thread = 2 };

typedef struct pgz_slot {
    unsigned char *output;
    size_t capacity; /* of output */
    size_t output_bytes, input_bytes;
    uint32_t check; /* CRC-32 (gzip) or Adler-32 (zlib) of the chunk's input */
    int64_t chunk; /* the chunk it holds, -1 when free */
    int ready;
} pgz_slot;

typedef struct pgz_shared {
    FILE *file;
    const char *path;
    const unsigned char *prefix;
    size_t prefix_bytes;
    const vl_volume *volume;
    vl_dtype dtype;
    size_t element;
    int64_t voxels, chunk_voxels, chunks;
    int level; /* 1 (the default): ISA-L's igzip at VL_PGZ_ISAL_LEVEL; 2..9: zlib at that level */
    int strategy, zlib_wrapper;
    size_t capacity; /* of each slot: the worst case of the largest chunk */
    const vl_progress *progress;
    _Atomic int64_t next; /* the next chunk to compress */
    pthread_mutex_t lock; /* guards the rest */
    pthread_cond_t changed;
    int64_t written; /* chunks written so far, in order */
    int slot_count;
    pgz_slot *slots;
    uint32_t check;
    uint64_t total;
    vl_status status;
    char message[1024]; /* the failure's text: vl_last_error() is per thread, and workers run on their own */
} pgz_shared;

typedef struct pgz_worker {
    pgz_shared *shared;
    z_stream stream;              /* zlib's state, once ready */
    struct isal_zstream igzip;    /* or ISA-L's, with its level buffer */
    unsigned char *igzip_buffer;
    int ready;
    unsigned char *converted; /* this worker's chunk in the disk type, when it differs from the volume's */
} pgz_worker;

/* Feeds `bytes` of `data` to the stream; `flush` on the last piece of a chunk. */
static int deflate_piece(z_stream *stream, const unsigned char *data, size_t bytes, int flush)
{
    stream->next_in = (Bytef *)data;
    stream->avail_in = (uInt)bytes;
    const int result = deflate(stream, flush);
    /* The slot has room for the worst case, so a complete chunk always leaves some of it free. */
    return (result == Z_OK || result == Z_STREAM_END) && stream->avail_in == 0 && stream->avail_out > 0;
}

uint32_t vl_pgz_igzip_buffer_bytes(int level)
{
    static const uint32_t bytes[4] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
                                      ISAL_DEF_LVL3_DEFAULT};
    return level >= 0 && level <= 3 ? bytes[level] : bytes[VL_PGZ_ISAL_LEVEL];
}

/* Deflates the chunk's prefix and voxels with ISA-L from a reset state into the slot (grown when igzip needs
 * more than the slot holds), ending with a sync flush, or the end of the stream on the last chunk. */
static int igzip_chunk(pgz_worker *worker, const unsigned char *prefix, size_t prefix_bytes,
                       const unsigned char *voxels, size_t voxel_bytes, int last, pgz_slot *slot)
{
    const uint32_t level_bytes = vl_pgz_igzip_buffer_bytes(VL_PGZ_ISAL_LEVEL);
    struct isal_zstream *stream = &worker->igzip;
    if (level_bytes && !worker->igzip_buffer && !(worker->igzip_buffer = malloc(level_bytes)))
        return 0;
    isal_deflate_init(stream);
    stream->level = VL_PGZ_ISAL_LEVEL;
    stream->level_buf = worker->igzip_buffer;
    stream->level_buf_size = level_bytes;
    stream->next_out = slot->output;
    stream->avail_out = (uint32_t)slot->capacity;
    const unsigned char *const pieces[2] = {prefix, voxels};
    const size_t sizes[2] = {prefix_bytes, voxel_bytes};
    for (int p = 0; p < 2; p++) {
        stream->next_in = (uint8_t *)pieces[p];
        stream->avail_in = (uint32_t)sizes[p];
        stream->flush = p == 1 && !last ? SYNC_FLUSH : NO_FLUSH;
        stream->end_of_stream = p == 1 && last;
        for (;;) {
            if (isal_deflate(stream) != COMP_OK)
                return 0;
            /* igzip stops when the input is taken and flushed, or when the output is full. */
            if (stream->avail_out > 0 && stream->avail_in == 0)
                break;
            const size_t used = slot->capacity - stream->avail_out, larger = slot->capacity * 2;
            unsigned char *grown = larger <= UINT32_MAX ? realloc(slot->output, larger) : NULL;
            if (!grown)
                return 0;
            slot->output = grown;
            slot->capacity = larger;
            stream->next_out = grown + used;
            stream->avail_out = (uint32_t)(larger - used);
        }
    }
    slot->output_bytes = slot->capacity - stream->avail_out;
    return 1;
}

static int compress_chunk(pgz_worker *worker, int64_t chunk, pgz_slot *slot)
{
    pgz_shared *z = worker->shared;
    const int64_t first = chunk * z->chunk_voxels;
    const int64_t count = z->voxels - first < z->chunk_voxels ? z->voxels - first : z->chunk_voxels;
    const size_t voxel_bytes = (size_t)count * z->element;
    const unsigned char *voxels = (const unsigned char *)z->volume->data + (size_t)first * z->element;
    if (z->dtype != z->volume->dtype && count > 0) {
        vl_convert_voxels(z->volume, first, count, z->dtype, worker->converted);
        voxels = worker->converted;
    }
    const unsigned char *prefix = chunk == 0 ? z->prefix : NULL;
    const size_t prefix_bytes = chunk == 0 ? z->prefix_bytes : 0;
    if (z->zlib_wrapper) {
        const uint32_t check = libdeflate_adler32(1, prefix, prefix_bytes);
        slot->check = libdeflate_adler32(check, voxels, voxel_bytes);
    } else {
        const uint32_t check = libdeflate_crc32(0, prefix, prefix_bytes);
        slot->check = libdeflate_crc32(check, voxels, voxel_bytes);
    }
    slot->input_bytes = prefix_bytes + voxel_bytes;
    if (!slot->output && !(slot->output = malloc(slot->capacity = z->capacity)))
        return 0;
    if (z->level == 1)
        return igzip_chunk(worker, prefix, prefix_bytes, voxels, voxel_bytes, chunk == z->chunks - 1, slot);

    z_stream *stream = &worker->stream;
    if (!worker->ready) {
        const int memory = z->strategy == Z_RLE ? VL_PGZ_RLE_MEM_LEVEL : 8;
        if (deflateInit2(stream, z->level, Z_DEFLATED, -15, memory, z->strategy) != Z_OK)
            return 0;
        worker->ready = 1;
    } else if (deflateReset(stream) != Z_OK) {
        return 0;
    }
    stream->next_out = slot->output;
    stream->avail_out = (uInt)z->capacity;
    const int flush = chunk == z->chunks - 1 ? Z_FINISH : Z_SYNC_FLUSH;
    const int ok = (!prefix_bytes || deflate_piece(stream, prefix, prefix_bytes, Z_NO_FLUSH)) &&
                   deflate_piece(stream, voxels, voxel_bytes, flush);
    slot->output_bytes = z->capacity - stream->avail_out;
    return ok;
}

static vl_status write_bytes(pgz_shared *z, const void *data, size_t bytes)
{
    errno = 0;
    if (fwrite(data, 1, bytes, z->file) != bytes) {
        char shown[VL_PATH_MAX];
        return vl_fail(VL_ERR_OUTPUT, "%s: write failed: %s", vl_output_name(z->path, shown, sizeof shown),
                       errno ? strerror(errno) : "disk full or I/O error");
    }
    return VL_OK;
}

/* With the lock held: records the first failure, raised on this thread by vl_fail. */
static void record_failure(pgz_shared *z, vl_status status)
{
    if (z->status != VL_OK || status == VL_OK)
        return;
    z->status = status;
    snprintf(z->message, sizeof z->message, "%s", vl_last_error());
}

/* With the lock held: writes the finished chunks that come next in the stream, freeing their slots. */
static void write_ready_chunks(pgz_shared *z)
{
    for (;;) {
        pgz_slot *slot = &z->slots[z->written % z->slot_count];
        if (slot->chunk != z->written || !slot->ready)
            return;
        if (z->status == VL_OK)
            record_failure(z, write_bytes(z, slot->output, slot->output_bytes));
        z->check = z->zlib_wrapper ? (uint32_t)adler32_combine(z->check, slot->check, (z_off_t)slot->input_bytes)
                                   : (uint32_t)crc32_combine(z->check, slot->check, (z_off_t)slot->input_bytes);
        z->total += slot->input_bytes;
        slot->chunk = -1;
        slot->ready = 0;
        z->written++;
        if (z->chunks > 1)
            vl_progress_report(z->progress, "writing", (double)z->written / (double)z->chunks);
        pthread_cond_broadcast(&z->changed);
    }
}

static void *worker_run(void *argument)
{
    pgz_worker *worker = argument;
    pgz_shared *z = worker->shared;
    for (;;) {
        const int64_t chunk = atomic_fetch_add(&z->next, 1);
        if (chunk >= z->chunks)
            break;
        pthread_mutex_lock(&z->lock);
        /* Chunk c goes to slot c mod slot_count, free once chunk c - slot_count is written. */
        while (z->status == VL_OK && chunk >= z->written + z->slot_count)
            pthread_cond_wait(&z->changed, &z->lock);
        const int failed = z->status != VL_OK;
        pgz_slot *slot = &z->slots[chunk % z->slot_count];
        if (!failed)
            slot->chunk = chunk;
        pthread_mutex_unlock(&z->lock);
        if (failed)
            break;
        const int ok = compress_chunk(worker, chunk, slot);
        pthread_mutex_lock(&z->lock);
        if (!ok && z->status == VL_OK)
            record_failure(z, vl_fail(VL_ERR_MEMORY, "%s: no memory to compress the voxels", z->path));
        slot->ready = 1;
        write_ready_chunks(z);
        pthread_cond_broadcast(&z->changed);
        pthread_mutex_unlock(&z->lock);
    }
    return NULL;
}

static vl_status write_volume(FILE *file, int zlib_wrapper, const void *prefix, size_t prefix_bytes,
                              const vl_volume *volume, vl_dtype dtype, const vl_write_options *options,
                              const char *path)
{
    pgz_shared z = {
        .file = file,
        .path = path,
        .prefix = prefix,
        .prefix_bytes = prefix_bytes,
        .volume = volume,
        .dtype = dtype,
        .element = vl_dtype_size(dtype),
        .voxels = vl_volume_voxels(volume),
        .level = options->compression_level >= 1 && options->compression_level <= 9 ? options->compression_level : 1,
        .strategy = options->is_label_map ? Z_RLE : Z_DEFAULT_STRATEGY,
        .zlib_wrapper = zlib_wrapper,
        .progress = &options->progress,
        .check = zlib_wrapper ? 1 : 0,
        .status = VL_OK,
    };
    z.chunk_voxels = (int64_t)(chunk_bytes / z.element);
    z.chunks = z.voxels > 0 ? (z.voxels + z.chunk_voxels - 1) / z.chunk_voxels : 1;
    /* Stored blocks at worst, a sync flush's empty block and the end of the stream. */
    z.capacity = compressBound((uLong)(chunk_bytes + prefix_bytes)) + 64;
    atomic_init(&z.next, 0);
    const int available = vl_cpu_thread_count(options->threads > 0 ? options->threads : 0);
    const int threads = (int)(z.chunks < available ? z.chunks : available);
    z.slot_count = slots_per_thread * threads;
    z.slots = calloc((size_t)z.slot_count, sizeof *z.slots);
    pgz_worker *workers = calloc((size_t)threads, sizeof *workers);
    int failed = !z.slots || !workers;
    for (int t = 0; t < threads && !failed; t++) {
        workers[t].shared = &z;
        if (dtype != volume->dtype && !(workers[t].converted = malloc(chunk_bytes)))
            failed = 1;
    }
    for (int s = 0; s < z.slot_count && !failed; s++)
        z.slots[s].chunk = -1;
    /* gzip member header: deflate, no name, no time, Unix. zlib header: deflate with a 32 KiB window, the level
     * class as zlib's deflate states it (informative only), no dictionary, the check bits. */
    static const unsigned char gzip_header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    const unsigned level_class = z.strategy >= Z_HUFFMAN_ONLY || z.level < 2 ? 0 : z.level < 6 ? 1 : z.level == 6 ? 2 : 3;
    unsigned char zlib_header[2] = {0x78, (unsigned char)(level_class << 6)};
    zlib_header[1] = (unsigned char)(zlib_header[1] + 31 - (0x78 * 256 + zlib_header[1]) % 31);
    vl_status status = failed ? vl_fail(VL_ERR_MEMORY, "%s: no memory for the gzip writer", path)
                       : zlib_wrapper ? write_bytes(&z, zlib_header, sizeof zlib_header)
                                      : write_bytes(&z, gzip_header, sizeof gzip_header);
    if (status == VL_OK) {
        pthread_mutex_init(&z.lock, NULL);
        pthread_cond_init(&z.changed, NULL);
        vl_run_parallel(worker_run, workers, sizeof workers[0], threads);
        pthread_cond_destroy(&z.changed);
        pthread_mutex_destroy(&z.lock);
        status = z.status == VL_OK ? VL_OK : vl_fail(z.status, "%s", z.message);
    }
    if (status == VL_OK && zlib_wrapper) {
        /* Adler-32, big endian. */
        const unsigned char trailer[4] = {(unsigned char)(z.check >> 24), (unsigned char)(z.check >> 16),
                                          (unsigned char)(z.check >> 8), (unsigned char)z.check};
        status = write_bytes(&z, trailer, sizeof trailer);
    } else if (status == VL_OK) {
        /* CRC-32 and length mod 2^32, little endian. */
        unsigned char trailer[8];
        for (int i = 0; i < 4; i++) {
            trailer[i] = (unsigned char)(z.check >> (8 * i));
            trailer[4 + i] = (unsigned char)(z.total >> (8 * i));
        }
        status = write_bytes(&z, trailer, sizeof trailer);
    }
    for (int t = 0; workers && t < threads; t++) {
        if (workers[t].ready)
            deflateEnd(&workers[t].stream);
        free(workers[t].igzip_buffer);
        free(workers[t].converted);
    }
    for (int s = 0; z.slots && s < z.slot_count; s++)
        free(z.slots[s].output);
    free(workers);
    free(z.slots);
    return status;
}

vl_status vl_pgz_write_volume(FILE *file, const void *prefix, size_t prefix_bytes, const vl_volume *volume,
                              vl_dtype dtype, const vl_write_options *options, const char *path)
{
    return write_volume(file, 0, prefix, prefix_bytes, volume, dtype, options, path);
}

vl_status vl_pzlib_write_volume(FILE *file, const vl_volume *volume, vl_dtype dtype, const vl_write_options *options,
                                const char *path)
{
    return write_volume(file, 1, NULL, 0, volume, dtype, options, path);
}
