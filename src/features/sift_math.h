/* Internal: the per-pixel and per-keypoint arithmetic of SIFT, shared word for word by the CPU reference
 * (sift_cpu.c) and the GPU half (cuda/features/sift_gpu.cu), so that both backends compute the same floats.
 *
 * Invariants that keep the two bit-identical:
 *   - only +, -, *, / and sqrtf on floats, which IEEE 754 rounds the same way on both (the GPU file is
 *     compiled without multiply-add contraction, the host C is C11 without contraction);
 *   - exp, sin, cos in double, rounded to float once, so their last-bit differences between libm and
 *     CUDA's library vanish in the rounding;
 *   - fixed loop orders.
 * Intensities are on OpenCV's 8-bit scale (0..255); the 0..1 scale of the thresholds is applied here. */
#ifndef VL_SIFT_MATH_H
#define VL_SIFT_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define VL_SIFT_FN static __host__ __device__ inline
#else
#define VL_SIFT_FN static inline
#endif

#define VL_SIFT_IMG_BORDER 5
#define VL_SIFT_MAX_INTERP_STEPS 5
#define VL_SIFT_ORI_BINS 36
#define VL_SIFT_ORI_SIG_FACTOR 1.5f
#define VL_SIFT_ORI_RADIUS (3 * VL_SIFT_ORI_SIG_FACTOR)
#define VL_SIFT_ORI_PEAK_RATIO 0.8f
#define VL_SIFT_DESCR_WIDTH 4
#define VL_SIFT_DESCR_BINS 8
#define VL_SIFT_DESCR_SCL_FACTOR 3.f
#define VL_SIFT_DESCR_MAG_THR 0.2f
#define VL_SIFT_DESCR_INT_FACTOR 512.f
#define VL_SIFT_DESCR_HIST ((VL_SIFT_DESCR_WIDTH + 2) * (VL_SIFT_DESCR_WIDTH + 2) * (VL_SIFT_DESCR_BINS + 2))
#define VL_SIFT_FLT_EPSILON 1.19209290e-07f

/* Round half to even, as OpenCV's cvRound (lrint under the default rounding mode). */
VL_SIFT_FN int vl_sift_round(float x)
{
#ifdef __CUDA_ARCH__
    return __float2int_rn(x);
#else
    return (int)lrintf(x);
#endif
}

/* max and min of finite floats (inputs are checked finite), compiled to one instruction each. */
VL_SIFT_FN float vl_sift_max(float a, float b)
{
    return a > b ? a : b;
}

VL_SIFT_FN float vl_sift_min(float a, float b)
{
    return a < b ? a : b;
}

VL_SIFT_FN float vl_sift_exp(float x)
{
    return (float)exp((double)x);
}

/* atan2(y, x) in degrees 0..360 by the 7th-order odd polynomial OpenCV's fastAtan2 uses (about 0.01 degree). */
VL_SIFT_FN float vl_sift_atan2_deg(float y, float x)
{
    const float p1 = 0.9997878412794807f * 57.295779513082323f, p3 = -0.3258083974640975f * 57.295779513082323f;
    const float p5 = 0.1555786518463281f * 57.295779513082323f, p7 = -0.04432655554792128f * 57.295779513082323f;
    float ax = fabsf(x), ay = fabsf(y), a;
    const float tiny = (float)2.220446049250313e-16;
    if (ax >= ay) {
        float c = ay / (ax + tiny), c2 = c * c;
        a = (((p7 * c2 + p5) * c2 + p3) * c2 + p1) * c;
    } else {
        float c = ax / (ay + tiny), c2 = c * c;
        a = 90.f - (((p7 * c2 + p5) * c2 + p3) * c2 + p1) * c;
    }
    if (x < 0)
        a = 180.f - a;
    if (y < 0)
        a = 360.f - a;
    return a;
}

/* The pre-threshold of the extremum scan on the 8-bit scale: floor(0.5 * contrast / layers * 255). */
VL_SIFT_FN float vl_sift_scan_threshold(float contrast_threshold, int layers)
{
    return (float)(int)floor(0.5 * contrast_threshold / layers * 255);
}

