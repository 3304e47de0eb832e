/* Internal: the per-component sums that a statistics pass accumulates (CPU in src/stats/stats_cpu.c, GPU in
 * cuda/stats/stats_gpu.cu) and the shared step that turns them into vl_component_stats (src/stats/stats_finalize.c).
 * Because both backends hand the same sums to the same finaliser, every value derived from integer sums
 * is bit-identical between them. */
#ifndef VL_STATS_INTERNAL_H
#define VL_STATS_INTERNAL_H

#include <stdint.h>

#include "voxlabel/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sums over one component that every level needs. Coordinates are 0-based voxel indices; integer sums are
 * exact. Intensity sums are double: sums of integer-valued HU are exact below 2^53, hence independent of
 * the summation order, so the CPU and the GPU agree bit for bit on them for integer volumes. */
typedef struct vl_stats_sums {
    uint64_t voxels;
    int64_t bbox_min[3], bbox_max[3];
    uint64_t coordinate_sum[3];        /* sum x, sum y, sum z */
    double intensity_min, intensity_max, intensity_sum, intensity_sum_squares;
    double weighted_coordinate_sum[3]; /* sum v*x, v*y, v*z */
} vl_stats_sums;

/* Extra sums of the full level, kept apart so that the basic level touches less memory. */
typedef struct vl_stats_shape_sums {
    uint64_t moment_sum[6];            /* sum xx, yy, zz, xy, xz, yz */
    uint64_t border_voxels;
    uint64_t crossings[VL_STATS_DIRECTIONS]; /* pairs (p, p +- d), p inside and p +- d not, per line class */
} vl_stats_shape_sums;

/* Lattice line classes d = (dx, dy, dz): 0-2 axes x, y, z; 3-8 face diagonals; 9-12 body diagonals. */
extern const int vl_stats_direction[VL_STATS_DIRECTIONS][3];
/* Class of the offset (dx, dy, dz) in {-1,0,1}^3 (d and -d share one class); -1 for (0,0,0). */
int vl_stats_direction_class(int dx, int dy, int dz);

/* Sets every sum to its empty value (0, +inf/-inf for min/max, bbox inverted). */
void vl_stats_sums_clear(vl_stats_sums *sums, uint32_t count);

/* The working arrays of one statistics call: per-component sums (`copies` sets of them, one per CPU
 * thread), shape sums at the full level, medians at the full level with intensity, and the result. */
typedef struct vl_stats_buffers {
    vl_stats_sums *sums;
    vl_stats_shape_sums *shape;
    double *medians;
    vl_component_stats *result;
} vl_stats_buffers;

/* The start of every statistics entry: NULL `*options` become the defaults (kept in `defaults`), and
 * `stats` must point somewhere (*stats is set to NULL). */
vl_status vl_stats_begin(const vl_stats_options **options, vl_stats_options *defaults, vl_component_stats **stats);

/* Allocates them all, or none with VL_ERR_MEMORY. */
vl_status vl_stats_buffers_allocate(vl_stats_buffers *buffers, uint32_t count, int copies, int full,
                                    int has_intensity);
/* Frees the working arrays; hands the result to *stats when `status` is VL_OK, frees it otherwise.
 * Returns `status`. */
vl_status vl_stats_buffers_finish(vl_stats_buffers *buffers, vl_status status, vl_component_stats **stats);

/* Returns VL_ERR_INPUT when a volume is so large that the exact 64-bit second moments could overflow. */
vl_status vl_stats_check_limits(const vl_volume *labels, const vl_volume *intensity);

/* Turns the sums into statistics; the geometry comes from the labels volume. `shape` (full level) and
 * `medians` (full level with intensity) may be NULL. */
void vl_stats_finalize(const vl_stats_sums *sums, const vl_stats_shape_sums *shape, const double *medians,
                       uint32_t count, const vl_volume *labels, int has_intensity, vl_stats_level level,
                       vl_component_stats *stats);

/* Crofton weights of the 13 line classes for this geometry: the fraction of the unit sphere closest to
 * each physical direction (Voronoi cells of +-d), computed once per call by quadrature. */
void vl_stats_crofton_weights(const vl_geometry *geometry, double weights[VL_STATS_DIRECTIONS]);

/* Median of values[0..n-1] (reorders them); NaN when n = 0. */
double vl_stats_median(double *values, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif
