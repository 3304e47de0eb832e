/* RANSAC for a similarity or affine map between matched points: minimal samples drawn from a seeded
 * splitmix64 stream (the same seed, the same result), the hypothesis with most inliers kept (ties: the
 * smaller sum of squared inlier errors, then the earlier draw), then refitted on its inliers by least
 * squares until the inlier set settles. Runs on the CPU only: a few thousand hypotheses on a few hundred
 * matches take well under a millisecond. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/features.h"

void vl_ransac_options_default(vl_ransac_options *options)
{
    options->model = VL_TRANSFORM_SIMILARITY;
    options->inlier_threshold = 3;
    options->iterations = 2000;
    options->seed = 1;
    options->min_inliers = 8;
    options->min_scale = 0.5;
    options->max_scale = 2;
}

void vl_ransac_result_free(vl_ransac_result *result)
{
    free(result->inlier_mask);
    memset(result, 0, sizeof *result);
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Least-squares similarity x' = a x - b y + tx, y' = b x + a y + ty over the points `index` names
 * (n of them). 0 when degenerate (all points at one place). */
static int fit_similarity(const float *a, const float *b, const int64_t *index, int64_t n, double m[6])
{
    double ax = 0, ay = 0, bx = 0, by = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = index[k];
        ax += a[2 * i], ay += a[2 * i + 1], bx += b[2 * i], by += b[2 * i + 1];
    }
    ax /= n, ay /= n, bx /= n, by /= n;
    double sxx = 0, num_a = 0, num_b = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = index[k];
        double px = a[2 * i] - ax, py = a[2 * i + 1] - ay, qx = b[2 * i] - bx, qy = b[2 * i + 1] - by;
        sxx += px * px + py * py;
        num_a += px * qx + py * qy;
        num_b += px * qy - py * qx;
    }
    if (sxx < 1e-9)
        return 0;
    double ca = num_a / sxx, cb = num_b / sxx;
    m[0] = ca, m[1] = -cb, m[2] = bx - ca * ax + cb * ay;
    m[3] = cb, m[4] = ca, m[5] = by - cb * ax - ca * ay;
    return 1;
}

/* Solves the 3x3 system s x = r by Cramer's rule; 0 when (nearly) singular. */
static int solve3(const double s[9], const double r[3], double x[3])
{
    double det = s[0] * (s[4] * s[8] - s[5] * s[7]) - s[1] * (s[3] * s[8] - s[5] * s[6]) +
                 s[2] * (s[3] * s[7] - s[4] * s[6]);
    double scale = fabs(s[0]) + fabs(s[4]) + fabs(s[8]);
    if (fabs(det) < 1e-12 * scale * scale * scale || det == 0)
        return 0;
    for (int c = 0; c < 3; c++) {
        double t[9];
        memcpy(t, s, sizeof t);
        for (int row = 0; row < 3; row++)
            t[row * 3 + c] = r[row];
        x[c] = (t[0] * (t[4] * t[8] - t[5] * t[7]) - t[1] * (t[3] * t[8] - t[5] * t[6]) +
                t[2] * (t[3] * t[7] - t[4] * t[6])) / det;
    }
    return 1;
}

/* Least-squares affine map over the indexed points (centred for conditioning). */
static int fit_affine(const float *a, const float *b, const int64_t *index, int64_t n, double m[6])
{
    double ax = 0, ay = 0;
    for (int64_t k = 0; k < n; k++)
        ax += a[2 * index[k]], ay += a[2 * index[k] + 1];
    ax /= n, ay /= n;
    double s[9] = {0}, rx[3] = {0}, ry[3] = {0};
    for (int64_t k = 0; k < n; k++) {
        int64_t i = index[k];
        double v[3] = {a[2 * i] - ax, a[2 * i + 1] - ay, 1};
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                s[r * 3 + c] += v[r] * v[c];
            rx[r] += v[r] * b[2 * i];
            ry[r] += v[r] * b[2 * i + 1];
        }
    }
    double px[3], py[3];
    if (!solve3(s, rx, px) || !solve3(s, ry, py))
        return 0;
    m[0] = px[0], m[1] = px[1], m[2] = px[2] - px[0] * ax - px[1] * ay;
    m[3] = py[0], m[4] = py[1], m[5] = py[2] - py[0] * ax - py[1] * ay;
    return 1;
}

static int fit(vl_transform_model model, const float *a, const float *b, const int64_t *index, int64_t n, double m[6])
{
    return model == VL_TRANSFORM_SIMILARITY ? fit_similarity(a, b, index, n, m) : fit_affine(a, b, index, n, m);
}

/* 1 when m keeps orientation and scales by a plausible factor. */
static int plausible(const double m[6], const vl_ransac_options *options)
{
    double det = m[0] * m[4] - m[1] * m[3];
    if (!(det > 0))
        return 0;
    double scale = sqrt(det);
    return scale >= options->min_scale && scale <= options->max_scale;
}

static double squared_error(const double m[6], const float *a, const float *b, int64_t i)
{
    double x = a[2 * i], y = a[2 * i + 1];
    double dx = m[0] * x + m[1] * y + m[2] - b[2 * i], dy = m[3] * x + m[4] * y + m[5] - b[2 * i + 1];
    return dx * dx + dy * dy;
}