/* 1 when DoG sample v exceeds the threshold in magnitude and is >= hi (maximum, positive) or <= lo
 * (minimum, negative), hi and lo being the maximum and minimum of its neighbours (with or without v itself:
 * the outcome is the same). */
VL_SIFT_FN int vl_sift_extremum_test(float v, float hi, float lo, float threshold)
{
    return (fabsf(v) > threshold) & (((v > 0) & (v >= hi)) | ((v < 0) & (v <= lo)));
}

/* 1 when DoG sample i of `cur` exceeds the threshold in magnitude and is >= (maximum, positive) or <=
 * (minimum, negative) all 26 neighbours in `prev`, `cur` and `next`. No data-dependent branch: the 26
 * comparisons become one running max and min. */
VL_SIFT_FN int vl_sift_is_extremum(const float *prev, const float *cur, const float *next, int64_t i, int64_t stride,
                                   float threshold)
{
    float v = cur[i];
    float hi = vl_sift_max(cur[i - 1], cur[i + 1]), lo = vl_sift_min(cur[i - 1], cur[i + 1]);
    for (int dy = -1; dy <= 1; dy += 2)
        for (int dx = -1; dx <= 1; dx++) {
            float s = cur[i + dy * stride + dx];
            hi = vl_sift_max(hi, s);
            lo = vl_sift_min(lo, s);
        }
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int64_t o = i + dy * stride + dx;
            hi = vl_sift_max(hi, vl_sift_max(prev[o], next[o]));
            lo = vl_sift_min(lo, vl_sift_min(prev[o], next[o]));
        }
    return vl_sift_extremum_test(v, hi, lo, threshold);
}

/* Solves the 3x3 system H x = b by Gaussian elimination with partial pivoting; 0 when singular. */
VL_SIFT_FN int vl_sift_solve3(float h[9], float b[3])
{
    for (int i = 0; i < 3; i++) {
        int k = i;
        for (int j = i + 1; j < 3; j++)
            if (fabsf(h[j * 3 + i]) > fabsf(h[k * 3 + i]))
                k = j;
        if (fabsf(h[k * 3 + i]) < VL_SIFT_FLT_EPSILON * 10)
            return 0;
        if (k != i) {
            for (int j = i; j < 3; j++) {
                float t = h[i * 3 + j];
                h[i * 3 + j] = h[k * 3 + j];
                h[k * 3 + j] = t;
            }
            float t = b[i];
            b[i] = b[k];
            b[k] = t;
        }
        float d = -1.f / h[i * 3 + i];
        for (int j = i + 1; j < 3; j++) {
            float alpha = h[j * 3 + i] * d;
            for (int c = i + 1; c < 3; c++)
                h[j * 3 + c] += alpha * h[i * 3 + c];
            b[j] += alpha * b[i];
        }
    }
    for (int i = 2; i >= 0; i--) {
        float s = b[i];
        for (int k = i + 1; k < 3; k++)
            s -= h[i * 3 + k] * b[k];
        b[i] = s / h[i * 3 + i];
    }
    return 1;
}

/* A refined extremum in the doubled-image octave numbering (octave 0 = the doubled input). */
typedef struct vl_sift_candidate {
    float x, y, size, response;  /* x, y, size in doubled-input pixels */
    int32_t octave_packed;       /* octave + (layer << 8) + (sub-layer << 16) */
    int32_t octave, layer, row, col;  /* where the refinement ended */
} vl_sift_candidate;

/* The 3 x 3 x 3 DoG samples around sample i of DoG level `layer` of an octave whose Gaussian levels are
 * `gauss` (each `w` wide): cube[9 * (dl + 1) + 3 * (dy + 1) + dx + 1]. Each is the difference the DoG
 * pyramid stores (level l + 1 - level l), so taking it here or from the stored level gives the same float. */
VL_SIFT_FN void vl_sift_dog_cube(const float *const *gauss, int layer, int64_t i, int64_t w, float cube[27])
{
    for (int dl = -1; dl <= 1; dl++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int64_t at = i + dy * w + dx;
                cube[9 * (dl + 1) + 3 * (dy + 1) + dx + 1] = gauss[layer + dl + 1][at] - gauss[layer + dl][at];
            }
}

