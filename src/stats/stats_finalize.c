/* Turns per-component sums (from either backend) into the published statistics (formulas: docs/csv.md). */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "stats/stats_internal.h"
#include "stats/stats_shape.h"

static const double pi = 3.14159265358979323846;

/* Population covariance of the voxel indices, exact up to the final division:
 * cov_ab = (N sum_ab - sum_a sum_b) / N^2 with 128-bit products. */
static void index_covariance(const vl_stats_sums *s, const vl_stats_shape_sums *shape, double covariance[9])
{
    static const int pair[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    const double n2 = (double)s->voxels * (double)s->voxels;
    for (int m = 0; m < 6; m++) {
        const int a = pair[m][0], b = pair[m][1];
        const __int128 numerator = (__int128)s->voxels * (__int128)shape->moment_sum[m] -
                                   (__int128)s->coordinate_sum[a] * (__int128)s->coordinate_sum[b];
        covariance[3 * a + b] = covariance[3 * b + a] = (double)numerator / n2;
    }
}

/* Per-geometry constants of the surface estimates, computed once per call. */
typedef struct surface_constants {
    double face_area[3];                      /* mm^2 of a face normal to x, y, z */
    double crofton[VL_STATS_DIRECTIONS];      /* 2 V w_c / |d_c|: mm^2 per crossing of line class c */
    double itk[VL_STATS_DIRECTIONS];          /* the same with ITK's weights, fixed whatever the spacing */
} surface_constants;

/* ITK's Perimeter weights (ShapeLabelMapFilter): the isotropic Voronoi fractions of an axis, a face
 * diagonal and a body diagonal, used by ITK for every spacing. */
static const double itk_weight[3] = {2 * 0.04577789120476, 2 * 0.03698062787608, 2 * 0.03519563978232};

static void surface_constants_init(const vl_geometry *g, surface_constants *constants)
{
    double weights[VL_STATS_DIRECTIONS];
    vl_stats_crofton_weights(g, weights);
    const double voxel_volume = vl_geometry_voxel_volume(g);
    for (int axis = 0; axis < 3; axis++)
        constants->face_area[axis] = vl_stats_face_area(g, axis);
    /* Crofton: S = 2 E_u[intersections] / line density, and lattice lines along d have density |d| / V. */
    for (int c = 0; c < VL_STATS_DIRECTIONS; c++) {
        constants->crofton[c] = 2 * voxel_volume * weights[c] / vl_stats_step_length(g, c);
        constants->itk[c] = 2 * voxel_volume * itk_weight[c < 3 ? 0 : c < 9 ? 1 : 2] / vl_stats_step_length(g, c);
    }
}

/* MATLAB Orientation as [roll pitch yaw] in degrees: the Z-Y-X (yaw, pitch, roll) Euler angles of the
 * rotation whose columns are the eigenvectors (the third negated when they form a left-handed frame). */
static void orientation_angles(const double v[9], double angles[3])
{
    double r[9];
    for (int i = 0; i < 9; i++)
        r[i] = v[i];
    const double det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) +
                       r[2] * (r[3] * r[7] - r[4] * r[6]);
    if (det < 0)
        for (int k = 0; k < 3; k++)
            r[3 * k + 2] = -r[3 * k + 2];
    const double degrees = 180 / pi;
    angles[0] = atan2(r[7], r[8]) * degrees;
    angles[1] = atan2(-r[6], sqrt(r[7] * r[7] + r[8] * r[8])) * degrees;
    angles[2] = atan2(r[3], r[0]) * degrees;
}

