/* Shape measures of per-slice 2D components.
 *
 * One raster pass per slice accumulates area, bounding box, first pixel and raw moments per label;
 * then each component is copied into a zero-padded crop of its bounding box, where the measures that
 * need neighbourhoods (perimeters, Euler number, convex hull, contour histogram) are computed.
 * Raw moments are sums of integers and therefore exact in double (below 2^53), like OpenCV's; central
 * and normalised moments and Hu use OpenCV's expressions in OpenCV's order so the values agree to the
 * last bits rather than merely to a tolerance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "image2d/shape_hull.h"
#include "image2d/shape_matlab.h"
#include "voxlabel/shape.h"

#define VL_PI 3.14159265358979323846

typedef struct component_sums {
    int64_t area, left, top, right, bottom, first_key, first_x, first_y;
    int64_t sx, sy, sxx, sxy, syy; /* exact second-order sums for the orientation and axes */
    double m[10];
} component_sums;

static void accumulate_slice(const uint32_t *labels, int64_t nx, int64_t ny, uint32_t count, component_sums *sums)
{
    for (uint32_t k = 0; k < count; k++) {
        memset(&sums[k], 0, sizeof sums[k]);
        sums[k].left = nx, sums[k].top = ny, sums[k].right = -1, sums[k].bottom = -1;
        sums[k].first_key = INT64_MAX;
    }
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            uint32_t label = labels[y * nx + x];
            if (!label || label > count)
                continue;
            component_sums *s = &sums[label - 1];
            s->area++;
            s->left = x < s->left ? x : s->left;
            s->right = x > s->right ? x : s->right;
            s->top = y < s->top ? y : s->top;
            s->bottom = y > s->bottom ? y : s->bottom;
            int64_t key = x * ny + y;
            if (key < s->first_key)
                s->first_key = key, s->first_x = x, s->first_y = y;
            s->sx += x, s->sy += y, s->sxx += x * x, s->sxy += x * y, s->syy += y * y;
            double fx = (double)x, fy = (double)y, xx = fx * fx, yy = fy * fy;
            s->m[0] += 1;
            s->m[1] += fx;
            s->m[2] += fy;
            s->m[3] += xx;
            s->m[4] += fx * fy;
            s->m[5] += yy;
            s->m[6] += xx * fx;
            s->m[7] += xx * fy;
            s->m[8] += fx * yy;
            s->m[9] += yy * fy;
        }
}

/* OpenCV's cv::Moments constructor and cv::HuMoments, expression for expression. */
static void central_moments_and_hu(vl_shape_row *row)
{
    const double *m = row->m;
    double cx = 0, cy = 0, inv_m00 = 0;
    if (fabs(m[0]) > 2.220446049250313e-16) {
        inv_m00 = 1. / m[0];
        cx = m[1] * inv_m00;
        cy = m[2] * inv_m00;
    }
    double mu20 = m[3] - m[1] * cx, mu11 = m[4] - m[1] * cy, mu02 = m[5] - m[2] * cy;
    double mu30 = m[6] - cx * (3 * mu20 + cx * m[1]);
    double mu21 = m[7] - cx * (2 * mu11 + cx * m[2]) - cy * mu20;
    double mu12 = m[8] - cy * (2 * mu11 + cy * m[1]) - cx * mu02;
    double mu03 = m[9] - cy * (3 * mu02 + cy * m[2]);
    double inv_sqrt_m00 = sqrt(fabs(inv_m00));
    double s2 = inv_m00 * inv_m00, s3 = s2 * inv_sqrt_m00;
    double mu[7] = {mu20, mu11, mu02, mu30, mu21, mu12, mu03};
    memcpy(row->mu, mu, sizeof mu);
    double nu20 = mu20 * s2, nu11 = mu11 * s2, nu02 = mu02 * s2;
    double nu30 = mu30 * s3, nu21 = mu21 * s3, nu12 = mu12 * s3, nu03 = mu03 * s3;
    double nu[7] = {nu20, nu11, nu02, nu30, nu21, nu12, nu03};
    memcpy(row->nu, nu, sizeof nu);

    double t0 = nu30 + nu12, t1 = nu21 + nu03;
    double q0 = t0 * t0, q1 = t1 * t1;
    double n4 = 4 * nu11, s = nu20 + nu02, d = nu20 - nu02;
    row->hu[0] = s;
    row->hu[1] = d * d + n4 * nu11;
    row->hu[3] = q0 + q1;
    row->hu[5] = d * (q0 - q1) + n4 * t0 * t1;
    t0 *= q0 - 3 * q1;
    t1 *= 3 * q0 - q1;
    q0 = nu30 - 3 * nu12;
    q1 = 3 * nu21 - nu03;
    row->hu[2] = q0 * q0 + q1 * q1;
    row->hu[4] = q0 * t0 + q1 * t1;
    row->hu[6] = q1 * t0 - q0 * t1;
}