/* Sub-pixel and sub-layer refinement of the extremum at (row, col) of DoG `layer` of `octave`, then the
 * contrast and edge (principal curvature ratio) tests. `gauss` points at the octave's Gaussian levels, each
 * w x h; the DoG samples come from them (vl_sift_dog_cube). */
VL_SIFT_FN int vl_sift_refine(const float *const *gauss, int64_t w, int64_t h, int octave, int layer, int row, int col,
                              int layers, float contrast_threshold, float edge_threshold, float sigma,
                              vl_sift_candidate *out)
{
    const float img_scale = 1.f / 255.f, deriv_scale = img_scale * 0.5f, second_scale = img_scale,
                cross_scale = img_scale * 0.25f;
    float xi = 0, xr = 0, xc = 0;
    int step = 0;
    for (; step < VL_SIFT_MAX_INTERP_STEPS; step++) {
        float cube[27];
        vl_sift_dog_cube(gauss, layer, (int64_t)row * w + col, w, cube);
        const float *prev = cube + 4, *img = cube + 13, *next = cube + 22; /* centres; rows 3 apart */
        float dx = (img[1] - img[-1]) * deriv_scale, dy = (img[3] - img[-3]) * deriv_scale,
              ds = (next[0] - prev[0]) * deriv_scale;
        float v2 = img[0] * 2;
        float dxx = (img[1] + img[-1] - v2) * second_scale;
        float dyy = (img[3] + img[-3] - v2) * second_scale;
        float dss = (next[0] + prev[0] - v2) * second_scale;
        float dxy = (img[4] - img[2] - img[-2] + img[-4]) * cross_scale;
        float dxs = (next[1] - next[-1] - prev[1] + prev[-1]) * cross_scale;
        float dys = (next[3] - next[-3] - prev[3] + prev[-3]) * cross_scale;
        float hm[9] = {dxx, dxy, dxs, dxy, dyy, dys, dxs, dys, dss};
        float x[3] = {dx, dy, ds};
        if (!vl_sift_solve3(hm, x))
            x[0] = x[1] = x[2] = 0;
        xi = -x[2];
        xr = -x[1];
        xc = -x[0];
        if (fabsf(xi) < 0.5f && fabsf(xr) < 0.5f && fabsf(xc) < 0.5f)
            break;
        const float too_far = (float)(2147483647 / 3);
        if (fabsf(xi) > too_far || fabsf(xr) > too_far || fabsf(xc) > too_far)
            return 0;
        col += vl_sift_round(xc);
        row += vl_sift_round(xr);
        layer += vl_sift_round(xi);
        if (layer < 1 || layer > layers || col < VL_SIFT_IMG_BORDER || col >= w - VL_SIFT_IMG_BORDER ||
            row < VL_SIFT_IMG_BORDER || row >= h - VL_SIFT_IMG_BORDER)
            return 0;
    }
    if (step >= VL_SIFT_MAX_INTERP_STEPS)
        return 0;
    float cube[27];
    vl_sift_dog_cube(gauss, layer, (int64_t)row * w + col, w, cube);
    const float *prev = cube + 4, *img = cube + 13, *next = cube + 22;
    float dx = (img[1] - img[-1]) * deriv_scale, dy = (img[3] - img[-3]) * deriv_scale,
          ds = (next[0] - prev[0]) * deriv_scale;
    float t = dx * xc + dy * xr + ds * xi;
    float contrast = img[0] * img_scale + t * 0.5f;
    if (fabsf(contrast) * layers < contrast_threshold)
        return 0;
    float v2 = img[0] * 2.f;
    float dxx = (img[1] + img[-1] - v2) * second_scale;
    float dyy = (img[3] + img[-3] - v2) * second_scale;
    float dxy = (img[4] - img[2] - img[-2] + img[-4]) * cross_scale;
    float tr = dxx + dyy, det = dxx * dyy - dxy * dxy;
    if (det <= 0 || tr * tr * edge_threshold >= (edge_threshold + 1) * (edge_threshold + 1) * det)
        return 0;
    float scale = (float)(1 << octave);
    out->x = ((float)col + xc) * scale;
    out->y = ((float)row + xr) * scale;
    out->octave_packed = octave + (layer << 8) + (vl_sift_round((float)((xi + 0.5) * 255)) << 16);
    out->size = sigma * (float)pow(2.0, (double)(((float)layer + xi) / (float)layers)) * scale * 2;
    out->response = fabsf(contrast);
    out->octave = octave;
    out->layer = layer;
    out->row = row;
    out->col = col;
    return 1;
}

