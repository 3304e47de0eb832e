/* voxlabel label's pipeline as a function, so that voxlabel batch runs exactly it on every series:
 * the label options are parsed once (cli/cmd_label.c) and the run is repeated with other paths. */
#ifndef VL_LABEL_RUN_H
#define VL_LABEL_RUN_H

#include <stdint.h>

#include "cli_input.h"
#include "label_summary.h"
#include "voxlabel/series.h"

typedef struct label_arguments label_arguments; /* defined in cli/cmd_label.c */

enum { LABEL_RUN_LARGEST = 5 };

/* What voxlabel batch hands to a run and gets back from it. */
typedef struct label_run_batch {
    cli_input *input;             /* in: the series, already loaded; label_run frees it */
    const char *options_hash;     /* in: written into summary.json, which then holds no timings */
    int write_threads;            /* in: threads compressing the labels file (0: every core) */
    vl_series_engine *engine;     /* in: device buffers kept from series to series; with it, a plain threshold
                                   * (no --model, --open, --close, --min-size, --largest, --preview) is
                                   * thresholded, labelled and measured in one vl_series_label call */
    /* out: the CT's voxels, handed back instead of freed (batch decodes CTs into memory it reuses): by
     * label_run_compute once the series is measured or has failed, except with --preview, when label_run_write
     * hands them back after drawing; the caller owns them */
    void *spent_voxels;
    /* out, on success: */
    uint32_t components;
    uint64_t foreground_voxels;
    double voxel_volume_mm3;
    double largest_ml[LABEL_RUN_LARGEST]; /* the largest components' volumes, largest first */
    int largest_count;
    const char *device_used;      /* "cpu" or "gpu" */
    label_timings timings;
} label_run_batch;

/* Parses `voxlabel label` arguments (argv[0] is the command name) into a new label_arguments (free() it);
 * NULL with *code set (the usage error printed) when they are wrong. */
label_arguments *label_arguments_parse(int argc, char **argv, int *code);
/* What to read (named in summary.json and messages), where to write, whether to replace existing outputs. */
void label_arguments_set_target(label_arguments *args, const char *input_path, const char *output_directory, int force);
/* The --series, --on-irregular, --raw-* part. */
const cli_input_options *label_arguments_input(const label_arguments *args);
/* --device. */
const vl_device *label_arguments_device(const label_arguments *args);
/* "labels.nii.gz", ... as the options choose. */
const char *label_arguments_labels_file(const label_arguments *args, char *buffer, size_t size);

/* Runs the label pipeline; `batch` NULL for `voxlabel label` itself. Returns 0 or the exit code after
 * printing the error line. */
int label_run(const label_arguments *arguments, label_run_batch *batch);

/* label_run in two halves, so that voxlabel batch writes one series while it labels the next:
 * label_run_compute checks the output targets, thresholds, labels, filters and measures, and hands back
 * *staged (the labels, statistics and the input's header; the CT voxels go to batch->spent_voxels unless
 * --preview, for which label_run_write hands them back);
 * label_run_write writes and commits the outputs and frees *staged, whichever way it ends. Either may run on
 * any thread; label_run is the one then the other. */
typedef struct label_staged label_staged;
int label_run_compute(const label_arguments *arguments, label_run_batch *batch, label_staged **staged);
int label_run_write(label_staged *staged, label_run_batch *batch);

#endif
