/* The SIFT plan (pyramid sizes and Gaussian kernels, as OpenCV's SIFT derives them), the keypoint list,
 * its final order, and the normalisation of input samples to OpenCV's 8-bit scale. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/sift_internal.h"

/* OpenCV's GaussianBlur kernel for float images: 2 * round(4 sigma) + 1 taps, exp(-x^2 / 2 sigma^2)
 * normalised in double, stored as float. Returns the radius, or -1 when it exceeds VL_SIFT_MAX_RADIUS. */
static int gaussian_kernel(double sigma, float *taps)
{
    int size = ((int)lrint(sigma * 8 + 1)) | 1, radius = size / 2;
    if (radius > VL_SIFT_MAX_RADIUS)
        return -1;
    double weights[2 * VL_SIFT_MAX_RADIUS + 1], sum = 0;
    double scale = -0.5 / (sigma * sigma);
    for (int i = 0; i < size; i++) {
        double x = i - radius;
        weights[i] = exp(scale * x * x);
        sum += weights[i];
    }
    for (int i = 0; i <= radius; i++)
        taps[i] = (float)(weights[radius + i] / sum);
    return radius;
}

vl_status vl_sift_plan_make(int64_t width, int64_t height, const vl_sift_options *options, vl_sift_plan *plan)
{
    vl_status status = vl_sift_options_validate(options);
    if (status != VL_OK)
        return status;
    if (width < VL_SIFT_MIN_SIDE || height < VL_SIFT_MIN_SIDE)
        return vl_fail(VL_ERR_INPUT, "sift: a %lldx%lld image is too small (at least %dx%d pixels)", (long long)width,
                       (long long)height, VL_SIFT_MIN_SIDE, VL_SIFT_MIN_SIDE);
    if (width > VL_SIFT_MAX_SIDE || height > VL_SIFT_MAX_SIDE)
        return vl_fail(VL_ERR_INPUT, "sift: a %lldx%lld image is too large (at most %dx%d pixels)", (long long)width,
                       (long long)height, VL_SIFT_MAX_SIDE, VL_SIFT_MAX_SIDE);
    memset(plan, 0, sizeof *plan);
    plan->width = width;
    plan->height = height;
    plan->layers = options->octave_layers;
    plan->gauss_levels = plan->layers + 3;
    plan->dog_levels = plan->layers + 2;
    int64_t base_w = 2 * width, base_h = 2 * height;
    int64_t smaller = base_w < base_h ? base_w : base_h;
    plan->octaves = (int)lrint(log((double)smaller) / log(2.) - 2) + 1;
    if (plan->octaves > VL_SIFT_MAX_OCTAVES)
        plan->octaves = VL_SIFT_MAX_OCTAVES;
    int64_t gauss = 0, dog = 0;
    for (int o = 0; o < plan->octaves; o++) {
        plan->w[o] = o == 0 ? base_w : plan->w[o - 1] / 2;
        plan->h[o] = o == 0 ? base_h : plan->h[o - 1] / 2;
        plan->gauss_offset[o] = gauss;
        plan->dog_offset[o] = dog;
        gauss += plan->w[o] * plan->h[o] * plan->gauss_levels;
        dog += plan->w[o] * plan->h[o] * plan->dog_levels;
    }
    plan->gauss_floats = gauss;
    plan->dog_floats = dog;
    /* Level 0's kernel blurs the doubled input (assumed blur 2 x 0.5) up to sigma; level i > 0 adds the
     * blur from sigma k^(i-1) to sigma k^i. */
    double sigma = options->sigma, k = pow(2., 1. / plan->layers);
    double base = sqrt(fmax(sigma * sigma - 0.5 * 0.5 * 4, 0.01));
    plan->radius[0] = gaussian_kernel((float)base, plan->kernel[0]);
    for (int i = 1; i < plan->gauss_levels; i++) {
        double previous = pow(k, (double)(i - 1)) * sigma, total = previous * k;
        plan->radius[i] = gaussian_kernel(sqrt(total * total - previous * previous), plan->kernel[i]);
    }
    for (int i = 0; i < plan->gauss_levels; i++)
        if (plan->radius[i] < 0)
            return vl_fail(VL_ERR_ARGUMENT, "sift: sigma %g with %d layers per octave needs Gaussian kernels wider "
                           "than %d taps", options->sigma, plan->layers, 2 * VL_SIFT_MAX_RADIUS + 1);
    plan->scan_threshold = vl_sift_scan_threshold((float)options->contrast_threshold, plan->layers);
    plan->contrast_threshold = (float)options->contrast_threshold;
    plan->edge_threshold = (float)options->edge_threshold;
    plan->sigma = (float)options->sigma;
    plan->input_scale = (float)(255.0 / options->value_range);
    plan->input_offset = (float)options->value_offset;
    return VL_OK;
}

