/* Internal: the per-voxel steps of the filter bank after the separable passes, in float32, shared by the CPU
 * reference and the device code so that both take the same IEEE 754 operations in the same order (see
 * eigen_symmetric.h). Derivatives arrive per voxel; the scales turn them into per-mm values. */
#ifndef VL_FILTER_VOXEL_H
#define VL_FILTER_VOXEL_H
#include "filters/eigen_symmetric.h"

/* per_mm[a] = 1 / spacing[a], per_mm2[a][b] = 1 / (spacing[a] spacing[b]), each rounded to float32 once on the
 * host (vl_filter_scales_make). */
typedef struct vl_filter_scales {
    float per_mm[3];
    float per_mm2[3][3];
} vl_filter_scales;

static inline void vl_filter_scales_make(const double spacing[3], vl_filter_scales *s)
{
    for (int a = 0; a < 3; a++) {
        s->per_mm[a] = (float)(1.0 / spacing[a]);
        for (int b = 0; b < 3; b++)
            s->per_mm2[a][b] = (float)(1.0 / (spacing[a] * spacing[b]));
    }
}

/* Derivative slots of one sigma: 0 smooth, 1..3 first (x, y, z), 4..6 second (xx, yy, zz), 7..9 mixed (xy, xz,
 * yz). */
enum { VL_D_SMOOTH = 0, VL_D_X = 1, VL_D_XX = 4, VL_D_XY = 7, VL_D_XZ = 8, VL_D_YZ = 9, VL_D_COUNT = 10 };

/* sum over axes of d2/dx_a2, per mm^2, x then y then z */
static inline VL_HOST_DEVICE float vl_voxel_log(const vl_filter_scales *s, int dims, const float *second)
{
    float sum = vl_fmul(second[0], s->per_mm2[0][0]);
    for (int a = 1; a < dims; a++)
        sum = vl_fadd(sum, vl_fmul(second[a], s->per_mm2[a][a]));
    return sum;
}

/* |gradient| per mm */
static inline VL_HOST_DEVICE float vl_voxel_gradient(const vl_filter_scales *s, int dims, const float *first)
{
    float sum = 0;
    for (int a = 0; a < dims; a++) {
        const float g = vl_fmul(first[a], s->per_mm[a]);
        sum = vl_fadd(sum, vl_fmul(g, g));
    }
    return vl_fsqrt(sum);
}

/* One entry of the structure tensor before its outer smoothing: g_a g_b per mm^2 (g per voxel). */
static inline VL_HOST_DEVICE float vl_voxel_product(float ga, float gb, float per_mm2)
{
    return vl_fmul(vl_fmul(ga, gb), per_mm2);
}

/* Eigenvalues (descending) of the smoothed tensor t = {xx, xy, xz, yy, yz, zz} (2D: xx, xy, -, yy). */
static inline VL_HOST_DEVICE void vl_voxel_structure(int dims, const float *t, float *e)
{
    if (dims == 2)
        vl_eigen2(t[0], t[1], t[3], e);
    else
        vl_eigen3(t[0], t[1], t[2], t[3], t[4], t[5], e);
}

/* The Hessian per mm^2 from the derivative slots d[VL_D_COUNT], as the structure tensor's entries are stored:
 * h = {xx, xy, xz, yy, yz, zz} (2D: xx, xy, -, yy). */
static inline VL_HOST_DEVICE void vl_voxel_hessian_entries(const vl_filter_scales *s, int dims, const float *d, float *h)
{
    h[0] = vl_fmul(d[VL_D_XX], s->per_mm2[0][0]);
    h[1] = vl_fmul(d[VL_D_XY], s->per_mm2[0][1]);
    h[3] = vl_fmul(d[VL_D_XX + 1], s->per_mm2[1][1]);
    if (dims == 3) {
        h[2] = vl_fmul(d[VL_D_XZ], s->per_mm2[0][2]);
        h[4] = vl_fmul(d[VL_D_YZ], s->per_mm2[1][2]);
        h[5] = vl_fmul(d[VL_D_XX + 2], s->per_mm2[2][2]);
    }
}

/* Eigenvalues (descending) of the Hessian per mm^2 from the derivative slots d[VL_D_COUNT]. */
static inline VL_HOST_DEVICE void vl_voxel_hessian(const vl_filter_scales *s, int dims, const float *d, float *e)
{
    float h[6] = {0, 0, 0, 0, 0, 0};
    vl_voxel_hessian_entries(s, dims, d, h);
    vl_voxel_structure(dims, h, e);
}

#endif
