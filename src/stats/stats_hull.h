/* Internal: exact 3D convex hull of integer points (quickhull, src/stats/stats_hull.c).
 *
 * Coordinates are integers (voxel corners in index units); every orientation test is an exact 64-bit
 * determinant, so the hull never depends on rounding. Coordinates must lie in [0, 2^19] so that the
 * determinants (6 products of three differences) stay below 2^63. */
#ifndef VL_STATS_HULL_H
#define VL_STATS_HULL_H

#include <stddef.h>
#include <stdint.h>

/* Working memory reused across hulls (one per thread); zero-initialise, release with vl_hull_free. */
typedef struct vl_hull {
    /* result: triangles (indices into the input points), counter-clockwise seen from outside */
    int32_t *triangles;
    size_t triangle_count;
    /* result: the extreme points (the polytope's vertices), indices into the input points; triangle corners
     * that lie inside a flat facet or on an edge are not among them */
    int32_t *vertices;
    size_t vertex_count;
    __int128 six_volume;          /* 6 x the hull's volume, exact */
    /* scratch */
    struct vl_hull_face *faces;
    size_t face_capacity;
    int32_t *next, *slot, *stack;
    size_t point_capacity, triangle_capacity, stack_capacity;
    struct vl_hull_edge *horizon;
    size_t horizon_capacity;
    struct vl_hull_normal *normals;
    size_t normal_capacity;
    struct vl_hull_directions *directions;
    size_t direction_capacity;
} vl_hull;

/* Builds the hull of points[0..n-1] (x, y, z triples). Returns 0, -1 without memory, or 1 when the points
 * are coplanar (no volume; the result is then empty). Duplicate points are allowed. */
int vl_hull_build(vl_hull *hull, const int64_t (*points)[3], size_t n);
void vl_hull_free(vl_hull *hull);

#endif
