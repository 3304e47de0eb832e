/* Options, limits and small helpers shared by the statistics backends. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "stats/stats_internal.h"
#include "voxlabel/error.h"

const int vl_stats_direction[VL_STATS_DIRECTIONS][3] = {
    {1, 0, 0},  {0, 1, 0},  {0, 0, 1},                                          /* axes */
    {1, 1, 0},  {1, -1, 0}, {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1},      /* face diagonals */
    {1, 1, 1},  {1, 1, -1}, {1, -1, 1}, {1, -1, -1},                           /* body diagonals */
};

int vl_stats_direction_class(int dx, int dy, int dz)
{
    /* d and -d are one line class: flip so that the first nonzero component is positive. */
    if (dx < 0 || (dx == 0 && (dy < 0 || (dy == 0 && dz < 0)))) {
        dx = -dx;
        dy = -dy;
        dz = -dz;
    }
    for (int c = 0; c < VL_STATS_DIRECTIONS; c++)
        if (vl_stats_direction[c][0] == dx && vl_stats_direction[c][1] == dy && vl_stats_direction[c][2] == dz)
            return c;
    return -1;
}

void vl_stats_options_default(vl_stats_options *options)
{
    memset(options, 0, sizeof *options);
    options->level = VL_STATS_BASIC;
    options->extras = VL_STATS_EXTRA_ALL;
    options->connectivity = 26;
    vl_device_default(&options->device);
}

vl_status vl_stats_level_parse(const char *text, vl_stats_level *level)
{
    if (text && strcmp(text, "basic") == 0) {
        *level = VL_STATS_BASIC;
        return VL_OK;
    }
    if (text && strcmp(text, "full") == 0) {
        *level = VL_STATS_FULL;
        return VL_OK;
    }
    return vl_fail(VL_ERR_ARGUMENT, "--stats %s: expected basic or full", text ? text : "(null)");
}

void vl_csv_options_default(vl_csv_options *options)
{
    memset(options, 0, sizeof *options);
    options->level = VL_STATS_BASIC;
    options->intensity = 1;
}

void vl_stats_sums_clear(vl_stats_sums *sums, uint32_t count)
{
    const vl_stats_sums empty = {.bbox_min = {INT64_MAX, INT64_MAX, INT64_MAX},
                                 .bbox_max = {INT64_MIN, INT64_MIN, INT64_MIN},
                                 .intensity_min = INFINITY,
                                 .intensity_max = -INFINITY};
    for (uint32_t k = 0; k < count; k++)
        sums[k] = empty;
}

vl_status vl_stats_check_limits(const vl_volume *labels, const vl_volume *intensity)
{
    if (!labels || !labels->data)
        return vl_fail(VL_ERR_ARGUMENT, "statistics: no labels volume");
    if (labels->dtype != VL_U8 && labels->dtype != VL_U16 && labels->dtype != VL_U32)
        return vl_fail(VL_ERR_INPUT, "statistics: labels must be u8, u16 or u32, not %s", vl_dtype_name(labels->dtype));
    if (labels->nx <= 0 || labels->ny <= 0 || labels->nz <= 0)
        return vl_fail(VL_ERR_INPUT, "statistics: empty labels volume");
    if (intensity) {
        if (!intensity->data)
            return vl_fail(VL_ERR_ARGUMENT, "statistics: intensity volume has no data");
        if (intensity->nx != labels->nx || intensity->ny != labels->ny || intensity->nz != labels->nz)
            return vl_fail(VL_ERR_INPUT,
                           "statistics: intensity is %lldx%lldx%lld but the labels are %lldx%lldx%lld",
                           (long long)intensity->nx, (long long)intensity->ny, (long long)intensity->nz,
                           (long long)labels->nx, (long long)labels->ny, (long long)labels->nz);
    }
    /* Second moments are exact 64-bit sums of squared indices: bound voxels * max_index^2. */
    int64_t largest = labels->nx;
    if (labels->ny > largest)
        largest = labels->ny;
    if (labels->nz > largest)
        largest = labels->nz;
    double bound = (double)vl_volume_voxels(labels) * (double)largest * (double)largest;
    if (bound >= 1.8e19)
        return vl_fail(VL_ERR_INPUT, "statistics: volume too large for exact 64-bit moments (%lldx%lldx%lld)",
                       (long long)labels->nx, (long long)labels->ny, (long long)labels->nz);
    return VL_OK;
}

void vl_component_stats_free(vl_component_stats *stats)
{
    free(stats);
}

vl_status vl_stats_buffers_allocate(vl_stats_buffers *buffers, uint32_t count, int copies, int full,
                                    int has_intensity)
{
    const size_t n = (size_t)count * (size_t)copies;
    buffers->sums = vl_allocate_large(sizeof *buffers->sums * n);
    buffers->shape = full ? vl_allocate_large(sizeof *buffers->shape * n) : NULL;
    buffers->medians = full && has_intensity ? vl_allocate_large(sizeof *buffers->medians * count) : NULL;
    buffers->result = vl_allocate_large(sizeof *buffers->result * count);
    if (buffers->sums && (!full || buffers->shape) && (!full || !has_intensity || buffers->medians) && buffers->result)
        return VL_OK;
    return vl_stats_buffers_finish(buffers, vl_fail(VL_ERR_MEMORY, "statistics: no memory for %u components", count),
                                   NULL);
}

vl_status vl_stats_buffers_finish(vl_stats_buffers *buffers, vl_status status, vl_component_stats **stats)
{
    free(buffers->sums);
    free(buffers->shape);
    free(buffers->medians);
    if (status == VL_OK)
        *stats = buffers->result;
    else
        free(buffers->result);
    *buffers = (vl_stats_buffers){0};
    return status;
}

vl_status vl_stats_begin(const vl_stats_options **options, vl_stats_options *defaults, vl_component_stats **stats)
{
    if (!*options) {
        vl_stats_options_default(defaults);
        *options = defaults;
    } else if ((*options)->connectivity == 0) {
        /* 0 means the default (26) for both backends, so the GPU counts the Euler number too. */
        *defaults = **options;
        defaults->connectivity = 26;
        *options = defaults;
    }
    if (!stats)
        return vl_fail(VL_ERR_ARGUMENT, "statistics: no output pointer");
    *stats = NULL;
    return VL_OK;
}
