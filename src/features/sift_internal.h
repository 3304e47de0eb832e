/* Internal: the SIFT plan (pyramid sizes, Gaussian kernels) shared by the CPU reference (sift_cpu.c) and
 * the GPU half (cuda/features/sift_gpu.cu), and the keypoint list both fill. sift.c dispatches. */
#ifndef VL_SIFT_INTERNAL_H
#define VL_SIFT_INTERNAL_H

#include <stdint.h>

#include "voxlabel/features.h"
#include "features/sift_math.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VL_SIFT_MAX_OCTAVES 32
#define VL_SIFT_MAX_LEVELS 12      /* octave_layers + 3 with octave_layers <= 9 */
#define VL_SIFT_MAX_RADIUS 160     /* widest blur kernel; wider (large sigma, few layers) is refused */

/* Everything about one image size and option set that does not depend on the pixels. */
typedef struct vl_sift_plan {
    int64_t width, height;                    /* input */
    int octaves, layers, gauss_levels, dog_levels;
    int64_t w[VL_SIFT_MAX_OCTAVES], h[VL_SIFT_MAX_OCTAVES];
    int64_t gauss_offset[VL_SIFT_MAX_OCTAVES]; /* first Gaussian level of each octave, in floats */
    int64_t dog_offset[VL_SIFT_MAX_OCTAVES];
    int64_t gauss_floats, dog_floats;          /* one image's pyramid sizes */
    int radius[VL_SIFT_MAX_LEVELS];           /* level 0: the base blur of the doubled input */
    float kernel[VL_SIFT_MAX_LEVELS][VL_SIFT_MAX_RADIUS + 1]; /* centre tap first, symmetric */
    float scan_threshold;                     /* 8-bit scale */
    float contrast_threshold, edge_threshold, sigma;
    float input_scale, input_offset;          /* sample -> (sample - offset) * scale */
} vl_sift_plan;

vl_status vl_sift_plan_make(int64_t width, int64_t height, const vl_sift_options *options, vl_sift_plan *plan);

/* Reflect-101 index (OpenCV's default border) of p in [0, len). */
VL_SIFT_FN int64_t vl_sift_reflect101(int64_t p, int64_t len)
{
    if (len == 1)
        return 0;
    while (p < 0 || p >= len)
        p = p < 0 ? -p : 2 * len - 2 - p;
    return p;
}

/* A growing list of keypoints with the Gaussian level each was found on (for the descriptor). */
typedef struct vl_sift_found {
    vl_sift_keypoint keypoint;   /* in doubled-input pixels until vl_sift_finish_keypoints */
    int32_t octave, layer;       /* doubled-image octave (0 = doubled) and Gaussian layer */
} vl_sift_found;

typedef struct vl_sift_list {
    vl_sift_found *items;
    int64_t count, capacity;
} vl_sift_list;

vl_status vl_sift_list_push(vl_sift_list *list, const vl_sift_found *item);
void vl_sift_list_free(vl_sift_list *list);
/* Sorts into OpenCV's order, drops duplicates, keeps the strongest max_keypoints (0: all) and moves
 * positions and sizes from doubled-input to input pixels (octave numbering from -1). */
void vl_sift_finish_keypoints(vl_sift_list *list, int max_keypoints);

/* Appends one slice's finished keypoints and descriptors to `out` (slices in order, slice_start sized). */
vl_status vl_sift_append_slice(vl_sift_features *out, int64_t slice, const vl_sift_list *found,
                               const float *descriptors);

/* The CPU's working memory for one image of a plan, reused slice after slice (a pyramid is tens of MiB:
 * allocating it per slice costs page faults that serialise threads). */
typedef struct vl_sift_workspace {
    float *normalised, *gauss, *dog, *doubled, *scratch;
} vl_sift_workspace;

vl_status vl_sift_workspace_create(const vl_sift_plan *plan, vl_sift_workspace *workspace);
void vl_sift_workspace_free(vl_sift_workspace *workspace);

/* CPU reference: pyramid of one normalised image into gauss / dog (plan sizes), with doubled and scratch
 * (2w x 2h floats each) as working memory. */
void vl_sift_pyramid_cpu(const vl_sift_plan *plan, const float *image, float *gauss, float *dog, float *doubled,
                         float *scratch, int threads);
/* CPU reference: keypoints (finished, input pixels) and descriptors of one image from its pyramid. */
vl_status vl_sift_detect_cpu(const vl_sift_plan *plan, const float *gauss, const float *dog, int max_keypoints,
                             int threads, vl_sift_list *found);
void vl_sift_describe_cpu(const vl_sift_plan *plan, const float *gauss, const vl_sift_found *found, int64_t count,
                          int threads, float *descriptors);

/* GPU half: every slice of `volume` (or one image when volume is NULL and image is set), keypoints and
 * descriptors into out; the same results as the CPU reference. Batches are sized to `gpu_memory` bytes, or
 * to half the free device memory when 0. */
vl_status vl_sift_run_gpu(const vl_sift_plan *plan, const float *image, const vl_volume *volume,
                          const vl_sift_options *options, const vl_progress *progress, vl_sift_features *out,
                          int gpu_index, uint64_t gpu_memory);
vl_status vl_sift_pyramid_gpu(const vl_sift_plan *plan, const float *image, float *gauss, float *dog, int gpu_index);

/* Normalised float samples of slice z of a volume (or of a float image) on OpenCV's 8-bit scale. */
void vl_sift_normalise_slice(const vl_sift_plan *plan, const vl_volume *volume, int64_t z, float *out);
void vl_sift_normalise_image(const vl_sift_plan *plan, const float *image, float *out);

#ifdef __cplusplus
}
#endif
#endif
