/* The expensive full-level columns: each VL_STATS_EXTRA_* group asked for runs on the CPU over the host
 * label volume, after the sums of either backend are finalised; the fields of the others stay NaN. */
#include <math.h>

#include "core/parallel.h"
#include "stats/stats_extras.h"

static void clear_extras(vl_component_stats *s)
{
    double *const fields[] = {&s->surface_area_mm2, &s->sphericity, &s->euler_number, &s->perimeter_on_border_mm2, &s->perimeter_on_border_ratio,
                              &s->intensity_skewness, &s->intensity_kurtosis, &s->convex_hull_vertices,
                              &s->convex_volume_voxels, &s->convex_volume_mm3, &s->solidity, &s->feret_max_mm,
                              &s->feret_min_mm};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = NAN;
    for (int r = 0; r < 3; r++)
        s->feret_max_a_lps[r] = s->feret_max_b_lps[r] = s->feret_min_a_lps[r] = s->feret_min_b_lps[r] =
            s->obb_centre_lps[r] = s->obb_size_mm[r] = NAN;
}

vl_status vl_stats_extras(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                          const vl_stats_options *options, const int64_t *euler, vl_component_stats *stats)
{
    for (uint32_t k = 0; k < count; k++)
        clear_extras(&stats[k]);
    if (options->level != VL_STATS_FULL || count == 0)
        return VL_OK;
    const int threads = vl_cpu_thread_count(options->threads);
    vl_status status = VL_OK;
    if (options->extras & VL_STATS_EXTRA_VOXEL)
        status = vl_stats_voxel_moments(labels, intensity, count, threads, stats);
    const int connectivity = options->connectivity; /* vl_stats_begin resolved 0 to 26 */
    if (status == VL_OK && (options->extras & VL_STATS_EXTRA_EULER) && (connectivity == 6 || connectivity == 26)) {
        if (euler)
            for (uint32_t k = 0; k < count; k++)
                stats[k].euler_number = stats[k].voxels ? (double)euler[k] : 0;
        else
            status = vl_stats_euler(labels, count, connectivity, threads, stats);
    }
    if (status == VL_OK && (options->extras & VL_STATS_EXTRA_SURFACE))
        status = vl_stats_surface(labels, count, threads, stats);
    if (status == VL_OK && (options->extras & VL_STATS_EXTRA_HULL))
        status = vl_stats_hulls(labels, count, threads, stats, options->hulls);
    return status;
}
