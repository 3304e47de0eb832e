/* Internal: the convex hull of integer points in the plane (src/image2d/shape_hull.c), shared by the 2D
 * shape measures (shape_measure.c) and the MATLAB ones (shape_matlab.c). */
#ifndef VL_SHAPE_HULL_H
#define VL_SHAPE_HULL_H

#include <stdint.h>

/* Sorts the `n` (x, y) pairs of `points` and writes their convex hull into `hull` (room for n + 1 pairs) by
 * Andrew's monotone chain: counter-clockwise, collinear points dropped, the pair after the last vertex
 * repeating the first. Returns the number of vertices. */
int64_t vl_shape_convex_hull(int64_t *points, int64_t n, int64_t *hull);

#endif
