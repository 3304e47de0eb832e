/* Formatting the rows of components.csv / JSON on every core: a full table of 171 k components holds
 * millions of fields (format_number.c writes them without printf). Rows are formatted in chunks, one per
 * thread, and the chunks are written in order, so the file is byte for byte the same as a serial
 * writer's. */
#include <stdlib.h>

#include "voxlabel/atomic_file.h"
#include "core/parallel.h"
#include "stats/stats_columns.h"
#include "voxlabel/error.h"

enum { rows_per_chunk = 2048 };

typedef struct chunk_job {
    const vl_row_writer *writer;
    uint32_t first, end;
    char *text;
    size_t length, capacity;
    int failed;
} chunk_job;

static void *format_chunk(void *argument)
{
    chunk_job *job = argument;
    job->length = 0;
    for (uint32_t row = job->first; row < job->end; row++) {
        if (job->capacity - job->length < job->writer->row_capacity) {
            size_t capacity = job->capacity * 2 + job->writer->row_capacity * 64;
            char *text = realloc(job->text, capacity);
            if (!text) {
                job->failed = 1;
                return NULL;
            }
            job->text = text;
            job->capacity = capacity;
        }
        job->length += job->writer->format(job->writer->context, row, job->text + job->length);
    }
    return NULL;
}

static vl_status write_rows(FILE *out, uint32_t count, const vl_row_writer *writer)
{
    chunk_job jobs[VL_MAX_THREADS] = {{0}};
    const int threads = vl_cpu_thread_count(0);
    vl_status status = VL_OK;
    int write_failed = 0;
    for (uint64_t first = 0; first < count && status == VL_OK && !write_failed;) {
        int used = 0;
        for (; used < threads && first < count; used++) {
            jobs[used].writer = writer;
            jobs[used].first = (uint32_t)first;
            first = first + rows_per_chunk < count ? first + rows_per_chunk : count;
            jobs[used].end = (uint32_t)first;
        }
        vl_run_parallel(format_chunk, jobs, sizeof jobs[0], used);
        /* A failed write stops here; the stream's error flag reports it when the file is closed. */
        for (int t = 0; t < used && status == VL_OK && !write_failed; t++) {
            if (jobs[t].failed)
                status = vl_fail(VL_ERR_MEMORY, "stats: no memory to format %u rows", (unsigned)rows_per_chunk);
            else
                write_failed = fwrite(jobs[t].text, 1, jobs[t].length, out) != jobs[t].length;
        }
    }
    for (int t = 0; t < threads; t++)
        free(jobs[t].text);
    return status;
}

vl_status vl_write_table(const char *path, int force, const char *head, uint32_t count, const vl_row_writer *writer,
                         const char *tail)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, force, "w", &out);
    if (status != VL_OK)
        return status;
    /* Short writes show in the stream's error flag, which closing the stream checks. */
    fputs(head, out);
    status = write_rows(out, count, writer);
    fputs(tail, out);
    return vl_atomic_file_close_stream(&file, out, status);
}
