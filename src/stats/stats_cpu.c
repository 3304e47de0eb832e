/* CPU reference for component statistics.
 *
 * Pass 1 walks the labels row by row and splits each row into runs of one label, so that a CT row of
 * background or a long run of one component costs a few operations instead of one per voxel: counts,
 * coordinate and second-moment sums of a run have closed forms. At the full level the same pass counts,
 * per run, the neighbours in each of the 26 directions that carry another label (surface faces and
 * Crofton crossings). Threads take slabs of z, each with its own sums, merged at the end.
 * Pass 2 (full level with intensity only) gathers each component's values for the exact median. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "core/parallel.h"
#include "stats/stats_extras.h"
#include "stats/stats_internal.h"
#include "voxlabel/error.h"

typedef struct pass_job {
    const vl_volume *labels, *intensity;
    uint32_t count;
    int full;
    int64_t z_begin, z_end;
    vl_stats_sums *sums;
    vl_stats_shape_sums *shape; /* full level only */
    /* median pass */
    uint64_t *cursor;
    double *values;
    /* first label above count seen, reported after the join; -1: out of memory */
    int bad;
    uint64_t bad_label;
    int64_t bad_index;
    const vl_progress *progress; /* thread 0 only */
} pass_job;

/* vl_stats_direction_class(dx, dy, dz) as a constant table [dz+1][dy+1][dx+1], so that the unrolled
 * neighbour loops index the sums directly (the brute-force oracle of tests/stats_unit.c uses the function). */
static const int crossing_class[3][3][3] = {{{9, 7, 12}, {5, 2, 6}, {11, 8, 10}},
                                            {{3, 1, 4}, {0, -1, 0}, {4, 1, 3}},
                                            {{10, 8, 11}, {6, 2, 5}, {12, 7, 9}}};

/* A row of labels as u32: the volume itself for U32, else converted into `buffer`. */
static const uint32_t *label_row(const vl_volume *labels, int64_t y, int64_t z, uint32_t *buffer)
{
    const int64_t nx = labels->nx, start = nx * (y + labels->ny * z);
    switch (labels->dtype) {
    case VL_U32: return (const uint32_t *)labels->data + start;
    case VL_U16: {
        const uint16_t *row = (const uint16_t *)labels->data + start;
        for (int64_t x = 0; x < nx; x++)
            buffer[x] = row[x];
        return buffer;
    }
    default: {
        const uint8_t *row = (const uint8_t *)labels->data + start;
        for (int64_t x = 0; x < nx; x++)
            buffer[x] = row[x];
        return buffer;
    }
    }
}

static int row_is_empty(const uint32_t *row, int64_t nx)
{
    uint32_t any = 0;
    for (int64_t x = 0; x < nx; x++)
        any |= row[x];
    return any == 0;
}

/* Intensity sums of the voxels first..last of a row, with the dtype switch outside the loop. */
#define ACCUMULATE_RUN(type)                                           \
    do {                                                               \
        const type *v = (const type *)intensity->data + start;         \
        for (int64_t i = first; i <= last; i++) {                      \
            const double value = (double)v[i];                         \
            lo = value < lo ? value : lo;                              \
            hi = value > hi ? value : hi;                              \
            sum += value;                                              \
            squares += value * value;                                  \
            weighted_x += value * (double)i;                           \
        }                                                              \
    } while (0)

static void accumulate_intensity(const vl_volume *intensity, int64_t start, int64_t first, int64_t last, int64_t y,
                                 int64_t z, vl_stats_sums *s)
{
    double lo = s->intensity_min, hi = s->intensity_max, sum = 0, squares = 0, weighted_x = 0;
    switch (intensity->dtype) {
    case VL_U8: ACCUMULATE_RUN(uint8_t); break;
    case VL_I16: ACCUMULATE_RUN(int16_t); break;
    case VL_U16: ACCUMULATE_RUN(uint16_t); break;
    case VL_U32: ACCUMULATE_RUN(uint32_t); break;
    case VL_F32: ACCUMULATE_RUN(float); break;
    }
    s->intensity_min = lo;
    s->intensity_max = hi;
    s->intensity_sum += sum;
    s->intensity_sum_squares += squares;
    s->weighted_coordinate_sum[0] += weighted_x;
    s->weighted_coordinate_sum[1] += sum * (double)y;
    s->weighted_coordinate_sum[2] += sum * (double)z;
}

/* Sum of k^2 for k = 0..n (n >= -1). */
static uint64_t squares_to(int64_t n)
{
    if (n < 0)
        return 0;
    uint64_t u = (uint64_t)n;
    /* n(n+1)(2n+1)/6 without overflow for n < 2^20: divide the even factor and the multiple of 3 first. */
    uint64_t a = u, b = u + 1, c = 2 * u + 1;
    if (a % 2 == 0) a /= 2; else b /= 2;
    if (a % 3 == 0) a /= 3; else if (b % 3 == 0) b /= 3; else c /= 3;
    return a * b * c;
}

