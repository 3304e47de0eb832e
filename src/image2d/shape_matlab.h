/* Internal: the MATLAB regionprops measures of one 2D component (src/image2d/shape_matlab.c). */
#ifndef VL_SHAPE_MATLAB_H
#define VL_SHAPE_MATLAB_H

#include <stdint.h>

#include "voxlabel/shape.h"

/* A component's mask: w x h pixels with a one-pixel background frame, `stride` = w + 2 bytes per row;
 * pixel (x, y), -1 <= x <= w, -1 <= y <= h, is pixels[(y + 1) * stride + x + 1]. */
typedef struct vl_shape_mask {
    const uint8_t *pixels;
    int64_t w, h, stride;
} vl_shape_mask;

/* Exact sums of the pixel coordinates (any origin) for the second moments. */
typedef struct vl_shape_moment_sums {
    int64_t n, sx, sy, sxx, sxy, syy;
} vl_shape_moment_sums;

/* Fills row->matlab_* (matlab_convex_area is -1 when memory runs out). */
void vl_shape_matlab_measures(const vl_shape_mask *mask, const vl_shape_moment_sums *sums, vl_shape_row *row);

#endif