/* Inliers of m (indices into `index`), their count and summed squared error. */
static int64_t collect_inliers(const double m[6], const float *a, const float *b, int64_t count, double threshold2,
                               int64_t *index, double *error_sum)
{
    int64_t n = 0;
    double sum = 0;
    for (int64_t i = 0; i < count; i++) {
        double e = squared_error(m, a, b, i);
        if (e < threshold2) {
            if (index)
                index[n] = i;
            n++;
            sum += e;
        }
    }
    *error_sum = sum;
    return n;
}

static int by_position(const void *pa, const void *pb)
{
    const float *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Distinct positions among the indexed points of `a` (a keypoint with several orientations is matched
 * several times from one place: such repeats support a transform no more than once). */
static int64_t distinct_points(const float *a, const int64_t *index, int64_t n)
{
    float *points = malloc((size_t)(n ? n : 1) * 2 * sizeof *points);
    if (!points)
        return n;
    for (int64_t k = 0; k < n; k++)
        points[2 * k] = a[2 * index[k]], points[2 * k + 1] = a[2 * index[k] + 1];
    qsort(points, (size_t)n, 2 * sizeof *points, by_position);
    int64_t distinct = n ? 1 : 0;
    for (int64_t k = 1; k < n; k++)
        distinct += by_position(points + 2 * (k - 1), points + 2 * k) != 0;
    free(points);
    return distinct;
}

vl_status vl_ransac_estimate(const float *a, const float *b, int64_t count, const vl_ransac_options *options,
                             vl_ransac_result *result)
{
    memset(result, 0, sizeof *result);
    if (options->model != VL_TRANSFORM_SIMILARITY && options->model != VL_TRANSFORM_AFFINE)
        return vl_fail(VL_ERR_ARGUMENT, "ransac: unknown model %d", (int)options->model);
    if (!(options->inlier_threshold > 0) || options->iterations < 1 || options->min_inliers < 3)
        return vl_fail(VL_ERR_ARGUMENT, "ransac: threshold, iterations and minimum inliers must be positive (>= 3)");
    if (!(options->min_scale > 0 && options->min_scale <= 1 && options->max_scale >= 1))
        return vl_fail(VL_ERR_ARGUMENT, "ransac: scale range %g..%g must contain 1 and be positive", options->min_scale,
                       options->max_scale);
    int sample = options->model == VL_TRANSFORM_SIMILARITY ? 2 : 3;
    if (count < options->min_inliers || count < sample)
        return vl_fail(VL_ERR_INPUT, "ransac: %lld matches, at least %d needed", (long long)count,
                       options->min_inliers > sample ? options->min_inliers : sample);
    int64_t *index = malloc((size_t)count * sizeof *index);
    result->inlier_mask = calloc((size_t)count, 1);
    if (!index || !result->inlier_mask) {
        free(index);
        vl_ransac_result_free(result);
        return vl_fail(VL_ERR_MEMORY, "ransac: out of memory");
    }
    double threshold2 = options->inlier_threshold * options->inlier_threshold;
    uint64_t state = options->seed;
    double best[6] = {0}, best_error = 0;
    int64_t best_count = 0;
    for (int it = 0; it < options->iterations; it++) {
        int64_t pick[3];
        for (int k = 0; k < sample; k++) {
            int fresh;
            do {
                pick[k] = (int64_t)(splitmix64(&state) % (uint64_t)count);
                fresh = 1;
                for (int j = 0; j < k; j++)
                    fresh &= pick[j] != pick[k];
            } while (!fresh);
        }
        double m[6], error;
        if (!fit(options->model, a, b, pick, sample, m) || !plausible(m, options))
            continue;
        int64_t n = collect_inliers(m, a, b, count, threshold2, NULL, &error);
        if (n > best_count || (n == best_count && n > 0 && error < best_error)) {
            best_count = n;
            best_error = error;
            memcpy(best, m, sizeof best);
        }
    }
    /* Least-squares refits on the inliers until the inlier set stops changing (at most 10): a minimal
     * sample's model is rough, its refit is what is returned even when it keeps a few inliers fewer. */
    for (int refit = 0; refit < 10 && best_count >= sample; refit++) {
        double m[6], error;
        collect_inliers(best, a, b, count, threshold2, index, &error);
        if (!fit(options->model, a, b, index, best_count, m) || !plausible(m, options))
            break;
        int64_t n = collect_inliers(m, a, b, count, threshold2, NULL, &error);
        int same = memcmp(m, best, sizeof best) == 0;
        memcpy(best, m, sizeof best);
        best_count = n;
        if (same)
            break;
    }
    vl_status status = VL_OK;
    double error;
    int64_t inliers = collect_inliers(best, a, b, count, threshold2, index, &error);
    int64_t distinct = inliers >= sample ? distinct_points(a, index, inliers) : 0;
    if (distinct < options->min_inliers) {
        status = vl_fail(VL_ERR_INPUT,
                         "ransac: only %lld of %lld matches (%lld distinct points) agree on one transform (at least %d "
                         "needed)",
                         (long long)inliers, (long long)count, (long long)distinct, options->min_inliers);
    } else {
        result->inliers = inliers;
        for (int64_t k = 0; k < result->inliers; k++)
            result->inlier_mask[index[k]] = 1;
        memcpy(result->matrix, best, sizeof best);
        result->residual_rms = sqrt(error / (double)result->inliers);
        double det = best[0] * best[4] - best[1] * best[3];
        result->scale = sqrt(fabs(det));
        result->rotation_deg = atan2(best[1] - best[3], best[0] + best[4]) * 180 / 3.14159265358979323846;
    }
    free(index);
    if (status != VL_OK)
        vl_ransac_result_free(result);
    return status;
}