/* Neighbours of the run [x0, x1] of label `a` in the row `neighbour` (NULL: outside the volume) that carry
 * another label, for the offsets dx = -1, 0, +1; m(x) = 1 when x is outside or carries another label. */
static inline void count_row_crossings(const uint32_t *neighbour, int64_t nx, uint32_t a, int64_t x0, int64_t x1,
                                uint64_t out[3])
{
    const uint64_t length = (uint64_t)(x1 - x0 + 1);
    if (!neighbour) {
        out[0] = out[1] = out[2] = length;
        return;
    }
    uint64_t same = 0;
    for (int64_t x = x0; x <= x1; x++)
        same += neighbour[x] == a;
    const uint64_t centre = length - same;
    const uint64_t left_out = x0 - 1 < 0 || neighbour[x0 - 1] != a;
    const uint64_t right_out = x1 + 1 >= nx || neighbour[x1 + 1] != a;
    const uint64_t m_x0 = neighbour[x0] != a, m_x1 = neighbour[x1] != a;
    out[1] = centre;
    out[0] = centre - m_x1 + left_out;   /* x - 1 over [x0, x1] = [x0 - 1, x1 - 1] */
    out[2] = centre - m_x0 + right_out;  /* x + 1 over [x0, x1] = [x0 + 1, x1 + 1] */
}

/* Second moments, border contact and neighbour crossings of the run [x0, x1] of label a in row (y, z). */
static void accumulate_shape(const pass_job *job, const uint32_t *around[3][3], uint32_t a, int64_t x0, int64_t x1,
                             int64_t y, int64_t z, vl_stats_shape_sums *s)
{
    const vl_volume *labels = job->labels;
    const int64_t nx = labels->nx;
    const uint64_t length = (uint64_t)(x1 - x0 + 1), uy = (uint64_t)y, uz = (uint64_t)z;
    const uint64_t sum_x = (uint64_t)(x0 + x1) * length / 2;
    s->moment_sum[0] += squares_to(x1) - squares_to(x0 - 1);
    s->moment_sum[1] += length * uy * uy;
    s->moment_sum[2] += length * uz * uz;
    s->moment_sum[3] += sum_x * uy;
    s->moment_sum[4] += sum_x * uz;
    s->moment_sum[5] += length * uy * uz;
    const int border_row = y == 0 || y == labels->ny - 1 || z == 0 || z == labels->nz - 1;
    s->border_voxels += border_row ? length : (uint64_t)(x0 == 0) + (uint64_t)(x1 == nx - 1 && nx > 1);
    /* Along x a maximal run has exactly one foreign neighbour at each end. */
    s->crossings[0] += 2;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++) {
            if (!dz && !dy)
                continue;
            uint64_t counts[3];
            count_row_crossings(around[dz + 1][dy + 1], nx, a, x0, x1, counts);
            for (int dx = -1; dx <= 1; dx++)
                s->crossings[crossing_class[dz + 1][dy + 1][dx + 1]] += counts[dx + 1];
        }
}

