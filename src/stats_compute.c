/* vl_component_stats_compute: picks the backend. */
#include "stats_internal.h"
#include "status.h"

vl_status vl_component_stats_compute(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                     const vl_stats_options *options, vl_component_stats **stats)
{
    return vl_component_stats_compute_cpu(labels, intensity, count, options, stats);
}
