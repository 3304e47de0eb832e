/* The voxel group of extra columns: the component's faces on the volume's boundary (ITK PerimeterOnBorder)
 * and the third and fourth central moments of the intensity (skewness, kurtosis), in one pass over the
 * voxels. The moments are taken about the mean the finaliser already computed (two-pass form, stable for
 * HU far from 0). Threads sum slabs of z into their own arrays, merged in thread order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "core/parallel.h"
#include "stats/stats_extras.h"
#include "stats/stats_shape.h"
#include "voxlabel/error.h"

enum { sums_per_label = 4 }; /* border area, sum d^2, sum d^3, sum d^4 */

typedef struct moment_job {
    const vl_volume *labels, *intensity;
    const vl_component_stats *stats;
    double face_area[3];
    int64_t z_begin, z_end;
    double *sums;
} moment_job;

static uint32_t label_at(const vl_volume *v, int64_t i)
{
    switch (v->dtype) {
    case VL_U8: return ((const uint8_t *)v->data)[i];
    case VL_U16: return ((const uint16_t *)v->data)[i];
    default: return ((const uint32_t *)v->data)[i];
    }
}

static void *accumulate(void *argument)
{
    moment_job *job = argument;
    const vl_volume *v = job->labels;
    const int64_t nx = v->nx, ny = v->ny, nz = v->nz;
    for (int64_t z = job->z_begin; z < job->z_end; z++)
        for (int64_t y = 0; y < ny; y++) {
            const int64_t start = nx * (y + ny * z);
            /* Faces on the boundary planes y = 0, y = ny - 1, z = 0, z = nz - 1 for the whole row. */
            const double row_faces = ((y == 0) + (y == ny - 1)) * job->face_area[1] +
                                     ((z == 0) + (z == nz - 1)) * job->face_area[2];
            for (int64_t x = 0; x < nx; x++) {
                const uint32_t a = label_at(v, start + x);
                if (!a)
                    continue;
                double *s = job->sums + sums_per_label * (size_t)(a - 1);
                s[0] += row_faces + ((x == 0) + (x == nx - 1)) * job->face_area[0];
                if (job->intensity) {
                    const double d = vl_volume_value(job->intensity, start + x) - job->stats[a - 1].intensity_mean;
                    const double d2 = d * d;
                    s[1] += d2;
                    s[2] += d2 * d;
                    s[3] += d2 * d2;
                }
            }
        }
    return NULL;
}

vl_status vl_stats_voxel_moments(const vl_volume *labels, const vl_volume *intensity, uint32_t count, int threads,
                                 vl_component_stats *stats)
{
    if (threads > labels->nz)
        threads = (int)labels->nz;
    const size_t per_thread = (size_t)count * sums_per_label;
    double *sums = vl_allocate_large(sizeof *sums * per_thread * (size_t)threads);
    if (!sums)
        return vl_fail(VL_ERR_MEMORY, "statistics: no memory for the moments of %u components", count);
    memset(sums, 0, sizeof *sums * per_thread * (size_t)threads);
    moment_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        jobs[t] = (moment_job){labels, intensity, stats, {0, 0, 0}, labels->nz * t / threads,
                               labels->nz * (t + 1) / threads, sums + per_thread * (size_t)t};
        for (int axis = 0; axis < 3; axis++)
            jobs[t].face_area[axis] = vl_stats_face_area(&labels->geometry, axis);
    }
    vl_run_parallel(accumulate, jobs, sizeof jobs[0], threads);
    for (uint32_t k = 0; k < count; k++) {
        double total[sums_per_label] = {0, 0, 0, 0};
        for (int t = 0; t < threads; t++)
            for (int i = 0; i < sums_per_label; i++)
                total[i] += sums[per_thread * (size_t)t + sums_per_label * (size_t)k + i];
        vl_component_stats *out = &stats[k];
        out->perimeter_on_border_mm2 = out->voxels ? total[0] : NAN;
        out->perimeter_on_border_ratio =
            out->surface_area_itk_mm2 > 0 ? out->perimeter_on_border_mm2 / out->surface_area_itk_mm2 : NAN;
        const double n = (double)out->voxels, m2 = total[1] / n;
        out->intensity_skewness = intensity && out->voxels && m2 > 0 ? total[2] / n / pow(m2, 1.5) : NAN;
        out->intensity_kurtosis = intensity && out->voxels && m2 > 0 ? total[3] / n / (m2 * m2) - 3 : NAN;
    }
    free(sums);
    return VL_OK;
}
