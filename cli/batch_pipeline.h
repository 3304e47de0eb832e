/* voxlabel batch's worker: a reader thread loads (reads and decodes) the next series while this thread labels
 * the current one, measures it and writes its outputs; `depth` loaded series may wait, ready, at most. */
#ifndef VL_BATCH_PIPELINE_H
#define VL_BATCH_PIPELINE_H

#include <stddef.h>

#include "batch_series.h"
#include "label_run.h"

typedef struct batch_work {
    const char *out_directory;
    const batch_series_list *list;
    const size_t *pending;          /* indices into list, in processing order */
    size_t pending_count;
    label_arguments *arguments;
    const char *options_hash;
    int depth;                      /* series loaded ahead (0: each loaded when its turn comes) */
    int read_threads;               /* DICOM decoding threads */
    int quiet;                      /* no per-series progress lines */
    const char *worker_name;        /* "" or "job 2/4: " in progress lines */
} batch_work;

/* Processes every pending series, recording each as done or failed; returns 0 when all were labelled, else
 * the largest exit code among the failures (3 input, 4 output, 5 device or memory). */
int batch_work_run(const batch_work *work);

/* mkdir -p; 0 or -1 with errno. */
int batch_make_directories(const char *path);

#endif
