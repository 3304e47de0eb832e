/* surface_area_mm2: the area of every component from its voxel faces weighted by the surface normal
 * (the VL_STATS_EXTRA_SURFACE group, on the CPU for either backend).
 *
 * A boundary face of physical area a_f and normal e_f contributes a_f |n . e_f|, where n is the unit normal
 * of the true surface there: the faces of a staircase then add up to the area of the surface they
 * digitise, whatever its orientation, instead of the 1.5x of plain face counting. n is estimated as the
 * gradient of the component's indicator smoothed by a Gaussian of sigma = the largest voxel side in mm
 * (at least one voxel along every axis, so that the staircase ripple in the gradient is negligible), taken
 * at the face as the mean of central differences at its two voxels. The error falls with the voxel size for
 * smooth surfaces (the normals become exact); sharp edges are rounded over about sigma. Each component is
 * smoothed alone, in its bounding box grown by the kernel's reach, so neighbours never blur into it. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "stats/stats_extras.h"
#include "stats/stats_shape.h"
#include "voxlabel/error.h"

typedef struct surface_geometry {
    double sigma[3];           /* index units */
    int radius[3];             /* kernel half-widths */
    double *kernel[3];         /* normalised, 2 radius + 1 taps */
    double inverse_transpose[9]; /* A^-T, A = direction * diag(spacing): index gradient -> physical */
    double face_normal[3][3];  /* unit physical normal of a face across index axis a */
    double face_area[3];
} surface_geometry;

typedef struct surface_job {
    const vl_volume *labels;
    const surface_geometry *geometry;
    vl_component_stats *stats;
    uint32_t count;
    atomic_uint *next;
    int failed;
} surface_job;

/* mask[i] = 1 where the labels equal `label`, over the box of n voxels at `origin` (the box's part outside
 * the volume stays 0); only the component's bounding box can hold it. */
static void fill_mask(const vl_volume *v, uint32_t label, const int64_t origin[3], const int64_t n[3],
                      const int64_t lo[3], const int64_t hi[3], uint8_t *mask)
{
    memset(mask, 0, (size_t)(n[0] * n[1] * n[2]));
    for (int64_t z = lo[2]; z <= hi[2]; z++)
        for (int64_t y = lo[1]; y <= hi[1]; y++) {
            const int64_t start = v->nx * (y + v->ny * z);
            uint8_t *row = mask + (y - origin[1]) * n[0] + (z - origin[2]) * n[0] * n[1] - origin[0];
            switch (v->dtype) {
            case VL_U8: {
                const uint8_t *in = (const uint8_t *)v->data + start;
                for (int64_t x = lo[0]; x <= hi[0]; x++)
                    row[x] = in[x] == label;
                break;
            }
            case VL_U16: {
                const uint16_t *in = (const uint16_t *)v->data + start;
                for (int64_t x = lo[0]; x <= hi[0]; x++)
                    row[x] = in[x] == label;
                break;
            }
            default: {
                const uint32_t *in = (const uint32_t *)v->data + start;
                for (int64_t x = lo[0]; x <= hi[0]; x++)
                    row[x] = in[x] == label;
                break;
            }
            }
        }
}

/* out = in convolved with the kernel along one axis of a n[0] x n[1] x n[2] box (zero outside). A line of
 * `in` that is all zero stays zero, which skips most of the box for thin or sparse components. */
static void blur_axis(const float *in, float *out, const int64_t n[3], int axis, const double *kernel, int radius)
{
    const int64_t stride = axis == 0 ? 1 : axis == 1 ? n[0] : n[0] * n[1];
    const int64_t length = n[axis];
    /* The lines along `axis`: start index and step between lines. */
    const int64_t lines = n[0] * n[1] * n[2] / length;
    for (int64_t line = 0; line < lines; line++) {
        int64_t start;
        if (axis == 0)
            start = line * n[0];
        else if (axis == 1)
            start = (line % n[0]) + (line / n[0]) * n[0] * n[1];
        else
            start = line;
        int any = 0;
        for (int64_t p = 0; p < length && !any; p++)
            any = in[start + p * stride] != 0;
        if (!any) {
            for (int64_t p = 0; p < length; p++)
                out[start + p * stride] = 0;
            continue;
        }
        for (int64_t p = 0; p < length; p++) {
            const int lo = p - radius < 0 ? (int)(radius - p) : 0;
            const int hi = p + radius >= length ? (int)(radius + length - 1 - p) : 2 * radius;
            double sum = 0;
            const float *at = in + start + (p - radius) * stride;
            for (int t = lo; t <= hi; t++)
                sum += kernel[t] * at[t * stride];
            out[start + p * stride] = (float)sum;
        }
    }
}