static void *run_pass(void *argument)
{
    pass_job *job = argument;
    const vl_volume *labels = job->labels;
    const int64_t nx = labels->nx, ny = labels->ny, nz = labels->nz;
    /* 9 converted rows: the centre and its 8 neighbours in (y, z) for the crossings. */
    uint32_t *buffers = malloc(sizeof(uint32_t) * (size_t)nx * 9);
    if (!buffers) {
        job->bad = -1;
        return NULL;
    }
    for (int64_t z = job->z_begin; z < job->z_end && !job->bad; z++) {
        for (int64_t y = 0; y < ny && !job->bad; y++) {
            const uint32_t *row = label_row(labels, y, z, buffers + 4 * nx);
            if (row_is_empty(row, nx))
                continue;
            const uint32_t *around[3][3] = {{0}};
            if (job->full)
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++) {
                        const int64_t yy = y + dy, zz = z + dz;
                        if (yy < 0 || yy >= ny || zz < 0 || zz >= nz)
                            continue;
                        around[dz + 1][dy + 1] =
                            (dz || dy) ? label_row(labels, yy, zz, buffers + (3 * (dz + 1) + dy + 1) * nx) : row;
                    }
            const int64_t row_start = nx * (y + ny * z);
            int64_t x = 0;
            while (x < nx) {
                /* Background is most of a CT: skip it four voxels at a time. */
                while (x + 4 <= nx && (row[x] | row[x + 1] | row[x + 2] | row[x + 3]) == 0)
                    x += 4;
                while (x < nx && row[x] == 0)
                    x++;
                if (x >= nx)
                    break;
                const uint32_t a = row[x];
                const int64_t x0 = x;
                while (x < nx && row[x] == a)
                    x++;
                const int64_t x1 = x - 1;
                if (a > job->count) {
                    job->bad = 1;
                    job->bad_label = a;
                    job->bad_index = row_start + x0;
                    break;
                }
                vl_stats_sums *s = &job->sums[a - 1];
                const uint64_t length = (uint64_t)(x1 - x0 + 1);
                s->voxels += length;
                s->coordinate_sum[0] += (uint64_t)(x0 + x1) * length / 2;
                s->coordinate_sum[1] += length * (uint64_t)y;
                s->coordinate_sum[2] += length * (uint64_t)z;
                if (x0 < s->bbox_min[0]) s->bbox_min[0] = x0;
                if (x1 > s->bbox_max[0]) s->bbox_max[0] = x1;
                if (y < s->bbox_min[1]) s->bbox_min[1] = y;
                if (y > s->bbox_max[1]) s->bbox_max[1] = y;
                if (z < s->bbox_min[2]) s->bbox_min[2] = z;
                if (z > s->bbox_max[2]) s->bbox_max[2] = z;
                if (job->intensity)
                    accumulate_intensity(job->intensity, row_start, x0, x1, y, z, s);
                if (job->full)
                    accumulate_shape(job, around, a, x0, x1, y, z, &job->shape[a - 1]);
            }
        }
        if (job->progress)
            vl_progress_report(job->progress, "statistics",
                               (double)(z + 1 - job->z_begin) / (double)(job->z_end - job->z_begin));
    }
    free(buffers);
    return NULL;
}

/* Pass 2: copies each foreground value to its component's slice of job->values, at job->cursor[label-1]. */
static void *gather_values(void *argument)
{
    pass_job *job = argument;
    const vl_volume *labels = job->labels;
    const int64_t nx = labels->nx, ny = labels->ny;
    uint32_t *buffer = malloc(sizeof(uint32_t) * (size_t)nx);
    if (!buffer) {
        job->bad = -1;
        return NULL;
    }
    for (int64_t z = job->z_begin; z < job->z_end; z++)
        for (int64_t y = 0; y < ny; y++) {
            const uint32_t *row = label_row(labels, y, z, buffer);
            if (row_is_empty(row, nx))
                continue;
            const int64_t row_start = nx * (y + ny * z);
            for (int64_t x = 0; x < nx; x++)
                if (row[x])
                    job->values[job->cursor[row[x] - 1]++] = vl_volume_value(job->intensity, row_start + x);
        }
    free(buffer);
    return NULL;
}

typedef struct median_job {
    const vl_stats_sums *sums;
    const uint64_t *offset;
    double *values, *medians;
    uint32_t first, last;
} median_job;

static void *select_medians(void *argument)
{
    median_job *job = argument;
    for (uint32_t k = job->first; k < job->last; k++)
        job->medians[k] = vl_stats_median(job->values + job->offset[k], job->sums[k].voxels);
    return NULL;
}

static void merge_sums(pass_job *into, const pass_job *from, uint32_t count)
{
    for (uint32_t k = 0; k < count; k++) {
        const vl_stats_sums *b = &from->sums[k];
        if (!b->voxels)
            continue;
        vl_stats_sums *a = &into->sums[k];
        a->voxels += b->voxels;
        for (int axis = 0; axis < 3; axis++) {
            if (b->bbox_min[axis] < a->bbox_min[axis]) a->bbox_min[axis] = b->bbox_min[axis];
            if (b->bbox_max[axis] > a->bbox_max[axis]) a->bbox_max[axis] = b->bbox_max[axis];
            a->coordinate_sum[axis] += b->coordinate_sum[axis];
            a->weighted_coordinate_sum[axis] += b->weighted_coordinate_sum[axis];
        }
        if (b->intensity_min < a->intensity_min) a->intensity_min = b->intensity_min;
        if (b->intensity_max > a->intensity_max) a->intensity_max = b->intensity_max;
        a->intensity_sum += b->intensity_sum;
        a->intensity_sum_squares += b->intensity_sum_squares;
        if (!into->shape)
            continue;
        vl_stats_shape_sums *p = &into->shape[k];
        const vl_stats_shape_sums *q = &from->shape[k];
        for (int m = 0; m < 6; m++)
            p->moment_sum[m] += q->moment_sum[m];
        p->border_voxels += q->border_voxels;
        for (int c = 0; c < VL_STATS_DIRECTIONS; c++)
            p->crossings[c] += q->crossings[c];
    }
}

/* Exact medians: counting-sort the foreground values by label (each thread's slab starts where the
 * previous slabs' voxels of that label end, so no atomics), then select within each component.
 * Must run before the per-thread sums are merged: it needs each slab's own counts. */