/* skimage regionprops conventions: inertia tensor [[a, b], [b, c]] with a = mu20/m00, b = -mu11/m00,
 * c = mu02/m00 (x = column), eigenvalues clipped at 0, orientation +-pi/4 when a == c exactly. The
 * second-order central sums are formed exactly in integers (m00^2 a = m00 m20 - m10^2, ...), so that the
 * a == c test is exact and thin or symmetric shapes do not flip on rounding noise. */
static void region_axes(const component_sums *s, vl_shape_row *row)
{
    __extension__ typedef __int128 wide;
    wide n = s->area;
    wide a_exact = n * s->sxx - (wide)s->sx * s->sx;
    wide c_exact = n * s->syy - (wide)s->sy * s->sy;
    wide b_exact = n * s->sxy - (wide)s->sx * s->sy; /* m00^2 * mu11 / m00 = -m00^2 * b */
    if (a_exact == c_exact)
        row->orientation = b_exact > 0 ? -VL_PI / 4 : VL_PI / 4;
    else
        row->orientation = 0.5 * atan2(2.0 * (double)b_exact, (double)(c_exact - a_exact));
    double scale = (double)s->area * (double)s->area;
    double a = (double)a_exact / scale, b = (double)b_exact / scale, c = (double)c_exact / scale;
    double half_difference = (double)(a_exact - c_exact) / (2 * scale);
    double mean = (a + c) / 2, spread = sqrt(half_difference * half_difference + b * b);
    double l1 = mean + spread, l2 = mean - spread;
    l1 = l1 < 0 ? 0 : l1;
    l2 = l2 < 0 ? 0 : l2;
    row->major_axis = 4 * sqrt(l1);
    row->minor_axis = 4 * sqrt(l2);
    row->eccentricity = l1 == 0 ? 0 : sqrt(1 - l2 / l1);
}

/* A crop of one component: width w, height h plus one background pixel on every side. */
typedef struct crop {
    uint8_t *pixels;
    int64_t w, h, stride; /* stride = w + 2 */
} crop;

static inline int at(const crop *c, int64_t x, int64_t y) /* crop coordinates, -1..w, -1..h */
{
    return c->pixels[(y + 1) * c->stride + (x + 1)];
}

static inline int is_border(const crop *c, int64_t x, int64_t y)
{
    return at(c, x, y) && !(at(c, x - 1, y) && at(c, x + 1, y) && at(c, x, y - 1) && at(c, x, y + 1));
}

/* skimage.measure.perimeter(neighbourhood=4): border pixels coded 1 + 2*(4-neighbour border pixels) +
 * 10*(diagonal border pixels), then a histogram of codes dotted with the weights. */
static double perimeter_weighted(const crop *c)
{
    int64_t histogram[50] = {0};
    for (int64_t y = 0; y < c->h; y++)
        for (int64_t x = 0; x < c->w; x++) {
            if (!is_border(c, x, y))
                continue;
            int code = 1;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    if (!dx && !dy)
                        continue;
                    int64_t xx = x + dx, yy = y + dy;
                    if (xx < 0 || yy < 0 || xx >= c->w || yy >= c->h || !is_border(c, xx, yy))
                        continue;
                    code += dx && dy ? 10 : 2;
                }
            histogram[code]++;
        }
    double weights[50] = {0};
    weights[5] = weights[7] = weights[15] = weights[17] = weights[25] = weights[27] = 1;
    weights[21] = weights[33] = sqrt(2);
    weights[13] = weights[23] = (1 + sqrt(2)) / 2;
    double total = 0;
    for (int i = 0; i < 50; i++)
        total += (double)histogram[i] * weights[i];
    return total;
}

