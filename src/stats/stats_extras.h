/* Internal: the expensive full-level columns (VL_STATS_EXTRA_* groups), computed on the CPU from the host
 * label volume after either backend's sums have been finalised (src/stats/stats_extras.c). */
#ifndef VL_STATS_EXTRAS_H
#define VL_STATS_EXTRAS_H

#include "voxlabel/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the groups options->extras asks for and fills their fields (the others become NaN). `euler` holds
 * Euler numbers already counted on the GPU (NULL: count them here). */
vl_status vl_stats_extras(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                          const vl_stats_options *options, const int64_t *euler, vl_component_stats *stats);

/* Hull group (stats_geometry.c). */
vl_status vl_stats_hulls(const vl_volume *labels, uint32_t count, int threads, vl_component_stats *stats,
                         vl_convex_hulls *hulls);
/* Surface group (stats_surface.c). */
vl_status vl_stats_surface(const vl_volume *labels, uint32_t count, int threads, vl_component_stats *stats);
/* Euler group (stats_euler.c): connectivity 6 or 26. */
vl_status vl_stats_euler(const vl_volume *labels, uint32_t count, int connectivity, int threads,
                         vl_component_stats *stats);
/* Voxel group (stats_voxel_moments.c): perimeter on border, skewness and kurtosis (intensity may be NULL). */
vl_status vl_stats_voxel_moments(const vl_volume *labels, const vl_volume *intensity, uint32_t count, int threads,
                                 vl_component_stats *stats);

/* The contribution of one 2x2x2 window to the Euler number of the voxels whose bits are set in `config`
 * (bit dx + 2 dy + 4 dz), for connectivity 6 or 26; exposed for the unit test. */
int vl_stats_euler_window(unsigned config, int connectivity);

#ifdef __cplusplus
}
#endif
#endif
