/* Internal: statistics of labels and intensity already on the device (src/stats/stats_resident.c), for the
 * device-resident series (cuda/series/series_gpu.cu). */
#ifndef VL_STATS_RESIDENT_H
#define VL_STATS_RESIDENT_H

#include "voxlabel/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What vl_component_stats_compute gives on the GPU for `labels` and `intensity`, with the GPU's sums (and the
 * Euler numbers) taken from their device copies: `device_labels` (u32, the labels' values) and
 * `device_intensity` (intensity's dtype; NULL when intensity is NULL), on the current device. The host volumes
 * serve the geometry and the groups computed on the CPU (hull, surface, voxel moments), as on the GPU path. */
vl_status vl_stats_compute_resident(const uint32_t *device_labels, const void *device_intensity,
                                    const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                    const vl_stats_options *options, vl_component_stats **stats);

#ifdef __cplusplus
}
#endif
#endif
