#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "batch_blocks.h"
#include "batch_cohort.h"
#include "batch_events.h"
#include "batch_pipeline.h"
#include "batch_queue.h"
#include "cli.h"
#include "cli_clock.h"
#include "voxlabel/atomic_file.h"

typedef struct loaded_series {
    size_t index;                   /* into list */
    cli_input input;
    vl_status status;
    char error[1024];
    double read_seconds;
    batch_block block;              /* the block holding the CT's voxels */
} loaded_series;

/* A series labelled and measured (or failed), waiting for the writer. */
typedef struct finished_series {
    size_t index, position;
    char directory[VL_PATH_MAX];
    label_staged *staged;           /* the outputs to write; NULL when the series failed */
    label_run_batch run;
    int code;                       /* the failure's exit code, 0 while all is well */
    char error[1024];
    char *warnings;                 /* "; "-joined */
    int has_size;
    int64_t size[3];
    double spacing[3];
    double read_seconds;
    batch_block block;              /* the CT's block, handed back by the writer with --preview */
} finished_series;

/* reader -> labeller (loaded, `depth` + 1 tokens) -> writers (finished, `write_depth` + 1 tokens). Several
 * writers finish series out of order, so a finished series takes any free slot rather than slot n % tokens. */
typedef struct pipeline {
    const batch_work *work;
    loaded_series *loaded;
    finished_series *finished;
    int *slot_busy;                 /* per finished slot: taken by a series not yet written */
    batch_queue to_label, to_write;
    batch_blocks blocks;            /* CT voxel blocks between series */
    struct timespec started;
    pthread_mutex_t lock;           /* guards slot_busy, taken and worst */
    size_t taken;                   /* series the writers have taken so far */
    int worst;                      /* the writers' largest exit code */
} pipeline;

/* The CT voxels of a series of the scan, as i16 (the reader's type for CT). */
static size_t ct_bytes(const batch_series *series)
{
    return (size_t)series->info->columns * (size_t)series->info->rows * (size_t)series->info->slice_count * 2;
}

static void load_series(const batch_work *work, batch_blocks *blocks, size_t index, loaded_series *slot)
{
    const batch_series *series = &work->list->items[index];
    const cli_input_options *input = label_arguments_input(work->arguments);
    vl_dicom_read_options read;
    vl_dicom_read_options_default(&read);
    read.on_irregular = input->on_irregular;
    read.threads = work->read_threads;
    memset(slot, 0, sizeof *slot);
    slot->index = index;
    slot->input.kind = "dicom";
    slot->input.has_report = 1;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    const batch_block block = batch_blocks_take(blocks, ct_bytes(series));
    read.reuse = block.data;
    read.reuse_bytes = block.bytes;
    slot->status = vl_dicom_read_series_files((const char *const *)series->info->paths, series->info->path_count,
                                              series->source, &read, &slot->input.volume, &slot->input.report);
    slot->read_seconds = cli_seconds_since(&start);
    const vl_volume *ct = &slot->input.volume;
    if (slot->status == VL_OK && ct->data == block.data) {
        slot->block = block;
        return;
    }
    batch_blocks_give(blocks, block); /* unused: the read failed, or the CT is a float or resampled one */
    if (slot->status != VL_OK) {
        snprintf(slot->error, sizeof slot->error, "%s", vl_last_error());
        vl_volume_free(&slot->input.volume);
    } else {
        slot->block = (batch_block){ct->data, (size_t)vl_volume_voxels(ct) * vl_dtype_size(ct->dtype)};
    }
}

static void *reader(void *argument)
{
    pipeline *p = argument;
    for (size_t next = 0; next < p->work->pending_count; next++) {
        batch_queue_reserve(&p->to_label);
        loaded_series *slot = &p->loaded[next % p->to_label.capacity];
        load_series(p->work, &p->blocks, p->work->pending[next], slot);
        batch_queue_push(&p->to_label, slot);
    }
    return NULL;
}

