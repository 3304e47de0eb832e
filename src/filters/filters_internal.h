/* Internal pieces of the filter bank shared by the CPU reference, the forest stage and the GPU launcher. */
#ifndef VL_FILTERS_INTERNAL_H
#define VL_FILTERS_INTERNAL_H
#include "filters/gaussian_kernel.h"
#include "voxlabel/filters.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Voxels each axis of a box needs around it for every filtered channel (the widest sigma's kernel, plus the
 * structure tensor's inner kernel); 0 on z for 2D banks. Offset features read the whole image and need none. */
void vl_filter_bank_halo(const vl_filter_bank *bank, const double spacing[3], int64_t halo[3]);

/* One box on the calling thread (vl_filters_compute splits a box over threads). */
vl_status vl_filters_compute_box_cpu(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box,
                                     float *channels);
/* The same box on the GPU (the device half, cuda/filters), channels copied back to host memory: bit for bit the
 * CPU's (tests/forest_gpu.c). */
vl_status vl_filters_compute_box_gpu(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box,
                                     float *channels);

/* The image as the filter bank reads it: each voxel's value rounded to float32 (exact for 8- and 16-bit data). */
static inline float vl_filter_input(const vl_volume *image, int64_t index)
{
    return (float)vl_volume_value(image, index);
}

/* I(p + u) - I(p + v) with the reflect border; offset = {ux, uy, uz, vx, vy, vz}; the float32 values subtracted
 * in float64, the difference rounded to float32 (as the GPU does). */
static inline float vl_offset_feature(const vl_volume *image, const int32_t *offset, int64_t x, int64_t y, int64_t z)
{
    const int64_t nx = image->nx, ny = image->ny, nz = image->nz;
    const int64_t a = vl_reflect_index(x + offset[0], nx) +
                      nx * (vl_reflect_index(y + offset[1], ny) + ny * vl_reflect_index(z + offset[2], nz));
    const int64_t b = vl_reflect_index(x + offset[3], nx) +
                      nx * (vl_reflect_index(y + offset[4], ny) + ny * vl_reflect_index(z + offset[5], nz));
    return (float)((double)vl_filter_input(image, a) - (double)vl_filter_input(image, b));
}

#ifdef __cplusplus
}
#endif
#endif
