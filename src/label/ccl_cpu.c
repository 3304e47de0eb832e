/* The CPU reference labeller: run-based union-find with bwlabeln numbering.
 *
 * A row is a line of voxels along x at fixed (y, z). Every row is cut into runs: maximal intervals of
 * foreground voxels. Two voxels of a row are connected exactly when they lie in the same run, so the
 * labeller only ever joins runs, never single voxels, and its cost follows the number of runs (small for
 * CT masks) rather than the number of voxels.
 *
 * Invariants that make the numbering exact and cheap:
 *  - runs are numbered in raster order (z, then y, then x), and a union always makes the smaller run
 *    index the root, so parent[i] <= i and every final root is its component's first run in raster order;
 *  - hence a root lies in its component's lowest slice, and the component's MATLAB key
 *    z*nx*ny + x*ny + y is found among the runs of that slice alone (minimum of x0*ny + y).
 *
 * A class map (multilabel) is cut into runs of one class instead, and joined by a second instance of the
 * joins (ccl_join_template.h) whose row joiner also compares the runs' classes.
 *
 * Threads: slabs of slices are cut into runs and joined inside the slab in parallel (their run indices
 * are disjoint), the slab seams are joined serially, and the output rows are written in parallel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "label/ccl_runs.h"
#include "core/memory.h"
#include "core/parallel.h"
#include "voxlabel/error.h"
#include "label/union_find.h"
#include "voxlabel/label.h"

/* Which neighbouring rows connect to a row, and whether runs there touch diagonally (reach 1) or only
 * face-to-face (reach 0). dy/dz are relative to the current row, always backward in raster order. */
typedef struct neighbour_row {
    int dy, dz;
    uint32_t reach;
} neighbour_row;

typedef struct connectivity_rule {
    int count;
    neighbour_row rows[4];
} connectivity_rule;

static connectivity_rule rule_for(int connectivity)
{
    switch (connectivity) {
    case 4: return (connectivity_rule){1, {{-1, 0, 0}}};
    case 8: return (connectivity_rule){1, {{-1, 0, 1}}};
    case 6: return (connectivity_rule){2, {{-1, 0, 0}, {0, -1, 0}}};
    /* 18: an in-slice row touches diagonally (dx, dy both set); across slices only one of dx, dy may be set. */
    case 18: return (connectivity_rule){4, {{-1, 0, 1}, {-1, -1, 0}, {0, -1, 1}, {1, -1, 0}}};
    default: return (connectivity_rule){4, {{-1, 0, 1}, {-1, -1, 1}, {0, -1, 1}, {1, -1, 1}}};
    }
}

/* Joins every run of row `a` with the runs of row `b` it touches. Both lists are sorted by x and runs in
 * one row are at least one voxel apart, so after comparing two runs the one that ends first can touch
 * nothing further in the other row: advancing it (touching or not) visits every touching pair once, and
 * the advance is computed rather than branched on, which matters on noise where overlaps are random. */
static void unite_rows(uint32_t *parent, const vl_runs *runs, int64_t row_a, int64_t row_b, uint32_t reach)
{
    uint32_t i = runs->row_start[row_a], i_end = runs->row_start[row_a + 1];
    uint32_t j = runs->row_start[row_b], j_end = runs->row_start[row_b + 1];
    while (i < i_end && j < j_end) {
        const uint32_t a0 = runs->x0[i], a1 = runs->x1[i], b0 = runs->x0[j], b1 = runs->x1[j];
        if (b1 + reach >= a0 && a1 + reach >= b0)
            vl_unite(parent, i, j);
        const uint32_t a_ends_first = a1 < b1;
        i += a_ends_first;
        j += 1 - a_ends_first;
    }
}

/* The multilabel joiner: as unite_rows, but two runs join only when they hold the same class. Runs of
 * one row may now be adjacent (different classes), so when two runs end at the same x, the next run of
 * either row may start right after that end and touch the other's current run diagonally: those two
 * pairs are tested before both rows advance. */
static void unite_rows_by_class(uint32_t *parent, const vl_runs *runs, int64_t row_a, int64_t row_b, uint32_t reach)
{
    const uint32_t *run_class = runs->run_class;
    uint32_t i = runs->row_start[row_a], i_end = runs->row_start[row_a + 1];
    uint32_t j = runs->row_start[row_b], j_end = runs->row_start[row_b + 1];
    while (i < i_end && j < j_end) {
        const uint32_t a0 = runs->x0[i], a1 = runs->x1[i], b0 = runs->x0[j], b1 = runs->x1[j];
        if (run_class[i] == run_class[j] && b1 + reach >= a0 && a1 + reach >= b0)
            vl_unite(parent, i, j);
        if (a1 < b1) {
            i++;
        } else if (b1 < a1) {
            j++;
        } else {
            if (reach && j + 1 < j_end && runs->x0[j + 1] == a1 + 1 && run_class[j + 1] == run_class[i])
                vl_unite(parent, i, j + 1);
            if (reach && i + 1 < i_end && runs->x0[i + 1] == b1 + 1 && run_class[i + 1] == run_class[j])
                vl_unite(parent, i + 1, j);
            i++;
            j++;
        }
    }
}