int batch_make_directories(const char *path)
{
    char partial[VL_PATH_MAX];
    snprintf(partial, sizeof partial, "%s", path);
    for (char *slash = partial + 1; *slash; slash++) {
        if (*slash != '/')
            continue;
        *slash = '\0';
        if (mkdir(partial, 0755) != 0 && errno != EEXIST)
            return -1;
        *slash = '/';
    }
    return mkdir(partial, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The series' warnings, "; "-joined, and printed on stderr under its folder. */
static char *collect_warnings(const batch_series *series, const cli_input *input)
{
    char *text = NULL;
    size_t bytes = 0;
    FILE *out = open_memstream(&text, &bytes);
    if (!out)
        return NULL;
    size_t written = 0;
    for (size_t w = 0; input->has_report && w < input->report.warning_count; w++, written++) {
        fprintf(out, "%s%s", written ? "; " : "", input->report.warnings[w]);
        cli_warning("%s: %s", series->folder, input->report.warnings[w]);
    }
    fclose(out);
    return text;
}

/* Gives the CT's block back to the pool once `spent` (what a run handed back) is its voxels. */
static void give_back(batch_blocks *blocks, void *spent, batch_block block)
{
    if (spent == block.data)
        batch_blocks_give(blocks, block);
    else
        free(spent); /* not a block: the run's own copy */
}

/* Labels and measures one loaded series into `finished` (or records why it could not be read or labelled),
 * and gives the loaded CT's block back (with --preview, the writer does once the preview is drawn). */
static void compute(const batch_work *work, vl_series_engine *engine, batch_blocks *blocks, loaded_series *loaded,
                    size_t position, finished_series *finished)
{
    const batch_series *series = &work->list->items[loaded->index];
    finished->index = loaded->index;
    finished->position = position;
    finished->staged = NULL;
    finished->run =
        (label_run_batch){.input = &loaded->input, .options_hash = work->options_hash,
                          .write_threads = work->write_threads, .engine = engine};
    finished->code = 0;
    finished->error[0] = '\0';
    finished->warnings = NULL;
    finished->has_size = 0;
    finished->read_seconds = loaded->read_seconds;
    finished->block = loaded->block;
    snprintf(finished->directory, sizeof finished->directory, "%s/%s", work->out_directory, series->folder);
    if (batch_make_directories(finished->directory) != 0) {
        finished->code = cli_error(CLI_EXIT_OUTPUT, "%s: cannot create the series folder: %s", finished->directory,
                                   strerror(errno));
        snprintf(finished->error, sizeof finished->error, "%s", cli_last_error());
    } else if (loaded->status != VL_OK) {
        snprintf(finished->error, sizeof finished->error, "%s", loaded->error);
        finished->code = cli_error(vl_status_exit_code(loaded->status), "%s: %s", series->folder, loaded->error);
    } else {
        finished->has_size = 1;
        finished->size[0] = loaded->input.volume.nx, finished->size[1] = loaded->input.volume.ny;
        finished->size[2] = loaded->input.volume.nz;
        memcpy(finished->spacing, loaded->input.volume.geometry.spacing, sizeof finished->spacing);
        label_arguments_set_target(work->arguments, series->source, finished->directory, 1);
        finished->warnings = collect_warnings(series, &loaded->input); /* before the run, which takes the input over */
        finished->code = label_run_compute(work->arguments, &finished->run, &finished->staged);
        if (finished->code)
            snprintf(finished->error, sizeof finished->error, "%s", cli_last_error());
        give_back(blocks, finished->run.spent_voxels, loaded->block);
        finished->run.spent_voxels = NULL;
    }
    finished->run.input = NULL;
    /* Not handed to a run (the series folder could not be made): the CT's block goes back all the same. */
    give_back(blocks, loaded->input.volume.data, loaded->block);
    loaded->input.volume.data = NULL;
    cli_input_free(&loaded->input);
}

/* Writes a finished series' outputs, then its cohort row, event and progress line; returns 0 or the
 * failure's exit code. */
static int finish(const batch_work *work, batch_blocks *blocks, finished_series *finished,
                  const struct timespec *started)
{
    const batch_series *series = &work->list->items[finished->index];
    const size_t position = finished->position;
    label_run_batch run = finished->run;
    batch_row row = {.series = series, .options_hash = work->options_hash};
    label_timings timings = {.read = finished->read_seconds};
    char *warnings = finished->warnings;
    const char *error = finished->error;
    int code = finished->code;
    if (finished->staged) {
        code = label_run_write(finished->staged, &run);
        finished->staged = NULL;
        give_back(blocks, run.spent_voxels, finished->block); /* the CT a preview was drawn from */
        run.spent_voxels = NULL;
        if (code) {
            snprintf(finished->error, sizeof finished->error, "%s", cli_last_error());
        } else if (run.components == 0 && warnings) {
            char *longer = NULL;
            if (asprintf(&longer, "%s%sthe threshold selects no voxels", warnings, warnings[0] ? "; " : "") >= 0) {
                free(warnings);
                warnings = longer;
            }
        }
    }
    if (code == 0) {
        timings = run.timings;
        timings.read = finished->read_seconds;
        timings.total = run.timings.total + finished->read_seconds;
        row.status = "done";
        row.has_size = finished->has_size;
        memcpy(row.size, finished->size, sizeof row.size);
        memcpy(row.spacing, finished->spacing, sizeof row.spacing);
        row.has_result = 1;
        row.components = run.components;
        row.foreground_voxels = run.foreground_voxels;
        row.foreground_ml = (double)run.foreground_voxels * run.voxel_volume_mm3 / 1000.0;
        row.largest_count = run.largest_count;
        memcpy(row.largest_ml, run.largest_ml, sizeof row.largest_ml);
        row.device = run.device_used;
    } else {
        timings.total = finished->read_seconds;
        row.status = "failed";
        row.reason = error;
    }
    row.warnings = warnings;
    vl_status recorded = batch_row_record(finished->directory, &row, &timings);
    if (recorded != VL_OK) {
        int record_code = cli_status_error(recorded);
        code = code > record_code ? code : record_code;
    }
    char *fields = NULL;
    batch_json_string(&fields, "folder", series->folder);
    batch_json_string(&fields, "series_uid", series->info->series_uid);
    batch_json_string(&fields, "status", row.status);
    if (code) {
        batch_json_string(&fields, "error", error);
    } else {
        batch_json_number(&fields, "components", run.components);
        batch_json_number(&fields, "foreground_ml", row.foreground_ml);
        batch_json_string(&fields, "device", run.device_used);
    }
    const double stages[] = {timings.read, timings.threshold, timings.label, timings.filter, timings.stats,
                             timings.write, timings.total};
    const char *const names[] = {"read_s", "threshold_s", "label_s", "filter_s", "stats_s", "write_s", "seconds"};
    for (int i = 0; i < 7; i++)
        batch_json_number(&fields, names[i], stages[i]);
    batch_event("series", fields);
    free(fields);
    free(warnings);
    finished->warnings = NULL;
    if (!work->quiet) {
        /* The rest at this worker's pace so far. */
        const double left = cli_seconds_since(started) / (double)(position + 1) *
                            (double)(work->pending_count - position - 1);
        char eta[32] = "";
        if (position + 1 < work->pending_count)
            snprintf(eta, sizeof eta, "; about %d:%02d left", (int)(left / 60), (int)left % 60);
        if (code == 0)
            fprintf(stderr, "voxlabel: %s[%zu/%zu] %s: %u component%s, %.2f s (read %.2f, label %.2f, write %.2f)%s\n",
                    work->worker_name, position + 1, work->pending_count, series->folder, run.components,
                    run.components == 1 ? "" : "s", timings.total, timings.read, timings.label, timings.write, eta);
        else
            fprintf(stderr, "voxlabel: %s[%zu/%zu] %s: failed%s\n", work->worker_name, position + 1,
                    work->pending_count, series->folder, eta);
    }
    return code;
}

/* One of the writer threads: each takes the next labelled series in turn and writes it whole. */
static void *writer(void *argument)
{
    pipeline *p = argument;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        const int more = p->taken < p->work->pending_count;
        p->taken += more;
        pthread_mutex_unlock(&p->lock);
        if (!more)
            return NULL;
        finished_series *finished = batch_queue_pop(&p->to_write);
        const int code = finish(p->work, &p->blocks, finished, &p->started);
        pthread_mutex_lock(&p->lock);
        p->worst = code > p->worst ? code : p->worst;
        p->slot_busy[finished - p->finished] = 0;
        pthread_mutex_unlock(&p->lock);
        batch_queue_release(&p->to_write);
    }
}

/* A free slot for the next labelled series; the caller holds a write token, so there is one. */
static finished_series *take_slot(pipeline *p, size_t slots)
{
    pthread_mutex_lock(&p->lock);
    size_t slot = 0;
    while (slot + 1 < slots && p->slot_busy[slot])
        slot++;
    p->slot_busy[slot] = 1;
    pthread_mutex_unlock(&p->lock);
    return &p->finished[slot];
}

int batch_work_run(const batch_work *work)
{
    if (!work->pending_count)
        return 0;
    /* Tokens: the series being labelled plus `depth` read ahead of it; the series being labelled plus
     * `write_depth` labelled ahead of it, waiting or being written by `write_depth` writer threads (a writer's
     * time goes mostly to waiting for the disk to take each file, fsync, so several overlap). write_depth 0:
     * each series is written on this thread. */
    const size_t read_tokens = (size_t)(work->depth > 0 ? work->depth : 0) + 1;
    const size_t write_tokens = (size_t)(work->write_depth > 0 ? work->write_depth : 0) + 1;
    pipeline p = {.work = work};
    p.loaded = calloc(read_tokens, sizeof *p.loaded);
    p.finished = calloc(write_tokens, sizeof *p.finished);
    p.slot_busy = calloc(write_tokens, sizeof *p.slot_busy);
    size_t largest_ct = 0;
    for (size_t k = 0; k < work->pending_count; k++) {
        const size_t bytes = ct_bytes(&work->list->items[work->pending[k]]);
        largest_ct = bytes > largest_ct ? bytes : largest_ct;
    }
    /* The labelling thread's device buffers, kept for every series (without one, the stages run one by one); it
     * also pins the CT blocks when the labels are made on a GPU. */
    vl_series_engine *engine = NULL;
    if (vl_series_engine_create(&engine) != VL_OK)
        engine = NULL;
    pthread_mutex_init(&p.lock, NULL);
    const int have_blocks =
        batch_blocks_init(&p.blocks, read_tokens, largest_ct, engine, label_arguments_device(work->arguments)) == 0;
    const int have_read_queue =
        have_blocks && p.loaded && p.finished && p.slot_busy && batch_queue_init(&p.to_label, read_tokens) == 0;
    const int have_write_queue = have_read_queue && batch_queue_init(&p.to_write, write_tokens) == 0;
    pthread_t reader_thread, writer_threads[BATCH_MAX_WRITERS];
    if (!have_write_queue || pthread_create(&reader_thread, NULL, reader, &p) != 0) {
        if (have_write_queue)
            batch_queue_destroy(&p.to_write);
        if (have_read_queue)
            batch_queue_destroy(&p.to_label);
        if (have_blocks)
            batch_blocks_destroy(&p.blocks);
        vl_series_engine_free(engine);
        pthread_mutex_destroy(&p.lock);
        free(p.loaded);
        free(p.finished);
        free(p.slot_busy);
        return cli_error(CLI_EXIT_DEVICE, "batch: cannot start the pipeline (out of memory or threads)");
    }
    clock_gettime(CLOCK_MONOTONIC, &p.started);
    /* Without a writer thread (write_depth 0, or none to be had) this thread writes each series itself. */
    const int wanted = work->write_depth < BATCH_MAX_WRITERS ? work->write_depth : BATCH_MAX_WRITERS;
    int writers = 0;
    while (writers < wanted && pthread_create(&writer_threads[writers], NULL, writer, &p) == 0)
        writers++;
    const int write_behind = writers > 0;
    int worst = 0;
    for (size_t position = 0; position < work->pending_count; position++) {
        loaded_series *loaded = batch_queue_pop(&p.to_label);
        if (write_behind)
            batch_queue_reserve(&p.to_write);
        finished_series *finished = write_behind ? take_slot(&p, write_tokens) : &p.finished[0];
        compute(work, engine, &p.blocks, loaded, position, finished);
        if (write_behind) {
            batch_queue_release(&p.to_label);
            batch_queue_push(&p.to_write, finished);
        } else {
            /* Written before the read token goes back: with --prefetch 0 each series is read, labelled and
             * written alone. */
            const int code = finish(work, &p.blocks, finished, &p.started);
            worst = code > worst ? code : worst;
            batch_queue_release(&p.to_label);
        }
    }
    for (int w = 0; w < writers; w++)
        pthread_join(writer_threads[w], NULL);
    worst = p.worst > worst ? p.worst : worst;
    pthread_join(reader_thread, NULL);
    batch_queue_destroy(&p.to_write);
    batch_queue_destroy(&p.to_label);
    batch_blocks_destroy(&p.blocks); /* unpinned through the engine, so before it goes */
    vl_series_engine_free(engine);
    pthread_mutex_destroy(&p.lock);
    free(p.loaded);
    free(p.finished);
    free(p.slot_busy);
    return worst;
}
