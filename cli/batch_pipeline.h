/* voxlabel batch's worker, a pipeline of threads: a reader loads (reads and decodes) the next series while
 * this thread labels and measures the current one and `write_depth` writers write the outputs of the previous
 * ones, each writer a whole series. At most `depth` loaded series wait ahead of the one being labelled and
 * `write_depth` labelled ones are waiting or being written, so the volumes alive at once are at most depth + 1
 * CTs (the labeller hands each CT's block back to the reader once measured, cli/batch_blocks.h; with --preview
 * it goes on to the writer) and write_depth + 1 label maps, plus the mask of the series being labelled. */
#ifndef VL_BATCH_PIPELINE_H
#define VL_BATCH_PIPELINE_H

#include <stddef.h>

#include "batch_series.h"
#include "label_run.h"

enum { BATCH_MAX_WRITERS = 8 };

typedef struct batch_work {
    const char *out_directory;
    const batch_series_list *list;
    const size_t *pending;          /* indices into list, in processing order */
    size_t pending_count;
    label_arguments *arguments;
    const char *options_hash;
    int depth;                      /* series loaded ahead (0: each loaded when its turn comes) */
    int write_depth;                /* series labelled ahead of the writers, and writer threads (at most
                                     * BATCH_MAX_WRITERS; 0: each series written by the labeller) */
    int read_threads;               /* DICOM decoding threads */
    int write_threads;              /* threads compressing each labels file (0: every core) */
    int quiet;                      /* no per-series progress lines */
    const char *worker_name;        /* "" or "job 2/4: " in progress lines */
} batch_work;

/* Processes every pending series, recording each as done or failed; returns 0 when all were labelled, else
 * the largest exit code among the failures (3 input, 4 output, 5 device or memory). */
int batch_work_run(const batch_work *work);

/* mkdir -p; 0 or -1 with errno. */
int batch_make_directories(const char *path);

#endif