/* Sample (row + i, col + j) of a Gaussian level for the orientation histogram: 1 and its bin and
 * Gaussian-weighted gradient magnitude, or 0 when it lies on or outside the image's one-pixel frame.
 * expf_scale is -1 / (2 sigma^2). */
VL_SIFT_FN int vl_sift_orientation_sample(const float *img, int64_t w, int64_t h, int row, int col, int i, int j,
                                          float expf_scale, int *bin, float *value)
{
    const int n = VL_SIFT_ORI_BINS;
    int y = row + i, x = col + j;
    if (y <= 0 || y >= h - 1 || x <= 0 || x >= w - 1)
        return 0;
    const float *p = img + (int64_t)y * w + x;
    float dx = p[1] - p[-1], dy = p[-w] - p[w];
    float weight = vl_sift_exp((float)(i * i + j * j) * expf_scale);
    float angle = vl_sift_atan2_deg(dy, dx);
    float magnitude = sqrtf(dx * dx + dy * dy);
    int b = vl_sift_round((n / 360.f) * angle);
    if (b >= n)
        b -= n;
    if (b < 0)
        b += n;
    *bin = b;
    *value = weight * magnitude;
    return 1;
}

/* Bin j of the raw histogram `temp` smoothed circularly with [1 4 6 4 1]/16. */
VL_SIFT_FN float vl_sift_orientation_smoothed(const float temp[VL_SIFT_ORI_BINS], int j)
{
    const int n = VL_SIFT_ORI_BINS;
    float m2 = temp[(j + n - 2) % n], m1 = temp[(j + n - 1) % n], p1 = temp[(j + 1) % n], p2 = temp[(j + 2) % n];
    return (m2 + p2) * (1.f / 16.f) + (m1 + p1) * (4.f / 16.f) + temp[j] * (6.f / 16.f);
}

/* The 36-bin gradient orientation histogram around (row, col) of a Gaussian level, Gaussian-weighted and
 * smoothed; returns its maximum. Each bin sums its samples in row-major order of (i, j), the order the GPU
 * keeps too (cuda/features/sift_gpu.cu spreads the samples over a warp, each lane owning bins). */
VL_SIFT_FN float vl_sift_orientation_histogram(const float *img, int64_t w, int64_t h, int row, int col, int radius,
                                               float sigma, float hist[VL_SIFT_ORI_BINS])
{
    const int n = VL_SIFT_ORI_BINS;
    float temp[VL_SIFT_ORI_BINS];
    float expf_scale = -1.f / (2.f * sigma * sigma);
    for (int i = 0; i < n; i++)
        temp[i] = 0.f;
    for (int i = -radius; i <= radius; i++)
        for (int j = -radius; j <= radius; j++) {
            int bin;
            float value;
            if (vl_sift_orientation_sample(img, w, h, row, col, i, j, expf_scale, &bin, &value))
                temp[bin] += value;
        }
    float maximum = 0;
    for (int i = 0; i < n; i++) {
        hist[i] = vl_sift_orientation_smoothed(temp, i);
        maximum = i == 0 ? hist[0] : vl_sift_max(maximum, hist[i]);
    }
    return maximum;
}

/* The orientation (degrees, OpenCV's convention) of histogram peak j, or -1 when bin j is no peak at
 * least `threshold` high. */
VL_SIFT_FN float vl_sift_peak_angle(const float hist[VL_SIFT_ORI_BINS], int j, float threshold)
{
    const int n = VL_SIFT_ORI_BINS;
    int l = j > 0 ? j - 1 : n - 1, r = j < n - 1 ? j + 1 : 0;
    if (!(hist[j] > hist[l] && hist[j] > hist[r] && hist[j] >= threshold))
        return -1.f;
    float bin = j + 0.5f * (hist[l] - hist[r]) / (hist[l] - 2 * hist[j] + hist[r]);
    bin = bin < 0 ? n + bin : bin >= n ? bin - n : bin;
    float angle = 360.f - (360.f / n) * bin;
    if (fabsf(angle - 360.f) < VL_SIFT_FLT_EPSILON)
        angle = 0.f;
    return angle;
}

