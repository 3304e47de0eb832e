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

static void unite_slice(uint32_t *parent, const vl_runs *runs, const connectivity_rule *rule, int64_t z)
{
    const int64_t ny = runs->ny;
    for (int64_t y = 0; y < ny; y++) {
        int64_t row = y + ny * z;
        if (runs->row_start[row] == runs->row_start[row + 1])
            continue;
        for (int n = 0; n < rule->count; n++) {
            int64_t ny_ = y + rule->rows[n].dy, nz_ = z + rule->rows[n].dz;
            if (ny_ < 0 || ny_ >= ny || nz_ < 0)
                continue;
            unite_rows(parent, runs, row, ny_ + ny * nz_, rule->rows[n].reach);
        }
    }
}

typedef struct slab_job {
    uint32_t *parent;
    const vl_runs *runs;
    connectivity_rule rule;
    int64_t z_begin, z_end;
} slab_job;

/* Joins runs within one slab; the first slice of the slab is joined to the previous slab later. */
static void *unite_slab(void *argument)
{
    slab_job *job = (slab_job *)argument;
    connectivity_rule inner = job->rule;
    for (int64_t z = job->z_begin; z < job->z_end; z++) {
        if (z == job->z_begin) {
            /* Only in-slice neighbours here; cross-slab rows are joined serially afterwards. */
            connectivity_rule in_slice = {0, {{0, 0, 0}}};
            for (int n = 0; n < inner.count; n++)
                if (inner.rows[n].dz == 0)
                    in_slice.rows[in_slice.count++] = inner.rows[n];
            unite_slice(job->parent, job->runs, &in_slice, z);
        } else {
            unite_slice(job->parent, job->runs, &inner, z);
        }
    }
    return NULL;
}

static void unite_seam(uint32_t *parent, const vl_runs *runs, const connectivity_rule *rule, int64_t z)
{
    connectivity_rule across = {0, {{0, 0, 0}}};
    for (int n = 0; n < rule->count; n++)
        if (rule->rows[n].dz != 0)
            across.rows[across.count++] = rule->rows[n];
    unite_slice(parent, runs, &across, z);
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
    int threads = vl_cpu_thread_count(options->threads);
    if (threads > mask->nz)
        threads = (int)mask->nz;

    vl_runs runs;
    vl_status status = vl_runs_extract(mask, threads, &runs);
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

    const connectivity_rule rule = rule_for(options->connectivity);
    slab_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (slab_job){parent, &runs, rule, mask->nz * t / threads, mask->nz * (t + 1) / threads};
    vl_run_parallel(unite_slab, jobs, sizeof jobs[0], threads);
    for (int t = 1; t < threads; t++)
        unite_seam(parent, &runs, &rule, jobs[t].z_begin);
    vl_progress_report(&options->progress, "labelling", 0.6);

    status = vl_runs_number_components(&runs, parent, options->order, result);
    if (status == VL_OK)
        status = vl_runs_write_labels(&runs, parent, mask, threads, labels);
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