static void *measure_components(void *argument)
{
    surface_job *job = argument;
    const surface_geometry *g = job->geometry;
    const vl_volume *labels = job->labels;
    float *field = NULL, *scratch = NULL;
    uint8_t *mask = NULL;
    size_t capacity = 0;
    for (;;) {
        const uint32_t k = atomic_fetch_add(job->next, 1);
        if (k >= job->count)
            break;
        vl_component_stats *out = &job->stats[k];
        if (!out->voxels)
            continue;
        const uint32_t label = k + 1;
        int64_t origin[3], n[3];
        for (int a = 0; a < 3; a++) {
            const int64_t margin = g->radius[a] + 2;
            origin[a] = out->bbox_min[a] - margin;
            n[a] = out->bbox_max[a] - out->bbox_min[a] + 1 + 2 * margin;
        }
        const size_t size = (size_t)(n[0] * n[1] * n[2]);
        if (size > capacity) {
            float *f = realloc(field, size * sizeof *f), *s = f ? realloc(scratch, size * sizeof *s) : NULL;
            uint8_t *m = s ? realloc(mask, size) : NULL;
            if (f)
                field = f;
            if (s)
                scratch = s;
            if (!m) {
                job->failed = 1;
                break;
            }
            mask = m;
            capacity = size;
        }
        fill_mask(labels, label, origin, n, out->bbox_min, out->bbox_max, mask);
        for (size_t i = 0; i < size; i++)
            field[i] = mask[i];
        blur_axis(field, scratch, n, 0, g->kernel[0], g->radius[0]);
        blur_axis(scratch, field, n, 1, g->kernel[1], g->radius[1]);
        blur_axis(field, scratch, n, 2, g->kernel[2], g->radius[2]);
        const float *f = scratch;
        const int64_t step[3] = {1, n[0], n[0] * n[1]};
        double area = 0;
        for (int64_t z = out->bbox_min[2]; z <= out->bbox_max[2]; z++)
            for (int64_t y = out->bbox_min[1]; y <= out->bbox_max[1]; y++)
                for (int64_t x = out->bbox_min[0]; x <= out->bbox_max[0]; x++) {
                    const int64_t i = (x - origin[0]) + n[0] * ((y - origin[1]) + n[1] * (z - origin[2]));
                    if (!mask[i])
                        continue;
                    for (int a = 0; a < 3; a++)
                        for (int side = -1; side <= 1; side += 2) {
                            /* The box's margin holds every neighbour; outside the volume the mask is 0. */
                            const int64_t j = i + side * step[a];
                            if (mask[j])
                                continue;
                            /* Index gradient at the face: the mean of the central differences at i and j. */
                            double gradient[3], physical[3];
                            for (int b = 0; b < 3; b++)
                                gradient[b] = 0.25 * ((double)f[i + step[b]] - (double)f[i - step[b]] +
                                                      (double)f[j + step[b]] - (double)f[j - step[b]]);
                            for (int r = 0; r < 3; r++)
                                physical[r] = g->inverse_transpose[3 * r] * gradient[0] +
                                              g->inverse_transpose[3 * r + 1] * gradient[1] +
                                              g->inverse_transpose[3 * r + 2] * gradient[2];
                            const double length = sqrt(physical[0] * physical[0] + physical[1] * physical[1] +
                                                       physical[2] * physical[2]);
                            const double cosine =
                                length > 0 ? fabs(physical[0] * g->face_normal[a][0] + physical[1] * g->face_normal[a][1] +
                                                  physical[2] * g->face_normal[a][2]) / length
                                           : 1;
                            area += g->face_area[a] * cosine;
                        }
                }
        out->surface_area_mm2 = area;
        out->sphericity = area > 0 ? cbrt(3.14159265358979323846) * pow(6 * out->volume_mm3, 2.0 / 3.0) / area : NAN;
    }
    free(field);
    free(scratch);
    free(mask);
    return NULL;
}

