/* vl_component_stats_compute: the dispatch between the CPU reference (stats_cpu.c) and the GPU sums
 * (cuda/stats/stats_gpu.cu) under the device policy; the GPU's sums go through the shared finaliser. */
#include <stdlib.h>

#include "core/device.h"
#include "voxlabel/error.h"
#include "stats/stats_extras.h"
#include "stats/stats_gpu.h"
#include "stats/stats_internal.h"

static vl_status compute_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                             const vl_stats_options *options, vl_component_stats **stats)
{
    vl_status status = vl_stats_check_limits(labels, intensity);
    if (status != VL_OK || count == 0)
        return status;
    vl_stats_buffers b;
    status = vl_stats_buffers_allocate(&b, count, 1, options->level == VL_STATS_FULL, intensity != NULL);
    if (status != VL_OK)
        return status;
    /* The Euler number is counted on the GPU while the labels are there; hull and voxel moments run on the
     * CPU from the host volumes, as for the CPU backend. */
    int64_t *euler = NULL;
    if (options->level == VL_STATS_FULL && (options->extras & VL_STATS_EXTRA_EULER) &&
        (options->connectivity == 6 || options->connectivity == 26) &&
        !(euler = malloc(sizeof *euler * count)))
        status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for %u Euler numbers", count);
    vl_stats_gpu_timing timing;
    if (status == VL_OK)
        status = vl_stats_sums_gpu(labels, intensity, count, options, b.sums, b.shape, b.medians, euler, &timing);
    if (status == VL_OK) {
        vl_stats_finalize(b.sums, b.shape, b.medians, count, labels, intensity != NULL, options->level, b.result);
        status = vl_stats_extras(labels, intensity, count, options, euler, b.result);
    }
    free(euler);
    return vl_stats_buffers_finish(&b, status, stats);
}

typedef struct stats_call {
    const vl_volume *labels;
    const vl_volume *intensity;
    uint32_t count;
    const vl_stats_options *options;
    vl_component_stats **stats;
} stats_call;

static vl_status stats_gpu(void *context)
{
    const stats_call *c = context;
    return compute_gpu(c->labels, c->intensity, c->count, c->options, c->stats);
}

static vl_status stats_cpu(void *context)
{
    const stats_call *c = context;
    return vl_component_stats_compute_cpu(c->labels, c->intensity, c->count, c->options, c->stats);
}

vl_status vl_component_stats_compute(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                     const vl_stats_options *options, vl_component_stats **stats)
{
    vl_stats_options defaults;
    vl_status status = vl_stats_begin(&options, &defaults, stats);
    if (status != VL_OK)
        return status;
    stats_call call = {labels, intensity, count, options, stats};
    return vl_device_run(&options->device, stats_gpu, stats_cpu, &call, options->outcome);
}
