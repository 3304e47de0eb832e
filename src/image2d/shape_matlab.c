/* MATLAB regionprops measures of a 2D component.
 *
 * Perimeter: the outer boundary is traced as an 8-connected closed path of pixels (Moore-neighbour
 * tracing, stopped when the first step repeats), each step gets a chain code (even: along an axis,
 * odd: diagonal), and the length is 0.980 even + 1.406 odd - 0.091 corners (Vossepoel and Smeulders), with
 * the corners MATLAB counts: a turn between an axis step and a diagonal step, or a 90-degree turn between
 * two axis steps (chain codes 0, 2, 4, 6 differing by 2 or 6). Holes do not count, and a single pixel has 0.
 * ConvexArea: the hull of the four edge midpoints of every pixel (x +- 1/2, y) and (x, y +- 1/2), then the
 * pixels most of whose area lies in it, judged on 5 x 5 sub-pixels as poly2mask does; Solidity = Area /
 * ConvexArea.
 * Axes, eccentricity and orientation: the ellipse with the region's second moments plus the 1/12 of a unit
 * pixel, y pointing up, orientation in degrees. */
#include <math.h>
#include <stdlib.h>

#include "image2d/shape_hull.h"
#include "image2d/shape_matlab.h"

static const double pi = 3.14159265358979323846;