static int invert3(const double m[9], double inverse[9])
{
    const double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                       m[2] * (m[3] * m[7] - m[4] * m[6]);
    if (det == 0)
        return 0;
    inverse[0] = (m[4] * m[8] - m[5] * m[7]) / det;
    inverse[1] = (m[2] * m[7] - m[1] * m[8]) / det;
    inverse[2] = (m[1] * m[5] - m[2] * m[4]) / det;
    inverse[3] = (m[5] * m[6] - m[3] * m[8]) / det;
    inverse[4] = (m[0] * m[8] - m[2] * m[6]) / det;
    inverse[5] = (m[2] * m[3] - m[0] * m[5]) / det;
    inverse[6] = (m[3] * m[7] - m[4] * m[6]) / det;
    inverse[7] = (m[1] * m[6] - m[0] * m[7]) / det;
    inverse[8] = (m[0] * m[4] - m[1] * m[3]) / det;
    return 1;
}

vl_status vl_stats_surface(const vl_volume *labels, uint32_t count, int threads, vl_component_stats *stats)
{
    const vl_geometry *geometry = &labels->geometry;
    surface_geometry g;
    memset(&g, 0, sizeof g);
    double a[9], inverse[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            a[3 * r + c] = geometry->direction[3 * r + c] * geometry->spacing[c];
    if (!invert3(a, inverse))
        return vl_fail(VL_ERR_INPUT, "statistics: the labels' geometry is singular");
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            g.inverse_transpose[3 * r + c] = inverse[3 * c + r];
    double step[3], sigma_mm = 0;
    for (int axis = 0; axis < 3; axis++) {
        step[axis] = sqrt(a[axis] * a[axis] + a[3 + axis] * a[3 + axis] + a[6 + axis] * a[6 + axis]);
        sigma_mm = step[axis] > sigma_mm ? step[axis] : sigma_mm;
        /* The physical normal of a face across index axis a is row a of A^-1 (the gradient of index a). */
        const double *row = inverse + 3 * axis;
        const double length = sqrt(row[0] * row[0] + row[1] * row[1] + row[2] * row[2]);
        for (int r = 0; r < 3; r++)
            g.face_normal[axis][r] = row[r] / length;
        g.face_area[axis] = vl_stats_face_area(geometry, axis);
    }
    vl_status status = VL_OK;
    for (int axis = 0; axis < 3 && status == VL_OK; axis++) {
        g.sigma[axis] = sigma_mm / step[axis];
        g.radius[axis] = (int)ceil(2.5 * g.sigma[axis]);
        g.kernel[axis] = malloc(sizeof(double) * (size_t)(2 * g.radius[axis] + 1));
        if (!g.kernel[axis]) {
            status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for the surface kernel");
            break;
        }
        double total = 0;
        for (int t = -g.radius[axis]; t <= g.radius[axis]; t++)
            total += g.kernel[axis][t + g.radius[axis]] = exp(-0.5 * t * t / (g.sigma[axis] * g.sigma[axis]));
        for (int t = 0; t <= 2 * g.radius[axis]; t++)
            g.kernel[axis][t] /= total;
    }
    if (status == VL_OK) {
        atomic_uint next = 0;
        surface_job jobs[VL_MAX_THREADS];
        for (int t = 0; t < threads; t++)
            jobs[t] = (surface_job){labels, &g, stats, count, &next, 0};
        vl_run_parallel(measure_components, jobs, sizeof jobs[0], threads);
        for (int t = 0; t < threads; t++)
            if (jobs[t].failed)
                status = vl_fail(VL_ERR_MEMORY, "statistics: no memory to smooth a component for its surface area");
    }
    for (int axis = 0; axis < 3; axis++)
        free(g.kernel[axis]);
    return status;
}