vl_status vl_sift_list_push(vl_sift_list *list, const vl_sift_found *item)
{
    if (list->count == list->capacity) {
        int64_t capacity = list->capacity ? 2 * list->capacity : 1024;
        vl_sift_found *grown = realloc(list->items, (size_t)capacity * sizeof *grown);
        if (!grown)
            return vl_fail(VL_ERR_MEMORY, "sift: out of memory for keypoints");
        list->items = grown;
        list->capacity = capacity;
    }
    list->items[list->count++] = *item;
    return VL_OK;
}

void vl_sift_list_free(vl_sift_list *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

/* OpenCV's KeyPoint order before duplicate removal. */
static int keypoint_order(const void *pa, const void *pb)
{
    const vl_sift_keypoint *a = &((const vl_sift_found *)pa)->keypoint, *b = &((const vl_sift_found *)pb)->keypoint;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if (a->angle != b->angle)
        return a->angle < b->angle ? -1 : 1;
    if (a->response != b->response)
        return a->response > b->response ? -1 : 1;
    if (a->octave != b->octave)
        return a->octave > b->octave ? -1 : 1;
    return 0;
}

static int by_response(const void *pa, const void *pb)
{
    const vl_sift_found *a = pa, *b = pb;
    if (a->keypoint.response != b->keypoint.response)
        return a->keypoint.response > b->keypoint.response ? -1 : 1;
    return keypoint_order(pa, pb);
}

void vl_sift_finish_keypoints(vl_sift_list *list, int max_keypoints)
{
    vl_sift_found *items = list->items;
    if (list->count > 1) {
        qsort(items, (size_t)list->count, sizeof *items, keypoint_order);
        int64_t kept = 0;
        for (int64_t j = 1; j < list->count; j++) {
            const vl_sift_keypoint *a = &items[kept].keypoint, *b = &items[j].keypoint;
            if (a->x != b->x || a->y != b->y || a->size != b->size || a->angle != b->angle)
                items[++kept] = items[j];
        }
        list->count = kept + 1;
    }
    if (max_keypoints > 0 && list->count > max_keypoints) {
        qsort(items, (size_t)list->count, sizeof *items, by_response);
        list->count = max_keypoints;
        qsort(items, (size_t)list->count, sizeof *items, keypoint_order);
    }
    for (int64_t i = 0; i < list->count; i++) {
        vl_sift_keypoint *k = &items[i].keypoint;
        k->x *= 0.5f;
        k->y *= 0.5f;
        k->size *= 0.5f;
        k->octave = (k->octave & ~255) | ((k->octave - 1) & 255);
    }
}

void vl_sift_normalise_slice(const vl_sift_plan *plan, const vl_volume *volume, int64_t z, float *out)
{
    int64_t pixels = plan->width * plan->height, start = z * pixels;
    float scale = plan->input_scale, offset = plan->input_offset;
    for (int64_t i = 0; i < pixels; i++)
        out[i] = ((float)vl_volume_value(volume, start + i) - offset) * scale;
}

void vl_sift_normalise_image(const vl_sift_plan *plan, const float *image, float *out)
{
    int64_t pixels = plan->width * plan->height;
    float scale = plan->input_scale, offset = plan->input_offset;
    for (int64_t i = 0; i < pixels; i++)
        out[i] = (image[i] - offset) * scale;
}
