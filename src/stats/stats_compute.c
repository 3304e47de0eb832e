/* vl_component_stats_compute: the dispatch between the CPU reference (stats_cpu.c) and the GPU sums
 * (cuda/stats/stats_gpu.cu) under the device policy; the GPU's sums go through the shared finaliser. */
#include <stdlib.h>

#include "core/device.h"
#include "core/memory.h"
#include "voxlabel/error.h"
#include "stats/stats_gpu.h"
#include "stats/stats_internal.h"

static vl_status compute_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                             const vl_stats_options *options, vl_component_stats **stats)
{
    vl_status status = vl_stats_check_limits(labels, intensity);
    if (status != VL_OK || count == 0)
        return status;
    const int full = options->level == VL_STATS_FULL;
    const size_t n = count;
    vl_stats_sums *sums = vl_allocate_large(sizeof *sums * n);
    vl_stats_shape_sums *shape = full ? vl_allocate_large(sizeof *shape * n) : NULL;
    double *medians = full && intensity ? vl_allocate_large(sizeof *medians * n) : NULL;
    vl_component_stats *result = vl_allocate_large(sizeof *result * n);
    if (!sums || (full && !shape) || (full && intensity && !medians) || !result)
        status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for %u components", count);
    vl_stats_gpu_timing timing;
    if (status == VL_OK)
        status = vl_stats_sums_gpu(labels, intensity, count, options, sums, shape, medians, &timing);
    if (status == VL_OK)
        vl_stats_finalize(sums, shape, medians, count, labels, intensity != NULL, options->level, result);
    free(sums);
    free(shape);
    free(medians);
    if (status != VL_OK) {
        free(result);
        return status;
    }
    *stats = result;
    return VL_OK;
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
    if (!options) {
        vl_stats_options_default(&defaults);
        options = &defaults;
    }
    if (!stats)
        return vl_fail(VL_ERR_ARGUMENT, "statistics: no output pointer");
    *stats = NULL;
    stats_call call = {labels, intensity, count, options, stats};
    return vl_device_run(&options->device, stats_gpu, stats_cpu, &call, options->outcome);
}
