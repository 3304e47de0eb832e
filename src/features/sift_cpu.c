/* SIFT's CPU reference: the doubled input, the Gaussian and DoG pyramids (separable reflect-101 blur,
 * symmetric taps summed centre first), the extremum scan and the per-keypoint work of sift_math.h.
 * Rows (pyramid), rows of each DoG layer (scan) and keypoints (descriptors) are split among threads; the
 * result does not depend on the split (each output is computed by one fixed expression, and keypoints are
 * put in their final order afterwards). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "features/sift_internal.h"

typedef struct row_job {
    void (*rows)(const void *context, int64_t first, int64_t end);
    const void *context;
    int64_t first, end;
} row_job;

static void *run_row_job(void *argument)
{
    row_job *job = argument;
    job->rows(job->context, job->first, job->end);
    return NULL;
}

/* Runs rows(context, first, end) over [0, count) in `threads` contiguous parts. */
static void parallel_rows(void (*rows)(const void *, int64_t, int64_t), const void *context, int64_t count,
                          int threads)
{
    row_job jobs[VL_MAX_THREADS];
    int parts = threads < 1 ? 1 : threads > VL_MAX_THREADS ? VL_MAX_THREADS : threads;
    if (parts > count)
        parts = count < 1 ? 1 : (int)count;
    for (int t = 0; t < parts; t++)
        jobs[t] = (row_job){rows, context, count * t / parts, count * (t + 1) / parts};
    vl_run_parallel(run_row_job, jobs, sizeof jobs[0], parts);
}

typedef struct blur_pass {
    const float *src;
    float *dst;
    int64_t w, h;
    const float *taps;
    int radius;
} blur_pass;

static void blur_rows_horizontal(const void *context, int64_t first, int64_t end)
{
    const blur_pass *p = context;
    int64_t w = p->w;
    int r = p->radius;
    /* Interior outputs [r, w - r) accumulate tap by tap across the row (vectorisable), each output still
     * summed centre first, then k = 1..r, as on the GPU; the border outputs reflect. */
    int64_t lo = r < w ? r : w, hi = w - r > lo ? w - r : lo;
    for (int64_t y = first; y < end; y++) {
        const float *s = p->src + y * w;
        float *d = p->dst + y * w;
        for (int64_t x = lo; x < hi; x++)
            d[x] = p->taps[0] * s[x];
        for (int k = 1; k <= r; k++) {
            float tap = p->taps[k];
            const float *left = s - k, *right = s + k;
            for (int64_t x = lo; x < hi; x++)
                d[x] += tap * (left[x] + right[x]);
        }
        for (int64_t x = 0; x < w; x++) {
            if (x == lo && hi > lo)
                x = hi;
            if (x >= w)
                break;
            float sum = p->taps[0] * s[x];
            for (int k = 1; k <= r; k++)
                sum += p->taps[k] * (s[vl_sift_reflect101(x - k, w)] + s[vl_sift_reflect101(x + k, w)]);
            d[x] = sum;
        }
    }
}

static void blur_rows_vertical(const void *context, int64_t first, int64_t end)
{
    const blur_pass *p = context;
    int64_t w = p->w, h = p->h;
    int r = p->radius;
    const float *rows_above[VL_SIFT_MAX_RADIUS + 1], *rows_below[VL_SIFT_MAX_RADIUS + 1];
    for (int64_t y = first; y < end; y++) {
        float *d = p->dst + y * w;
        const float *centre = p->src + y * w;
        for (int k = 1; k <= r; k++) {
            rows_above[k] = p->src + vl_sift_reflect101(y - k, h) * w;
            rows_below[k] = p->src + vl_sift_reflect101(y + k, h) * w;
        }
        for (int64_t x = 0; x < w; x++)
            d[x] = p->taps[0] * centre[x];
        for (int k = 1; k <= r; k++) {
            const float *a = rows_above[k], *b = rows_below[k];
            float tap = p->taps[k];
            for (int64_t x = 0; x < w; x++)
                d[x] += tap * (a[x] + b[x]);
        }
    }
}