/* skimage.measure.perimeter_crofton(directions=4): 2x2 configurations p(y,x) + 2p(y-1,x) + 4p(y,x-1) +
 * 8p(y-1,x-1) over the padded image, counted, then dotted with the Crofton coefficients. */
static double perimeter_crofton(const crop *c)
{
    int64_t histogram[16] = {0};
    for (int64_t y = -1; y <= c->h; y++)
        for (int64_t x = -1; x <= c->w; x++) {
            int code = at(c, x, y) + (y > -1 ? 2 * at(c, x, y - 1) : 0) + (x > -1 ? 4 * at(c, x - 1, y) : 0) +
                       (x > -1 && y > -1 ? 8 * at(c, x - 1, y - 1) : 0);
            histogram[code]++;
        }
    const double pi = VL_PI, r2 = sqrt(2);
    const double coefficients[16] = {0, pi / 4 * (1 + 1 / r2), pi / (4 * r2), pi / (2 * r2), 0,
                                     pi / 4 * (1 + 1 / r2), 0, pi / (4 * r2), pi / 4, pi / 2,
                                     pi / (4 * r2), pi / (4 * r2), pi / 4, pi / 2, 0, 0};
    double total = 0;
    for (int i = 0; i < 16; i++)
        total += coefficients[i] * (double)histogram[i];
    return total;
}

/* Gray's bit-quad formula for 8-connected objects and 4-connected background:
 * E = (C1 - C3 - 2X) / 4 over all 2x2 windows of the padded crop. */
static int euler_number(const crop *c)
{
    int64_t ones = 0, threes = 0, diagonals = 0;
    for (int64_t y = 0; y <= c->h; y++)
        for (int64_t x = 0; x <= c->w; x++) {
            int a = at(c, x - 1, y - 1), b = at(c, x, y - 1), d = at(c, x - 1, y), e = at(c, x, y);
            int n = a + b + d + e;
            ones += n == 1;
            threes += n == 3;
            diagonals += n == 2 && a == e;
        }
    return (int)((ones - threes - 2 * diagonals) / 4);
}

static int64_t gcd64(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Lattice points inside or on the convex hull of the pixel centres: Andrew's monotone chain on the
 * extreme pixels of each row, then Pick's theorem (points = area + boundary/2 + 1), all in integers. */
static int64_t convex_area(const crop *c, int64_t *points, int64_t *hull)
{
    int64_t n = 0;
    for (int64_t y = 0; y < c->h; y++) {
        int64_t first = -1, last = -1;
        for (int64_t x = 0; x < c->w; x++)
            if (at(c, x, y)) {
                if (first < 0)
                    first = x;
                last = x;
            }
        if (first < 0)
            continue;
        points[2 * n] = first, points[2 * n + 1] = y, n++;
        if (last != first)
            points[2 * n] = last, points[2 * n + 1] = y, n++;
    }
    if (n == 1)
        return 1;
    const int64_t k = vl_shape_convex_hull(points, n, hull);
    int64_t twice_area = 0, boundary = 0;
    for (int64_t i = 0; i < k; i++) {
        const int64_t *p = &hull[2 * i], *q = &hull[2 * ((i + 1) % k)];
        twice_area += p[0] * q[1] - q[0] * p[1];
        boundary += gcd64(q[0] - p[0], q[1] - p[1]);
    }
    twice_area = twice_area < 0 ? -twice_area : twice_area;
    return (twice_area + boundary) / 2 + 1;
}

static void histogram_of_crop(const crop *c, double cx, double cy, double *histogram, double *distances)
{
    int64_t n = 0;
    double largest = 0;
    for (int64_t y = 0; y < c->h; y++)
        for (int64_t x = 0; x < c->w; x++)
            if (is_border(c, x, y)) {
                double d = sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy));
                distances[n++] = d;
                largest = d > largest ? d : largest;
            }
    double raw[VL_SHAPE_HISTOGRAM_BINS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int bin = largest > 0 ? (int)(distances[i] / largest * VL_SHAPE_HISTOGRAM_BINS) : 0;
        raw[bin < VL_SHAPE_HISTOGRAM_BINS ? bin : VL_SHAPE_HISTOGRAM_BINS - 1] += 1;
    }
    double kernel[7], kernel_sum = 0;
    for (int k = -3; k <= 3; k++)
        kernel_sum += kernel[k + 3] = exp(-0.5 * k * k);
    for (int k = 0; k < 7; k++)
        kernel[k] /= kernel_sum;
    double total = 0;
    for (int i = 0; i < VL_SHAPE_HISTOGRAM_BINS; i++) {
        double value = 0;
        for (int k = -3; k <= 3; k++)
            if (i + k >= 0 && i + k < VL_SHAPE_HISTOGRAM_BINS)
                value += kernel[k + 3] * raw[i + k];
        histogram[i] = value;
        total += value;
    }
    for (int i = 0; i < VL_SHAPE_HISTOGRAM_BINS; i++)
        histogram[i] = total > 0 ? histogram[i] / total : 0;
}

