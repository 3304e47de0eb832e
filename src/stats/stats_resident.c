/* vl_stats_compute_resident: compute_gpu of stats_compute.c for volumes already on the device; the same sums,
 * finaliser and CPU groups, without the uploads. */
#include <stdlib.h>

#include "stats/stats_extras.h"
#include "stats/stats_gpu.h"
#include "stats/stats_internal.h"
#include "stats/stats_resident.h"
#include "voxlabel/error.h"

vl_status vl_stats_compute_resident(const uint32_t *device_labels, const void *device_intensity,
                                    const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                    const vl_stats_options *options, vl_component_stats **stats)
{
    vl_stats_options defaults;
    vl_status status = vl_stats_begin(&options, &defaults, stats);
    if (status != VL_OK)
        return status;
    if ((status = vl_stats_check_limits(labels, intensity)) != VL_OK || count == 0)
        return status;
    vl_stats_buffers b;
    if ((status = vl_stats_buffers_allocate(&b, count, 1, options->level == VL_STATS_FULL, intensity != NULL)) !=
        VL_OK)
        return status;
    int64_t *euler = NULL;
    if (options->level == VL_STATS_FULL && (options->extras & VL_STATS_EXTRA_EULER) &&
        (options->connectivity == 6 || options->connectivity == 26) && !(euler = malloc(sizeof *euler * count)))
        status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for %u Euler numbers", count);
    if (status == VL_OK)
        status = vl_stats_sums_gpu_device(device_labels, intensity ? device_intensity : NULL,
                                          intensity ? intensity->dtype : VL_I16, labels->nx, labels->ny, labels->nz,
                                          count, options->level, b.sums, b.shape, b.medians, NULL);
    if (status == VL_OK && euler)
        status = vl_stats_euler_gpu_device(device_labels, labels->nx, labels->ny, labels->nz, count,
                                           options->connectivity, euler);
    if (status == VL_OK) {
        vl_stats_finalize(b.sums, b.shape, b.medians, count, labels, intensity != NULL, options->level, b.result);
        status = vl_stats_extras(labels, intensity, count, options, euler, b.result);
    }
    free(euler);
    return vl_stats_buffers_finish(&b, status, stats);
}