static void shape_statistics(const vl_stats_sums *s, const vl_stats_shape_sums *shape, const vl_geometry *g,
                             const surface_constants *surface, vl_component_stats *out)
{
    double covariance[9], eigenvalues[3];
    index_covariance(s, shape, covariance);
    /* MATLAB: covariance of [x y z] indices plus the second moment of a unit voxel (1/12) on the diagonal. */
    double matlab[9];
    memcpy(matlab, covariance, sizeof matlab);
    for (int axis = 0; axis < 3; axis++)
        matlab[4 * axis] += 1.0 / 12.0;
    vl_stats_eigen_symmetric3(matlab, out->matlab_eigenvalues, out->matlab_eigenvectors);
    orientation_angles(out->matlab_eigenvectors, out->matlab_orientation_deg);
    for (int i = 0; i < 3; i++) {
        const double lambda = out->matlab_eigenvalues[i] > 0 ? out->matlab_eigenvalues[i] : 0;
        out->matlab_axis_length[i] = 2 * sqrt(5 * lambda);
        out->matlab_axis_length_old[i] = 4 * sqrt(lambda);
    }
    /* Physical covariance of voxel centres: A C A^T with A = direction * diag(spacing) (ITK, no voxel term). */
    double a[9], ac[9], physical[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            a[3 * r + c] = g->direction[3 * r + c] * g->spacing[c];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            ac[3 * r + c] = a[3 * r] * covariance[c] + a[3 * r + 1] * covariance[3 + c] + a[3 * r + 2] * covariance[6 + c];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            physical[3 * r + c] = ac[3 * r] * a[3 * c] + ac[3 * r + 1] * a[3 * c + 1] + ac[3 * r + 2] * a[3 * c + 2];
    vl_stats_eigen_symmetric3(physical, eigenvalues, out->principal_axes);
    for (int i = 0; i < 3; i++)
        out->principal_moments_mm2[i] = eigenvalues[i] > 0 ? eigenvalues[i] : 0;
    const double *m = out->principal_moments_mm2;
    out->elongation = m[1] > 0 ? sqrt(m[0] / m[1]) : 0;
    out->flatness = m[2] > 0 ? sqrt(m[1] / m[2]) : 0;

    out->surface_faces = shape->crossings[0] + shape->crossings[1] + shape->crossings[2];
    out->surface_area_faces_mm2 = 0;
    for (int axis = 0; axis < 3; axis++)
        out->surface_area_faces_mm2 += (double)shape->crossings[axis] * surface->face_area[axis];
    out->surface_area_crofton_mm2 = 0;
    for (int c = 0; c < VL_STATS_DIRECTIONS; c++)
        out->surface_area_crofton_mm2 += surface->crofton[c] * (double)shape->crossings[c];
    out->sphericity_crofton = out->surface_area_crofton_mm2 > 0
                                  ? cbrt(pi) * pow(6 * out->volume_mm3, 2.0 / 3.0) / out->surface_area_crofton_mm2
                                  : NAN;
    out->surface_area_itk_mm2 = 0;
    for (int c = 0; c < VL_STATS_DIRECTIONS; c++)
        out->surface_area_itk_mm2 += surface->itk[c] * (double)shape->crossings[c];
    /* ITK: the ball of equal volume, radius r; its area over the perimeter; the ellipsoid with the principal
     * moments' proportions scaled to that ball's volume. */
    const double radius = cbrt(3 * out->volume_mm3 / (4 * pi));
    out->roundness = out->surface_area_itk_mm2 > 0 ? 4 * pi * radius * radius / out->surface_area_itk_mm2 : NAN;
    const double mean_moment = cbrt(m[0] * m[1] * m[2]);
    for (int i = 0; i < 3; i++)
        out->equivalent_ellipsoid_diameter_mm[i] = mean_moment > 0 ? 2 * radius * sqrt(m[i] / mean_moment) : 0;
}

/* Components first .. end - 1 of one finalize call: each depends on its own sums only. */
typedef struct finalize_job {
    const vl_stats_sums *sums;
    const vl_stats_shape_sums *shape;
    const double *medians;
    const vl_geometry *geometry;
    const surface_constants *surface;
    int has_intensity;
    vl_stats_level level;
    vl_component_stats *stats;
    uint32_t first, end;
} finalize_job;

static void *finalize_range(void *argument)
{
    const finalize_job *job = argument;
    const vl_stats_sums *sums = job->sums;
    const vl_stats_shape_sums *shape = job->shape;
    const double *medians = job->medians;
    const vl_geometry *g = job->geometry;
    const surface_constants surface = *job->surface;
    const int has_intensity = job->has_intensity;
    const vl_stats_level level = job->level;
    vl_component_stats *stats = job->stats;
    const double voxel_volume = vl_geometry_voxel_volume(g);
    for (uint32_t k = job->first; k < job->end; k++) {
        const vl_stats_sums *s = &sums[k];
        vl_component_stats *out = &stats[k];
        memset(out, 0, sizeof *out);
        out->label = k + 1;
        out->voxels = s->voxels;
        out->volume_mm3 = (double)s->voxels * voxel_volume;
        out->equivalent_diameter_mm = cbrt(6 * out->volume_mm3 / pi);
        out->equivalent_diameter_voxels = cbrt(6 * (double)s->voxels / pi);
        const double n = (double)s->voxels;
        const int present = s->voxels > 0;
        double box_voxels = 1;
        for (int axis = 0; axis < 3; axis++) {
            out->centroid_voxel[axis] = present ? (double)s->coordinate_sum[axis] / n : NAN;
            out->bbox_min[axis] = present ? s->bbox_min[axis] : -1;
            out->bbox_max[axis] = present ? s->bbox_max[axis] : -1;
            const int64_t width = present ? s->bbox_max[axis] - s->bbox_min[axis] + 1 : 0;
            out->bbox_extent_mm[axis] = (double)width * g->spacing[axis];
            box_voxels *= (double)width;
        }
        out->extent = present ? n / box_voxels : NAN;
        vl_geometry_index_to_lps(g, out->centroid_voxel[0], out->centroid_voxel[1], out->centroid_voxel[2],
                                 out->centroid_lps);
        if (has_intensity && present) {
            const double mean = s->intensity_sum / n;
            out->intensity_min = s->intensity_min;
            out->intensity_max = s->intensity_max;
            out->intensity_mean = mean;
            out->intensity_sum = s->intensity_sum;
            const double variance = s->intensity_sum_squares / n - mean * mean;
            out->intensity_std = sqrt(variance > 0 ? variance : 0);
            out->intensity_median = medians ? medians[k] : NAN;
            for (int axis = 0; axis < 3; axis++)
                out->weighted_centroid_voxel[axis] =
                    s->intensity_sum != 0 ? s->weighted_coordinate_sum[axis] / s->intensity_sum : NAN;
            vl_geometry_index_to_lps(g, out->weighted_centroid_voxel[0], out->weighted_centroid_voxel[1],
                                     out->weighted_centroid_voxel[2], out->weighted_centroid_lps);
        } else {
            out->intensity_min = out->intensity_max = out->intensity_mean = NAN;
            out->intensity_sum = out->intensity_std = out->intensity_median = NAN;
            for (int axis = 0; axis < 3; axis++)
                out->weighted_centroid_voxel[axis] = out->weighted_centroid_lps[axis] = NAN;
        }
        if (level != VL_STATS_FULL || !shape)
            continue;
        out->border_voxels = shape[k].border_voxels;
        if (present)
            shape_statistics(s, &shape[k], g, &surface, out);
        else {
            for (int i = 0; i < 3; i++)
                out->principal_moments_mm2[i] = out->matlab_eigenvalues[i] = out->matlab_axis_length[i] =
                    out->matlab_axis_length_old[i] = NAN;
            for (int i = 0; i < 9; i++)
                out->principal_axes[i] = out->matlab_eigenvectors[i] = NAN;
            for (int i = 0; i < 3; i++)
                out->equivalent_ellipsoid_diameter_mm[i] = out->matlab_orientation_deg[i] = NAN;
            out->elongation = out->flatness = out->sphericity_crofton = out->roundness = out->surface_area_itk_mm2 = NAN;
        }
    }
    return NULL;
}

void vl_stats_finalize(const vl_stats_sums *sums, const vl_stats_shape_sums *shape, const double *medians,
                       uint32_t count, const vl_volume *labels, int has_intensity, vl_stats_level level,
                       vl_component_stats *stats)
{
    surface_constants surface = {0};
    if (level == VL_STATS_FULL && count)
        surface_constants_init(&labels->geometry, &surface);
    /* An eigen-decomposition per component is cheap: a thread per 4096 components at most. */
    finalize_job jobs[VL_MAX_THREADS];
    const int cores = vl_cpu_thread_count(0), wanted = (int)(count / 4096) + 1;
    const int threads = cores < wanted ? cores : wanted;
    for (int t = 0; t < threads; t++)
        jobs[t] = (finalize_job){sums, shape, medians, &labels->geometry, &surface, has_intensity, level, stats,
                                 (uint32_t)((uint64_t)count * t / threads),
                                 (uint32_t)((uint64_t)count * (t + 1) / threads)};
    vl_run_parallel(finalize_range, jobs, sizeof jobs[0], threads);
}