/* dst = src blurred with kernel `level` of the plan; scratch holds w*h floats. */
static void blur(const vl_sift_plan *plan, int level, const float *src, float *dst, float *scratch, int64_t w,
                 int64_t h, int threads)
{
    blur_pass horizontal = {src, scratch, w, h, plan->kernel[level], plan->radius[level]};
    parallel_rows(blur_rows_horizontal, &horizontal, h, threads);
    blur_pass vertical = {scratch, dst, w, h, plan->kernel[level], plan->radius[level]};
    parallel_rows(blur_rows_vertical, &vertical, h, threads);
}

/* 2x bilinear enlargement with OpenCV's pixel-centre mapping: even outputs 0.25 left + 0.75 centre, odd
 * outputs 0.75 centre + 0.25 right, the edge samples replicated; horizontal first, then vertical. */
static void upsample(const float *src, int64_t w, int64_t h, float *dst, float *scratch)
{
    int64_t w2 = 2 * w;
    for (int64_t y = 0; y < h; y++) {
        const float *s = src + y * w;
        float *d = scratch + y * w2;
        for (int64_t x = 0; x < w2; x++) {
            int64_t i = x >> 1;
            int64_t left = (x & 1) ? i : i - 1, right = (x & 1) ? i + 1 : i;
            float a = (x & 1) ? 0.75f : 0.25f, b = (x & 1) ? 0.25f : 0.75f;
            if (left < 0)
                left = 0;
            if (right >= w)
                right = w - 1;
            d[x] = s[left] * a + s[right] * b;
        }
    }
    for (int64_t y = 0; y < 2 * h; y++) {
        int64_t i = y >> 1;
        int64_t top = (y & 1) ? i : i - 1, bottom = (y & 1) ? i + 1 : i;
        float a = (y & 1) ? 0.75f : 0.25f, b = (y & 1) ? 0.25f : 0.75f;
        if (top < 0)
            top = 0;
        if (bottom >= h)
            bottom = h - 1;
        const float *s0 = scratch + top * w2, *s1 = scratch + bottom * w2;
        float *d = dst + y * w2;
        for (int64_t x = 0; x < w2; x++)
            d[x] = s0[x] * a + s1[x] * b;
    }
}

/* Nearest-neighbour halving as OpenCV's INTER_NEAREST: source index floor(x * sw / dw), clamped. */
static void downsample(const float *src, int64_t sw, int64_t sh, float *dst, int64_t dw, int64_t dh)
{
    double fx = 1. / ((double)dw / sw), fy = 1. / ((double)dh / sh);
    for (int64_t y = 0; y < dh; y++) {
        int64_t sy = (int64_t)floor(y * fy);
        if (sy > sh - 1)
            sy = sh - 1;
        for (int64_t x = 0; x < dw; x++) {
            int64_t sx = (int64_t)floor(x * fx);
            if (sx > sw - 1)
                sx = sw - 1;
            dst[y * dw + x] = src[sy * sw + sx];
        }
    }
}

vl_status vl_sift_workspace_create(const vl_sift_plan *plan, vl_sift_workspace *workspace)
{
    size_t doubled = (size_t)(plan->w[0] * plan->h[0]);
    workspace->normalised = malloc((size_t)(plan->width * plan->height) * sizeof(float));
    workspace->gauss = malloc((size_t)plan->gauss_floats * sizeof(float));
    workspace->dog = malloc((size_t)plan->dog_floats * sizeof(float));
    workspace->doubled = malloc(doubled * sizeof(float));
    workspace->scratch = malloc(doubled * sizeof(float));
    if (workspace->normalised && workspace->gauss && workspace->dog && workspace->doubled && workspace->scratch)
        return VL_OK;
    vl_sift_workspace_free(workspace);
    return vl_fail(VL_ERR_MEMORY, "sift: out of memory for a %lldx%lld pyramid", (long long)plan->w[0],
                   (long long)plan->h[0]);
}

void vl_sift_workspace_free(vl_sift_workspace *workspace)
{
    free(workspace->normalised);
    free(workspace->gauss);
    free(workspace->dog);
    free(workspace->doubled);
    free(workspace->scratch);
    memset(workspace, 0, sizeof *workspace);
}