/* Where a descriptor's samples lie: centre pixel, sampling radius, and the rotation (already divided by the
 * histogram cell width) that maps a sample offset to cell coordinates. */
typedef struct vl_sift_descr_geometry {
    int px, py, radius;
    float cos_t, sin_t, ori, bins_per_degree, exp_scale;
} vl_sift_descr_geometry;

/* Geometry of the descriptor at (x, y) of a w x h Gaussian level (level pixels), orientation `ori` degrees
 * (already 360 - keypoint angle), scale `scl` (level pixels). */
VL_SIFT_FN vl_sift_descr_geometry vl_sift_descriptor_geometry(int64_t w, int64_t h, float x, float y, float ori,
                                                               float scl)
{
    const int d = VL_SIFT_DESCR_WIDTH, n = VL_SIFT_DESCR_BINS;
    vl_sift_descr_geometry g;
    g.px = vl_sift_round(x);
    g.py = vl_sift_round(y);
    double radians = (double)(ori * (float)(3.14159265358979323846 / 180));
    float cos_t = (float)cos(radians), sin_t = (float)sin(radians);
    g.ori = ori;
    g.bins_per_degree = n / 360.f;
    g.exp_scale = -1.f / (d * d * 0.5f);
    float hist_width = VL_SIFT_DESCR_SCL_FACTOR * scl;
    int radius = vl_sift_round(hist_width * 1.4142135623730951f * (d + 1) * 0.5f);
    int diagonal = (int)sqrt((double)w * w + (double)h * h);
    g.radius = radius < diagonal ? radius : diagonal;
    g.cos_t = cos_t / hist_width;
    g.sin_t = sin_t / hist_width;
    return g;
}

/* Sample (py + i, px + j) of a descriptor: 0 when it falls outside the cells or on the image's frame;
 * otherwise 1, its lower cell row r0 and column c0 (-1..3), lower orientation bin o0 (0..7) and its
 * trilinear shares v[(dr * 2 + dc) * 2 + do] of cell (r0 + dr, c0 + dc), bin o0 + do. */
VL_SIFT_FN int vl_sift_descriptor_sample(const float *img, int64_t w, int64_t h, const vl_sift_descr_geometry *g,
                                         int i, int j, int *r0_out, int *c0_out, int *o0_out, float v[8])
{
    const int d = VL_SIFT_DESCR_WIDTH, n = VL_SIFT_DESCR_BINS;
    float c_rot = j * g->cos_t - i * g->sin_t, r_rot = j * g->sin_t + i * g->cos_t;
    float rbin = r_rot + d / 2 - 0.5f, cbin = c_rot + d / 2 - 0.5f;
    int r = g->py + i, c = g->px + j;
    if (!(rbin > -1 && rbin < d && cbin > -1 && cbin < d && r > 0 && r < h - 1 && c > 0 && c < w - 1))
        return 0;
    const float *p = img + (int64_t)r * w + c;
    float dx = p[1] - p[-1], dy = p[-w] - p[w];
    float weight = vl_sift_exp((c_rot * c_rot + r_rot * r_rot) * g->exp_scale);
    float angle = vl_sift_atan2_deg(dy, dx);
    float magnitude = sqrtf(dx * dx + dy * dy) * weight;
    float obin = (angle - g->ori) * g->bins_per_degree;
    int r0 = (int)floorf(rbin), c0 = (int)floorf(cbin), o0 = (int)floorf(obin);
    rbin -= r0;
    cbin -= c0;
    obin -= o0;
    if (o0 < 0)
        o0 += n;
    if (o0 >= n)
        o0 -= n;
    float v_r1 = magnitude * rbin, v_r0 = magnitude - v_r1;
    float v_rc11 = v_r1 * cbin, v_rc10 = v_r1 - v_rc11;
    float v_rc01 = v_r0 * cbin, v_rc00 = v_r0 - v_rc01;
    v[7] = v_rc11 * obin;
    v[6] = v_rc11 - v[7];
    v[5] = v_rc10 * obin;
    v[4] = v_rc10 - v[5];
    v[3] = v_rc01 * obin;
    v[2] = v_rc01 - v[3];
    v[1] = v_rc00 * obin;
    v[0] = v_rc00 - v[1];
    *r0_out = r0;
    *c0_out = c0;
    *o0_out = o0;
    return 1;
}

