/* Internal: scipy.ndimage's 1D Gaussian (derivative) kernels and the 'reflect' border, shared by the CPU
 * filters and the GPU launcher (which uploads the same taps). */
#ifndef VL_GAUSSIAN_KERNEL_H
#define VL_GAUSSIAN_KERNEL_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VL_KERNEL_MAX_RADIUS 1024

/* scipy's radius: int(truncate * sigma_voxels + 0.5). */
int vl_gaussian_radius(double sigma_voxels, double truncate);
/* weights[radius + x] for x in [-radius, radius], derivative `order` 0, 1 or 2, per voxel. Applied as
 * out[i] = sum_x weights[radius + x] * in[i - x] (scipy correlates with the reversed kernel). */
void vl_gaussian_kernel(double sigma_voxels, int order, int radius, double *weights);
/* The same kernel as the filter bank applies it, in float32: taps[j] = (float)weights[2 radius - j] for j in
 * [0, 2 radius], so that out[i] = sum_j taps[j] * in[i - radius + j], the sum taken as a chain of fused
 * multiply-adds in increasing j (the input read in increasing position). */
void vl_gaussian_taps(double sigma_voxels, int order, int radius, float *taps);

/* scipy's 'reflect' (half-sample symmetric) index for i in any range, n >= 1. */
static inline int64_t vl_reflect_index(int64_t i, int64_t n)
{
    const int64_t period = 2 * n;
    int64_t m = i % period;
    if (m < 0)
        m += period;
    return m < n ? m : period - 1 - m;
}

#ifdef __cplusplus
}
#endif
#endif