typedef struct slab_job {
    uint32_t *parent;
    const vl_runs *runs;
    connectivity_rule rule;
    int64_t z_begin, z_end;
} slab_job;

static connectivity_rule rows_within_slice(const connectivity_rule *rule)
{
    connectivity_rule in_slice = {0, {{0, 0, 0}}};
    for (int n = 0; n < rule->count; n++)
        if (rule->rows[n].dz == 0)
            in_slice.rows[in_slice.count++] = rule->rows[n];
    return in_slice;
}

static connectivity_rule rows_across_slices(const connectivity_rule *rule)
{
    connectivity_rule across = {0, {{0, 0, 0}}};
    for (int n = 0; n < rule->count; n++)
        if (rule->rows[n].dz != 0)
            across.rows[across.count++] = rule->rows[n];
    return across;
}

#define VL_JOIN_ROWS unite_rows
#define VL_JOIN(name) name##_binary
#include "label/ccl_join_template.h"

#define VL_JOIN_ROWS unite_rows_by_class
#define VL_JOIN(name) name##_by_class
#include "label/ccl_join_template.h"

/* The labeller for a mask (by_class 0) or a class map (by_class 1): the two differ in how rows are cut
 * into runs and which joiner instance runs, chosen once per call. */
static vl_status label_runs(const vl_volume *volume, vl_volume *labels, const vl_label_options *options,
                            vl_label_result *result, int by_class)
{
    int threads = vl_cpu_thread_count(options->threads);
    if (threads > volume->nz)
        threads = (int)volume->nz;

    vl_runs runs;
    vl_status status = by_class ? vl_runs_extract_classes(volume, threads, &runs) : vl_runs_extract(volume, threads, &runs);
    if (status != VL_OK)
        return status;
    vl_progress_report(&options->progress, "labelling", 0.4);

    uint32_t *parent = vl_allocate_large(((size_t)runs.count + 1) * sizeof *parent);
    if (!parent) {
        vl_runs_free(&runs);
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate the union-find table for %u runs", runs.count);
    }
    for (uint32_t i = 0; i < runs.count; i++)
        parent[i] = i;

    void *(*unite_slab)(void *) = by_class ? unite_slab_by_class : unite_slab_binary;
    void (*unite_seam)(uint32_t *, const vl_runs *, const connectivity_rule *, int64_t) =
        by_class ? unite_seam_by_class : unite_seam_binary;
    const connectivity_rule rule = rule_for(options->connectivity);
    slab_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (slab_job){parent, &runs, rule, volume->nz * t / threads, volume->nz * (t + 1) / threads};
    vl_run_parallel(unite_slab, jobs, sizeof jobs[0], threads);
    for (int t = 1; t < threads; t++)
        unite_seam(parent, &runs, &rule, jobs[t].z_begin);
    vl_progress_report(&options->progress, "labelling", 0.6);

    status = vl_runs_number_components(&runs, parent, options->order, result);
    if (status == VL_OK && by_class)
        status = vl_runs_component_classes(&runs, parent, result);
    if (status == VL_OK)
        status = vl_runs_write_labels(&runs, parent, volume, threads, labels);
    free(parent);
    vl_runs_free(&runs);
    if (status != VL_OK) {
        vl_label_result_free(result);
        return status;
    }
    result->outcome.used = VL_DEVICE_CPU;
    snprintf(result->device_name, sizeof result->device_name, "cpu (%d thread%s)", threads, threads == 1 ? "" : "s");
    vl_progress_report(&options->progress, "labelling", 1.0);
    return VL_OK;
}

vl_status vl_label_volume_cpu(const vl_volume *mask, vl_volume *labels,
                              const vl_label_options *options, vl_label_result *result)
{
    memset(result, 0, sizeof *result);
    memset(labels, 0, sizeof *labels);
    if (mask->dtype != VL_U8)
        return vl_fail(VL_ERR_ARGUMENT, "label: the mask must be u8, not %s", vl_dtype_name(mask->dtype));
    if (!vl_connectivity_is_valid(options->connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "--conn: %d is not one of 6, 18, 26 (3D) or 4, 8 (per slice)",
                       options->connectivity);
    return label_runs(mask, labels, options, result, 0);
}

vl_status vl_label_multilabel_cpu(const vl_volume *classes, vl_volume *labels, const vl_label_options *options,
                                  vl_label_result *result)
{
    memset(result, 0, sizeof *result);
    memset(labels, 0, sizeof *labels);
    vl_status status = vl_class_map_check(classes);
    if (status != VL_OK)
        return status;
    if (!vl_connectivity_is_valid(options->connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "--conn: %d is not one of 6, 18, 26 (3D) or 4, 8 (per slice)",
                       options->connectivity);
    return label_runs(classes, labels, options, result, 1);
}
