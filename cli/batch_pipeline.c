#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "batch_cohort.h"
#include "batch_events.h"
#include "batch_pipeline.h"
#include "cli.h"
#include "cli_clock.h"
#include "voxlabel/atomic_file.h"

typedef struct loaded_series {
    size_t index;                   /* into list */
    cli_input input;
    vl_status status;
    char error[1024];
    double read_seconds;
} loaded_series;

/* A ring of `capacity` slots between the reader (producer) and the labeller (consumer). */
typedef struct pipeline {
    const batch_work *work;
    loaded_series *slots;
    size_t capacity, head, count, produced;
    int stop;
    pthread_mutex_t lock;
    pthread_cond_t changed;
} pipeline;

static void load_series(const batch_work *work, size_t index, loaded_series *slot)
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
    slot->status = vl_dicom_read_series_files((const char *const *)series->info->paths, series->info->path_count,
                                              series->source, &read, &slot->input.volume, &slot->input.report);
    slot->read_seconds = cli_seconds_since(&start);
    if (slot->status != VL_OK) {
        snprintf(slot->error, sizeof slot->error, "%s", vl_last_error());
        vl_volume_free(&slot->input.volume);
    }
}

static void *reader(void *argument)
{
    pipeline *p = argument;
    for (size_t next = 0; next < p->work->pending_count; next++) {
        pthread_mutex_lock(&p->lock);
        while (p->count == p->capacity && !p->stop)
            pthread_cond_wait(&p->changed, &p->lock);
        const int stop = p->stop;
        const size_t slot = (p->head + p->count) % p->capacity;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            break;
        /* The slot is free and only this thread fills it. */
        load_series(p->work, p->work->pending[next], &p->slots[slot]);
        pthread_mutex_lock(&p->lock);
        p->count++;
        p->produced++;
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->lock);
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

static int exit_code_of(vl_status status)
{
    return vl_status_exit_code(status);
}

/* Labels one loaded series (or records why it could not be read); returns 0 or the failure's exit code. */
static int process(const batch_work *work, loaded_series *loaded, size_t position, const struct timespec *started)
{
    const batch_series *series = &work->list->items[loaded->index];
    char directory[VL_PATH_MAX];
    snprintf(directory, sizeof directory, "%s/%s", work->out_directory, series->folder);
    batch_row row = {.series = series, .options_hash = work->options_hash};
    label_timings timings = {.read = loaded->read_seconds};
    label_run_batch run = {.input = &loaded->input, .options_hash = work->options_hash};
    char error[1024] = "";
    char *warnings = NULL;
    int code = 0;
    if (batch_make_directories(directory) != 0) {
        code = cli_error(CLI_EXIT_OUTPUT, "%s: cannot create the series folder: %s", directory, strerror(errno));
        snprintf(error, sizeof error, "%s", cli_last_error());
    } else if (loaded->status != VL_OK) {
        snprintf(error, sizeof error, "%s", loaded->error);
        code = cli_error(exit_code_of(loaded->status), "%s: %s", series->folder, loaded->error);
    } else {
        row.has_size = 1;
        row.size[0] = loaded->input.volume.nx, row.size[1] = loaded->input.volume.ny;
        row.size[2] = loaded->input.volume.nz;
        memcpy(row.spacing, loaded->input.volume.geometry.spacing, sizeof row.spacing);
        label_arguments_set_target(work->arguments, series->source, directory, 1);
        warnings = collect_warnings(series, &loaded->input); /* before the run, which takes the input over */
        code = label_run(work->arguments, &run);
        if (code) {
            snprintf(error, sizeof error, "%s", cli_last_error());
        } else if (run.components == 0 && warnings) {
            char *longer = NULL;
            if (asprintf(&longer, "%s%sthe threshold selects no voxels", warnings, warnings[0] ? "; " : "") >= 0) {
                free(warnings);
                warnings = longer;
            }
        }
    }
    cli_input_free(&loaded->input);
    if (code == 0) {
        timings = run.timings;
        timings.read = loaded->read_seconds;
        timings.total = run.timings.total + loaded->read_seconds;
        row.status = "done";
        row.has_result = 1;
        row.components = run.components;
        row.foreground_voxels = run.foreground_voxels;
        row.foreground_ml = (double)run.foreground_voxels * run.voxel_volume_mm3 / 1000.0;
        row.largest_count = run.largest_count;
        memcpy(row.largest_ml, run.largest_ml, sizeof row.largest_ml);
        row.device = run.device_used;
    } else {
        timings.total = loaded->read_seconds;
        row.status = "failed";
        row.reason = error;
        row.has_size = 0;
    }
    row.warnings = warnings;
    vl_status recorded = batch_row_record(directory, &row, &timings);
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

int batch_work_run(const batch_work *work)
{
    if (!work->pending_count)
        return 0;
    /* One slot for the series being labelled, `depth` for those loaded ahead of it. */
    pipeline p = {.work = work, .capacity = (size_t)(work->depth > 0 ? work->depth : 0) + 1};
    p.slots = calloc(p.capacity, sizeof *p.slots);
    if (!p.slots)
        return cli_error(CLI_EXIT_DEVICE, "batch: out of memory for the pipeline");
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.changed, NULL);
    pthread_t thread;
    if (pthread_create(&thread, NULL, reader, &p) != 0) {
        free(p.slots);
        return cli_error(CLI_EXIT_DEVICE, "batch: cannot start the reader thread");
    }
    int worst = 0;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (size_t position = 0; position < work->pending_count; position++) {
        pthread_mutex_lock(&p.lock);
        while (p.count == 0)
            pthread_cond_wait(&p.changed, &p.lock);
        loaded_series *loaded = &p.slots[p.head];
        pthread_mutex_unlock(&p.lock);
        const int code = process(work, loaded, position, &started);
        worst = code > worst ? code : worst;
        pthread_mutex_lock(&p.lock);
        p.head = (p.head + 1) % p.capacity;
        p.count--;
        pthread_cond_broadcast(&p.changed);
        pthread_mutex_unlock(&p.lock);
    }
    pthread_join(thread, NULL);
    pthread_cond_destroy(&p.changed);
    pthread_mutex_destroy(&p.lock);
    free(p.slots);
    return worst;
}
