/* summary.json of `voxlabel label`: what was read, how it was labelled, what came out, how long it took. */
#ifndef VL_LABEL_SUMMARY_H
#define VL_LABEL_SUMMARY_H

#include <stdio.h>

#include "cli_input.h"
#include "voxlabel/label.h"
#include "voxlabel/stats.h"

typedef struct label_timings {
    double read, threshold, label, filter, stats, write, total; /* seconds */
} label_timings;

typedef struct label_summary {
    const char *input_path;
    const cli_input *input;
    const char *threshold_source;
    double lo, hi;
    const vl_label_options *options;
    int64_t min_size, largest;
    int64_t open_radius, close_radius; /* --open/--close ball radii in voxels, 0 when not asked */
    double deskewed_degrees;           /* the input's shear undone for a NIfTI output (cli_nifti_shear), else 0 */
    uint32_t labelled_count;        /* N before the filters */
    const vl_label_result *result;  /* after the filters */
    const vl_component_stats *stats;
    const label_timings *timings;   /* NULL: no timings (voxlabel batch keeps summary.json reproducible) */
    const char *labels_file;
    const char *options_hash;       /* voxlabel batch's hash of the label options, or NULL */
} label_summary;

/* The stage seconds as one JSON object (summary.json's "timings_s", voxlabel batch's timings.json). */
void label_timings_write_json(FILE *out, const label_timings *timings);
/* Writes the summary atomically. */
vl_status label_summary_write_json(const char *path, const label_summary *summary);

#endif