static vl_status compute_medians(pass_job *jobs, int threads, uint32_t count, double *medians)
{
    uint64_t total = 0;
    for (int t = 0; t < threads; t++)
        for (uint32_t k = 0; k < count; k++)
            total += jobs[t].sums[k].voxels;
    uint64_t *offset = vl_allocate_large(sizeof(uint64_t) * ((size_t)count + 1));
    uint64_t *cursors = vl_allocate_large(sizeof(uint64_t) * (size_t)count * (size_t)threads);
    double *values = vl_allocate_large(sizeof(double) * (total ? total : 1));
    vl_stats_sums *counts = vl_allocate_large(sizeof(vl_stats_sums) * (size_t)count);
    vl_status status = VL_OK;
    if (!offset || !cursors || !values || !counts)
        status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for the median of %llu voxels", (unsigned long long)total);
    if (status == VL_OK) {
        offset[0] = 0;
        for (uint32_t k = 0; k < count; k++) {
            uint64_t at = offset[k];
            for (int t = 0; t < threads; t++) {
                cursors[(size_t)t * count + k] = at;
                at += jobs[t].sums[k].voxels;
            }
            offset[k + 1] = at;
            counts[k].voxels = at - offset[k];
        }
        for (int t = 0; t < threads; t++) {
            jobs[t].cursor = cursors + (size_t)t * count;
            jobs[t].values = values;
        }
        vl_run_parallel(gather_values, jobs, sizeof *jobs, threads);
        for (int t = 0; t < threads && status == VL_OK; t++)
            if (jobs[t].bad)
                status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for row buffers");
    }
    if (status == VL_OK) {
        median_job selections[VL_MAX_THREADS];
        for (int t = 0; t < threads; t++)
            selections[t] = (median_job){counts, offset, values, medians, (uint32_t)((uint64_t)count * t / threads),
                                         (uint32_t)((uint64_t)count * (t + 1) / threads)};
        vl_run_parallel(select_medians, selections, sizeof selections[0], threads);
    }
    free(offset);
    free(cursors);
    free(values);
    free(counts);
    return status;
}

vl_status vl_component_stats_compute_cpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                         const vl_stats_options *options, vl_component_stats **stats)
{
    vl_stats_options defaults;
    vl_status status = vl_stats_begin(&options, &defaults, stats);
    if (status != VL_OK)
        return status;
    if ((status = vl_stats_check_limits(labels, intensity)) != VL_OK)
        return status;
    if (count == 0)
        return VL_OK;
    const int full = options->level == VL_STATS_FULL;
    int threads = vl_cpu_thread_count(options->threads);
    if (threads > labels->nz)
        threads = (int)labels->nz; /* threads take slabs of z */
    const size_t n = count;
    /* Every thread accumulates into its own arrays: thread 0's become the result, the others merge into them. */
    vl_stats_buffers b;
    if ((status = vl_stats_buffers_allocate(&b, count, threads, full, intensity != NULL)) != VL_OK)
        return status;
    vl_stats_sums *sums = b.sums;
    vl_stats_shape_sums *shape = b.shape;
    double *medians = b.medians;
    pass_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads && status == VL_OK; t++) {
        jobs[t] = (pass_job){.labels = labels, .intensity = intensity, .count = count, .full = full,
                             .z_begin = labels->nz * t / threads, .z_end = labels->nz * (t + 1) / threads,
                             .sums = sums + n * (size_t)t, .shape = full ? shape + n * (size_t)t : NULL,
                             .progress = t == 0 ? &options->progress : NULL};
        vl_stats_sums_clear(jobs[t].sums, count);
        if (full)
            memset(jobs[t].shape, 0, sizeof *shape * n);
    }
    if (status == VL_OK)
        vl_run_parallel(run_pass, jobs, sizeof jobs[0], threads);
    for (int t = 0; t < threads && status == VL_OK; t++) {
        if (jobs[t].bad < 0)
            status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for row buffers");
        else if (jobs[t].bad)
            status = vl_fail(VL_ERR_INPUT, "statistics: voxel %lld has label %llu but the volume has only %u labels",
                             (long long)jobs[t].bad_index, (unsigned long long)jobs[t].bad_label, count);
    }
    if (status == VL_OK && medians)
        status = compute_medians(jobs, threads, count, medians);
    if (status == VL_OK) {
        for (int t = 1; t < threads; t++)
            merge_sums(&jobs[0], &jobs[t], count);
        vl_stats_finalize(sums, shape, medians, count, labels, intensity != NULL, options->level, b.result);
        status = vl_stats_extras(labels, intensity, count, options, NULL, b.result);
    }
    return vl_stats_buffers_finish(&b, status, stats);
}