void vl_sift_pyramid_cpu(const vl_sift_plan *plan, const float *image, float *gauss, float *dog, float *doubled,
                         float *scratch, int threads)
{
    upsample(image, plan->width, plan->height, doubled, scratch);
    for (int o = 0; o < plan->octaves; o++) {
        int64_t w = plan->w[o], h = plan->h[o], n = w * h;
        float *level = gauss + plan->gauss_offset[o];
        if (o == 0)
            blur(plan, 0, doubled, level, scratch, w, h, threads);
        else
            downsample(gauss + plan->gauss_offset[o - 1] + plan->layers * plan->w[o - 1] * plan->h[o - 1],
                       plan->w[o - 1], plan->h[o - 1], level, w, h);
        for (int i = 1; i < plan->gauss_levels; i++)
            blur(plan, i, level + (i - 1) * n, level + i * n, scratch, w, h, threads);
        float *d = dog + plan->dog_offset[o];
        for (int i = 0; i < plan->dog_levels; i++)
            for (int64_t p = 0; p < n; p++)
                d[i * n + p] = level[(i + 1) * n + p] - level[i * n + p];
    }
}

/* Keypoints of one refined candidate: one per orientation peak >= 0.8 of the highest. */
static vl_status emit_keypoints(const vl_sift_plan *plan, const float *gauss, const vl_sift_candidate *c,
                                vl_sift_list *out)
{
    int o = c->octave;
    int64_t w = plan->w[o], h = plan->h[o];
    const float *level = gauss + plan->gauss_offset[o] + c->layer * w * h;
    float scale_octave = c->size * 0.5f / (float)(1 << o);
    float hist[VL_SIFT_ORI_BINS];
    float peak = vl_sift_orientation_histogram(level, w, h, c->row, c->col,
                                               vl_sift_round(VL_SIFT_ORI_RADIUS * scale_octave),
                                               VL_SIFT_ORI_SIG_FACTOR * scale_octave, hist);
    float threshold = peak * VL_SIFT_ORI_PEAK_RATIO;
    for (int j = 0; j < VL_SIFT_ORI_BINS; j++) {
        float angle = vl_sift_peak_angle(hist, j, threshold);
        if (angle < 0)
            continue;
        vl_sift_found item = {{c->x, c->y, c->size, angle, c->response, c->octave_packed, 0}, o, c->layer};
        vl_status status = vl_sift_list_push(out, &item);
        if (status != VL_OK)
            return status;
    }
    return VL_OK;
}

typedef struct scan_job {
    const vl_sift_plan *plan;
    const float *gauss, *dog;
    int octave, layer;
    vl_sift_list found;
    vl_status status;
} scan_job;

static void scan_rows(scan_job *job, int64_t first, int64_t end)
{
    const vl_sift_plan *plan = job->plan;
    int o = job->octave;
    int64_t w = plan->w[o], h = plan->h[o];
    const float *dog_octave = job->dog + plan->dog_offset[o];
    const float *layers[VL_SIFT_MAX_LEVELS];
    for (int i = 0; i < plan->dog_levels; i++)
        layers[i] = dog_octave + i * w * h;
    const float *prev = layers[job->layer - 1], *cur = layers[job->layer], *next = layers[job->layer + 1];
    const float *levels[VL_SIFT_MAX_LEVELS];
    for (int i = 0; i < plan->gauss_levels; i++)
        levels[i] = job->gauss + plan->gauss_offset[o] + i * w * h;
    for (int64_t r = first; r < end && job->status == VL_OK; r++)
        for (int64_t c = VL_SIFT_IMG_BORDER; c < w - VL_SIFT_IMG_BORDER; c++) {
            /* A necessary condition first (the full test implies it), then the shared branch-free test. */
            float v = cur[r * w + c];
            if (!(fabsf(v) > plan->scan_threshold) ||
                (v > 0 ? v < cur[r * w + c - 1] || v < cur[r * w + c + 1]
                       : v > cur[r * w + c - 1] || v > cur[r * w + c + 1]))
                continue;
            if (!vl_sift_is_extremum(prev, cur, next, r * w + c, w, plan->scan_threshold))
                continue;
            vl_sift_candidate candidate;
            if (vl_sift_refine(levels, w, h, o, job->layer, (int)r, (int)c, plan->layers, plan->contrast_threshold,
                               plan->edge_threshold, plan->sigma, &candidate))
                job->status = emit_keypoints(plan, job->gauss, &candidate, &job->found);
        }
}