/* Clockwise on screen (y down), starting east. */
static const int step_x[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int step_y[8] = {0, 1, 1, 1, 0, -1, -1, -1};

static int at(const vl_shape_mask *m, int64_t x, int64_t y)
{
    return m->pixels[(y + 1) * m->stride + x + 1] != 0;
}

/* Chain code of a step as MATLAB's perimeter uses it: right 0, up 2, left 4, down 6, diagonals 1. */
static int chain_code(int direction)
{
    static const int code[8] = {0, 1, 6, 1, 4, 1, 2, 1};
    return code[direction];
}

static double perimeter(const vl_shape_mask *m)
{
    /* Start at the first pixel in column-major order: its west neighbour is background. */
    int64_t sx = -1, sy = -1;
    for (int64_t x = 0; x < m->w && sx < 0; x++)
        for (int64_t y = 0; y < m->h; y++)
            if (at(m, x, y)) {
                sx = x, sy = y;
                break;
            }
    if (sx < 0)
        return 0;
    int64_t cx = sx, cy = sy;
    int backtrack = 4; /* direction from the current pixel to the last background pixel examined */
    int first_direction = -1, previous_code = -1, first_code = -1;
    int64_t even = 0, odd = 0, corners = 0;
    for (;;) {
        int direction = -1;
        for (int k = 1; k <= 8; k++) {
            const int d = (backtrack + k) % 8;
            if (at(m, cx + step_x[d], cy + step_y[d])) {
                direction = d;
                break;
            }
        }
        if (direction < 0)
            return 0; /* a single pixel */
        if (cx == sx && cy == sy && direction == first_direction)
            break;
        if (first_direction < 0)
            first_direction = direction;
        const int code = chain_code(direction);
        if (code & 1)
            odd++;
        else
            even++;
        if (previous_code >= 0) {
            const int change = abs(code - previous_code);
            corners += (change & 1) || change == 2 || change == 6;
        } else
            first_code = code;
        previous_code = code;
        /* The neighbour examined just before the step is background; seen from the new pixel it lies at
         * direction - 1 from the old pixel, i.e. direction + 6 (axis step) or + 5 (diagonal step) from the new one. */
        cx += step_x[direction];
        cy += step_y[direction];
        backtrack = (direction + (direction & 1 ? 5 : 6)) % 8;
    }
    const int change = abs(first_code - previous_code);
    corners += (change & 1) || change == 2 || change == 6;
    return 0.980 * (double)even + 1.406 * (double)odd - 0.091 * (double)corners;
}

/* [lo, hi]: the integer X with (X, Y) inside or on the counter-clockwise hull; lo > hi when none. */
static void hull_row(const int64_t *hull, int64_t k, int64_t Y, int64_t *lo, int64_t *hi)
{
    for (int64_t i = 0; i < k; i++) {
        const int64_t *p = &hull[2 * i], *q = &hull[2 * ((i + 1) % k)];
        /* cross(p, q, (X, Y)) >= 0: (qx - px)(Y - py) - (qy - py)(X - px) >= 0, i.e. a X <= b with: */
        const int64_t a = q[1] - p[1], b = (q[0] - p[0]) * (Y - p[1]) + a * p[0];
        if (a > 0) { /* X <= floor(b / a) */
            const int64_t bound = b >= 0 ? b / a : -((-b + a - 1) / a);
            *hi = bound < *hi ? bound : *hi;
        } else if (a < 0) { /* X >= ceil(b / a) = ceil(num / den) */
            const int64_t num = -b, den = -a;
            const int64_t bound = num >= 0 ? (num + den - 1) / den : -((-num) / den);
            *lo = bound > *lo ? bound : *lo;
        } else if (b < 0)
            *lo = *hi + 1;
    }
}

/* ConvexImage as regionprops builds it with poly2mask on a grid 5 times finer: in units of 1/5 pixel, with
 * pixel x covering (5x, 5x + 5], the edge midpoints snap to the sub-pixel grid (5x, 5x + 3 for the centre's
 * 2.5 rounded up, 5x + 5), and a pixel belongs when more than 12 of its sub-pixel points 5x + 1 .. 5x + 5
 * (times the same in y) lie inside or on the hull. */
static int64_t convex_area(const vl_shape_mask *m)
{
    int64_t *points = malloc(sizeof *points * (size_t)(16 * m->h + 16));
    int64_t *hull = malloc(sizeof *hull * (size_t)(32 * m->h + 32));
    int64_t *covered = calloc((size_t)m->w, sizeof *covered);
    if (!points || !hull || !covered) {
        free(points), free(hull), free(covered);
        return -1;
    }
    int64_t n = 0;
    for (int64_t y = 0; y < m->h; y++) {
        int64_t first = -1, last = -1;
        for (int64_t x = 0; x < m->w; x++)
            if (at(m, x, y)) {
                first = first < 0 ? x : first;
                last = x;
            }
        if (first < 0)
            continue;
        const int64_t ends[2] = {first, last};
        for (int e = 0; e < 2; e++) {
            const int64_t X = 5 * ends[e], Y = 5 * y;
            const int64_t add[4][2] = {{X, Y + 3}, {X + 5, Y + 3}, {X + 3, Y}, {X + 3, Y + 5}};
            for (int i = 0; i < 4; i++)
                points[2 * n] = add[i][0], points[2 * n + 1] = add[i][1], n++;
        }
    }
    const int64_t k = vl_shape_convex_hull(points, n, hull); /* counter-clockwise, as hull_row needs */
    int64_t count = 0;
    for (int64_t y = 0; y < m->h; y++) {
        for (int64_t x = 0; x < m->w; x++)
            covered[x] = 0;
        for (int sy = 1; sy <= 5; sy++) {
            int64_t lo = -10, hi = 5 * m->w + 10; /* sub-pixel x inside, inclusive */
            hull_row(hull, k, 5 * y + sy, &lo, &hi);
            for (int64_t x = 0; x < m->w && lo <= hi; x++)
                for (int sx = 1; sx <= 5; sx++)
                    covered[x] += 5 * x + sx >= lo && 5 * x + sx <= hi;
        }
        for (int64_t x = 0; x < m->w; x++)
            count += covered[x] > 12;
    }
    free(points), free(hull), free(covered);
    return count;
}

void vl_shape_matlab_measures(const vl_shape_mask *mask, const vl_shape_moment_sums *s, vl_shape_row *row)
{
    row->matlab_perimeter = perimeter(mask);
    row->matlab_convex_area = convex_area(mask);
    row->matlab_solidity = row->matlab_convex_area > 0 ? (double)s->n / (double)row->matlab_convex_area : NAN;
    /* Central second moments with y up (so uxy changes sign), plus 1/12 for the unit pixel. */
    const double n = (double)s->n, n2 = n * n;
    const double uxx = (double)(s->n * s->sxx - s->sx * s->sx) / n2 + 1.0 / 12;
    const double uyy = (double)(s->n * s->syy - s->sy * s->sy) / n2 + 1.0 / 12;
    const double uxy = -(double)(s->n * s->sxy - s->sx * s->sy) / n2;
    const double common = sqrt((uxx - uyy) * (uxx - uyy) + 4 * uxy * uxy);
    row->matlab_major_axis = 2 * sqrt(2) * sqrt(uxx + uyy + common);
    const double minor = uxx + uyy - common;
    row->matlab_minor_axis = 2 * sqrt(2) * sqrt(minor > 0 ? minor : 0);
    const double a = row->matlab_major_axis / 2, b = row->matlab_minor_axis / 2;
    row->matlab_eccentricity = a > 0 ? 2 * sqrt(a * a - b * b > 0 ? a * a - b * b : 0) / row->matlab_major_axis : 0;
    double numerator, denominator;
    if (uyy > uxx) {
        numerator = uyy - uxx + common;
        denominator = 2 * uxy;
    } else {
        numerator = 2 * uxy;
        denominator = uxx - uyy + common;
    }
    row->matlab_orientation = numerator == 0 && denominator == 0 ? 0 : 180 / pi * atan(numerator / denominator);
}
