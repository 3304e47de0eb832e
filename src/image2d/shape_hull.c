/* Convex hull of integer points (Andrew's monotone chain), exact in 64-bit integers. */
#include <stdlib.h>

#include "image2d/shape_hull.h"

static int64_t cross(const int64_t *o, const int64_t *a, const int64_t *b)
{
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

static int compare_points(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] < b[1] ? -1 : a[1] > b[1]);
}

int64_t vl_shape_convex_hull(int64_t *points, int64_t n, int64_t *hull)
{
    qsort(points, (size_t)n, 2 * sizeof *points, compare_points);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        while (k >= 2 && cross(&hull[2 * (k - 2)], &hull[2 * (k - 1)], &points[2 * i]) <= 0)
            k--;
        hull[2 * k] = points[2 * i], hull[2 * k + 1] = points[2 * i + 1], k++;
    }
    for (int64_t i = n - 2, lower = k + 1; i >= 0; i--) {
        while (k >= lower && cross(&hull[2 * (k - 2)], &hull[2 * (k - 1)], &points[2 * i]) <= 0)
            k--;
        hull[2 * k] = points[2 * i], hull[2 * k + 1] = points[2 * i + 1], k++;
    }
    return k - 1;
}
