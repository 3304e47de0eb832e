/* voxlabel batch: cohort.csv (one row per series; columns in docs/cohorts.md), each labelled series' own
 * row (SERIES/series.csv, written last: its presence marks the series complete) and timings (SERIES/timings.json),
 * and --merge of shard tables. cohort.csv is a pure function of the series folders and the scan, except its
 * last column, seconds, which comes from timings.json. */
#ifndef VL_BATCH_COHORT_H
#define VL_BATCH_COHORT_H

#include <stdint.h>
#include <stdio.h>

#include "batch_series.h"
#include "label_summary.h"

typedef struct batch_row {
    const batch_series *series;
    const char *status;            /* "done", "failed" or "skipped" */
    const char *reason;            /* skip reason or error line */
    int has_size;                  /* size and spacing of the labelled volume (else the scan's) */
    int64_t size[3];
    double spacing[3];
    int has_result;
    uint32_t components;
    uint64_t foreground_voxels;
    double foreground_ml;
    double largest_ml[5];
    int largest_count;
    const char *warnings;          /* "; "-joined */
    const char *options_hash;
    const char *device;
} batch_row;

/* Writes SERIES/timings.json, then SERIES/series.csv (header and row), each atomically. */
vl_status batch_row_record(const char *series_directory, const batch_row *row, const label_timings *timings);

/* 1 when SERIES/series.csv says done with `options_hash` and `labels_file`, components.csv and summary.json
 * are there; -1 when it says done with other options; 0 otherwise (missing, failed, partial). */
int batch_series_complete(const char *series_directory, const char *options_hash, const char *labels_file);

/* Writes `path` (cohort.csv or a shard's table) for the series of `list` in shard/shards, reading each
 * labelled series' row from OUT/FOLDER/series.csv. */
vl_status batch_cohort_write(const char *path, const char *out_directory, const batch_series_list *list, int shard,
                             int shards, const char *options_hash, int *failed_count);

/* Combines shard tables (cohort-shard-I-of-N.csv in each directory) into `path`. */
vl_status batch_cohort_merge(const char *path, const char *const *directories, int count);

#endif