typedef struct scan_part {
    scan_job job;
    int64_t first, end;
} scan_part;

static void *run_scan_part(void *argument)
{
    scan_part *part = argument;
    scan_rows(&part->job, part->first, part->end);
    return NULL;
}

vl_status vl_sift_detect_cpu(const vl_sift_plan *plan, const float *gauss, const float *dog, int max_keypoints,
                             int threads, vl_sift_list *found)
{
    scan_part *parts = calloc(VL_MAX_THREADS, sizeof *parts);
    if (!parts)
        return vl_fail(VL_ERR_MEMORY, "sift: out of memory");
    vl_status status = VL_OK;
    int count = threads < 1 ? 1 : threads > VL_MAX_THREADS ? VL_MAX_THREADS : threads;
    for (int o = 0; o < plan->octaves && status == VL_OK; o++) {
        int64_t h = plan->h[o], rows = h - 2 * VL_SIFT_IMG_BORDER;
        if (rows <= 0 || plan->w[o] <= 2 * VL_SIFT_IMG_BORDER)
            continue;
        for (int layer = 1; layer <= plan->layers && status == VL_OK; layer++) {
            int used = count > rows ? (int)rows : count;
            for (int t = 0; t < used; t++) {
                parts[t].job = (scan_job){plan, gauss, dog, o, layer, {0}, VL_OK};
                parts[t].first = VL_SIFT_IMG_BORDER + rows * t / used;
                parts[t].end = VL_SIFT_IMG_BORDER + rows * (t + 1) / used;
            }
            vl_run_parallel(run_scan_part, parts, sizeof parts[0], used);
            for (int t = 0; t < used; t++) {
                if (parts[t].job.status != VL_OK)
                    status = parts[t].job.status;
                for (int64_t i = 0; i < parts[t].job.found.count && status == VL_OK; i++)
                    status = vl_sift_list_push(found, &parts[t].job.found.items[i]);
                vl_sift_list_free(&parts[t].job.found);
            }
        }
    }
    free(parts);
    if (status == VL_OK)
        vl_sift_finish_keypoints(found, max_keypoints);
    return status;
}

typedef struct describe_context {
    const vl_sift_plan *plan;
    const float *gauss;
    const vl_sift_found *found;
    float *descriptors;
} describe_context;

static void describe_rows(const void *argument, int64_t first, int64_t end)
{
    const describe_context *d = argument;
    float hist[VL_SIFT_DESCR_HIST];
    for (int64_t i = first; i < end; i++) {
        const vl_sift_found *f = &d->found[i];
        int o = f->octave;
        int64_t w = d->plan->w[o], h = d->plan->h[o];
        const float *level = d->gauss + d->plan->gauss_offset[o] + f->layer * w * h;
        /* Input pixels -> octave pixels: x 2 for the doubling, / 2^o for the octave (exact powers of two). */
        float scale = 2.f / (float)(1 << o);
        float angle = 360.f - f->keypoint.angle;
        if (fabsf(angle - 360.f) < VL_SIFT_FLT_EPSILON)
            angle = 0.f;
        vl_sift_descriptor(level, w, h, f->keypoint.x * scale, f->keypoint.y * scale, angle,
                           f->keypoint.size * scale * 0.5f, hist, d->descriptors + i * VL_SIFT_DESCRIPTOR_SIZE);
    }
}

void vl_sift_describe_cpu(const vl_sift_plan *plan, const float *gauss, const vl_sift_found *found, int64_t count,
                          int threads, float *descriptors)
{
    describe_context context = {plan, gauss, found, descriptors};
    parallel_rows(describe_rows, &context, count, threads);
}