double vl_shape_jm_distance(const double *h, const double *r, int bins)
{
    double sum = 0;
    for (int i = 0; i < bins; i++) {
        double d = sqrt(h[i]) - sqrt(r[i]);
        sum += d * d;
    }
    return sqrt(sum);
}

vl_status vl_shape_histogram(const uint8_t *mask, int64_t width, int64_t height, double *histogram)
{
    if (width <= 0 || height <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "shape histogram: empty image");
    crop c = {calloc((size_t)(width + 2) * (size_t)(height + 2), 1), width, height, width + 2};
    double *distances = malloc(sizeof *distances * (size_t)(width * height));
    if (!c.pixels || !distances) {
        free(c.pixels), free(distances);
        return vl_fail(VL_ERR_MEMORY, "shape histogram: out of memory");
    }
    double sx = 0, sy = 0, area = 0;
    for (int64_t y = 0; y < height; y++)
        for (int64_t x = 0; x < width; x++)
            if (mask[y * width + x]) {
                c.pixels[(y + 1) * c.stride + x + 1] = 1;
                sx += (double)x, sy += (double)y, area += 1;
            }
    vl_status status = VL_OK;
    if (area == 0)
        status = vl_fail(VL_ERR_INPUT, "shape histogram: the reference image has no object pixels");
    else
        histogram_of_crop(&c, sx / area, sy / area, histogram, distances);
    free(c.pixels), free(distances);
    return status;
}

static void measure_component(const component_sums *s, const uint32_t *labels, int64_t nx, uint32_t label,
                              crop *c, int64_t *points, int64_t *hull, double *distances, vl_shape_row *row)
{
    row->first_x = s->first_x;
    row->first_y = s->first_y;
    row->area = s->area;
    row->bbox_left = s->left;
    row->bbox_top = s->top;
    row->bbox_width = s->right - s->left + 1;
    row->bbox_height = s->bottom - s->top + 1;
    memcpy(row->m, s->m, sizeof row->m);
    row->centroid_x = s->m[1] / s->m[0];
    row->centroid_y = s->m[2] / s->m[0];
    central_moments_and_hu(row);
    region_axes(s, row);

    c->w = row->bbox_width, c->h = row->bbox_height, c->stride = c->w + 2;
    memset(c->pixels, 0, (size_t)(c->w + 2) * (size_t)(c->h + 2));
    for (int64_t y = 0; y < c->h; y++)
        for (int64_t x = 0; x < c->w; x++)
            c->pixels[(y + 1) * c->stride + x + 1] = labels[(s->top + y) * nx + s->left + x] == label;
    row->perimeter_weighted = perimeter_weighted(c);
    row->perimeter_crofton = perimeter_crofton(c);
    row->circularity = row->perimeter_weighted > 0
                           ? 4 * VL_PI * (double)row->area / (row->perimeter_weighted * row->perimeter_weighted)
                           : 0;
    row->euler_number = euler_number(c);
    row->convex_area = convex_area(c, points, hull);
    row->solidity = (double)row->area / (double)row->convex_area;
    row->extent = (double)row->area / (double)(row->bbox_width * row->bbox_height);
    const vl_shape_mask mask = {c->pixels, c->w, c->h, c->stride};
    const vl_shape_moment_sums moments = {s->area, s->sx, s->sy, s->sxx, s->sxy, s->syy};
    vl_shape_matlab_measures(&mask, &moments, row);
    histogram_of_crop(c, row->centroid_x - (double)s->left, row->centroid_y - (double)s->top, row->histogram,
                      distances);
}