/* Sum of squares of a descriptor's 128 values in the one order both backends use: 32 partial sums of 4
 * consecutive values each, then halving (partial[l] + partial[l + half], half = 16, 8, .., 1), which is
 * a warp's butterfly reduction with one partial per lane. */
VL_SIFT_FN float vl_sift_descriptor_sum_squares(const float *v)
{
    float partial[32];
    for (int l = 0; l < 32; l++) {
        const float *q = v + 4 * l;
        float s = q[0] * q[0];
        s += q[1] * q[1];
        s += q[2] * q[2];
        s += q[3] * q[3];
        partial[l] = s;
    }
    for (int half = 16; half >= 1; half >>= 1)
        for (int l = 0; l < half; l++)
            partial[l] = partial[l] + partial[l + half];
    return partial[0];
}

/* Value v of a clipped descriptor as a whole number 0..255, given factor = 512 / norm. */
VL_SIFT_FN float vl_sift_descriptor_quantise(float v, float factor)
{
    float q = (float)vl_sift_round(v * factor);
    return q < 0 ? 0 : q > 255 ? 255 : q;
}

/* The 4x4x8 descriptor at (x, y) of a Gaussian level (see vl_sift_descriptor_geometry): trilinear
 * accumulation into `hist` (VL_SIFT_DESCR_HIST floats of scratch), each bin summing its samples in
 * row-major order of (i, j), clipping at 0.2 of the norm, scaling to whole numbers 0..255. */
VL_SIFT_FN void vl_sift_descriptor(const float *img, int64_t w, int64_t h, float x, float y, float ori, float scl,
                                   float *hist, float *dst)
{
    const int d = VL_SIFT_DESCR_WIDTH, n = VL_SIFT_DESCR_BINS;
    vl_sift_descr_geometry g = vl_sift_descriptor_geometry(w, h, x, y, ori, scl);
    for (int k = 0; k < VL_SIFT_DESCR_HIST; k++)
        hist[k] = 0.f;
    for (int i = -g.radius; i <= g.radius; i++)
        for (int j = -g.radius; j <= g.radius; j++) {
            int r0, c0, o0;
            float v[8];
            if (!vl_sift_descriptor_sample(img, w, h, &g, i, j, &r0, &c0, &o0, v))
                continue;
            int idx = ((r0 + 1) * (d + 2) + c0 + 1) * (n + 2) + o0;
            hist[idx] += v[0];
            hist[idx + 1] += v[1];
            hist[idx + (n + 2)] += v[2];
            hist[idx + (n + 3)] += v[3];
            hist[idx + (d + 2) * (n + 2)] += v[4];
            hist[idx + (d + 2) * (n + 2) + 1] += v[5];
            hist[idx + (d + 3) * (n + 2)] += v[6];
            hist[idx + (d + 3) * (n + 2) + 1] += v[7];
        }
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            int idx = ((i + 1) * (d + 2) + (j + 1)) * (n + 2);
            hist[idx] += hist[idx + n];
            hist[idx + 1] += hist[idx + n + 1];
            for (int k = 0; k < n; k++)
                dst[(i * d + j) * n + k] = hist[idx + k];
        }
    const int len = d * d * n;
    float threshold = sqrtf(vl_sift_descriptor_sum_squares(dst)) * VL_SIFT_DESCR_MAG_THR;
    for (int k = 0; k < len; k++)
        dst[k] = fminf(dst[k], threshold);
    float factor = VL_SIFT_DESCR_INT_FACTOR / fmaxf(sqrtf(vl_sift_descriptor_sum_squares(dst)), VL_SIFT_FLT_EPSILON);
    for (int k = 0; k < len; k++)
        dst[k] = vl_sift_descriptor_quantise(dst[k], factor);
}

#endif
