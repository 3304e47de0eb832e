/* vl_component_stats_compute: picks the backend (DESIGN section 5: GPU when usable under AUTO), then runs the
 * shared finaliser on the GPU's sums. */
#include <stdlib.h>

#include "label_gpu.h"
#include "stats_gpu.h"
#include "stats_internal.h"
#include "memory.h"
#include "status.h"

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
    if (options->device == VL_DEVICE_CPU)
        return vl_component_stats_compute_cpu(labels, intensity, count, options, stats);
    char why[256];
    if (!vl_gpu_usable(options->gpu_index, why, sizeof why)) {
        if (options->device == VL_DEVICE_GPU)
            return vl_fail(VL_ERR_DEVICE, "gpu:%d: %s", options->gpu_index, why);
        return vl_component_stats_compute_cpu(labels, intensity, count, options, stats);
    }
    vl_status status = compute_gpu(labels, intensity, count, options, stats);
    /* Under AUTO a device that runs out of memory or fails hands the work to the CPU reference. */
    if (options->device == VL_DEVICE_AUTO && (status == VL_ERR_DEVICE || status == VL_ERR_MEMORY))
        return vl_component_stats_compute_cpu(labels, intensity, count, options, stats);
    return status;
}