static uint32_t label3d_at(const vl_volume *labels3d, int64_t index)
{
    switch (labels3d->dtype) {
    case VL_U8: return ((const uint8_t *)labels3d->data)[index];
    case VL_U16: return ((const uint16_t *)labels3d->data)[index];
    case VL_I16: return (uint32_t)((const int16_t *)labels3d->data)[index];
    case VL_U32: return ((const uint32_t *)labels3d->data)[index];
    case VL_F32: return (uint32_t)((const float *)labels3d->data)[index];
    }
    return 0;
}

vl_status vl_shape_measure(const vl_slice_labels *labels, const vl_volume *labels3d, const double *reference,
                           vl_shape_table *table)
{
    memset(table, 0, sizeof *table);
    const vl_volume *volume = &labels->labels;
    int64_t nx = volume->nx, ny = volume->ny, nz = volume->nz;
    if (labels3d && (labels3d->nx != nx || labels3d->ny != ny || labels3d->nz != nz))
        return vl_fail(VL_ERR_ARGUMENT, "shapes: the 3D labels are %lldx%lldx%lld but the slices %lldx%lldx%lld",
                       (long long)labels3d->nx, (long long)labels3d->ny, (long long)labels3d->nz, (long long)nx,
                       (long long)ny, (long long)nz);
    int64_t total = 0;
    uint32_t most = 0;
    for (int64_t z = 0; z < nz; z++) {
        total += labels->count[z];
        most = labels->count[z] > most ? labels->count[z] : most;
    }
    table->rows = calloc((size_t)(total ? total : 1), sizeof *table->rows);
    component_sums *sums = malloc(sizeof *sums * (most ? most : 1));
    crop c = {malloc((size_t)(nx + 2) * (size_t)(ny + 2)), 0, 0, 0};
    int64_t *points = malloc(sizeof *points * (size_t)(4 * ny + 4));
    int64_t *hull = malloc(sizeof *hull * (size_t)(8 * ny + 8));
    double *distances = malloc(sizeof *distances * (size_t)(nx * ny));
    if (!table->rows || !sums || !c.pixels || !points || !hull || !distances) {
        free(sums), free(c.pixels), free(points), free(hull), free(distances);
        vl_shape_table_free(table);
        return vl_fail(VL_ERR_MEMORY, "shapes: out of memory");
    }
    table->has_label3d = labels3d != NULL;
    table->has_reference = reference != NULL;
    const uint32_t *data = volume->data;
    int64_t next = 0;
    for (int64_t z = 0; z < nz; z++) {
        const uint32_t *slice = data + z * nx * ny;
        accumulate_slice(slice, nx, ny, labels->count[z], sums);
        for (uint32_t k = 0; k < labels->count[z]; k++) {
            vl_shape_row *row = &table->rows[next++];
            row->slice = z;
            row->label = k + 1;
            measure_component(&sums[k], slice, nx, k + 1, &c, points, hull, distances, row);
            if (row->matlab_convex_area < 0) {
                free(sums), free(c.pixels), free(points), free(hull), free(distances);
                vl_shape_table_free(table);
                return vl_fail(VL_ERR_MEMORY, "shapes: out of memory for a convex hull");
            }
            if (labels3d)
                row->label3d = label3d_at(labels3d, z * nx * ny + sums[k].first_y * nx + sums[k].first_x);
            row->jm_reference = reference ? vl_shape_jm_distance(row->histogram, reference, VL_SHAPE_HISTOGRAM_BINS)
                                          : NAN;
        }
    }
    table->count = next;
    free(sums), free(c.pixels), free(points), free(hull), free(distances);
    return VL_OK;
}

void vl_shape_table_free(vl_shape_table *table)
{
    if (!table)
        return;
    free(table->rows);
    memset(table, 0, sizeof *table);
}
