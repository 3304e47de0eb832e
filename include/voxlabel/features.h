/* voxlabel: feature stage A, SIFT keypoints and descriptors per 2D slice, descriptor matching and
 * in-plane registration of slice pairs (docs/features.md).
 *
 * The detector follows OpenCV's SIFT with its defaults: the input doubled by bilinear interpolation
 * (first octave -1), 3 layers per octave, sigma 1.6 (assumed input blur 0.5), contrast threshold 0.04,
 * edge threshold 10, 36-bin orientation histograms (a keypoint per peak >= 0.8 of the highest) and the
 * 4x4x8 descriptor with its 0.2 clipping, scaled so that its entries are whole numbers 0..255.
 * Intensities are on OpenCV's 8-bit scale: `value_range` of the input maps onto 255, so a float HU slice
 * with value_range = window width behaves like its 8-bit window rendering without the clipping (the
 * contrast threshold is scaled by the window width).
 *
 * Coordinates: x = column, y = row, 0-based pixel centres, as OpenCV's KeyPoint. size = 2 sigma in input
 * pixels; angle in degrees, counter-clockwise with y down (OpenCV's convention); octave packed as OpenCV
 * packs it (octave & 255 signed, layer << 8, sub-layer << 16).
 *
 * Order: keypoints of one image are sorted by (x asc, y asc, size desc, angle asc, response desc,
 * octave desc) and equal (x, y, size, angle) entries are dropped, exactly as OpenCV's detectAndCompute
 * does, so the order is the same on every run, every thread count and both backends. */
#ifndef VOXLABEL_FEATURES_H
#define VOXLABEL_FEATURES_H

#include <stdint.h>

#include "voxlabel/device.h"
#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VL_SIFT_DESCRIPTOR_SIZE 128
/* Images smaller than this on either side are refused: the pyramid needs border room (OpenCV's border
 * of 5 pixels in the doubled image plus one 3x3x3 neighbourhood). */
#define VL_SIFT_MIN_SIDE 16
/* The doubled image must stay within the GPU's grid rows (65535) and 32-bit pixel counts per level. */
#define VL_SIFT_MAX_SIDE 32767

typedef struct vl_sift_options {
    int octave_layers;         /* 3 */
    double contrast_threshold; /* 0.04, on the 0..1 scale of value_range */
    double edge_threshold;     /* 10 */
    double sigma;              /* 1.6 */
    double value_range;        /* the input span that maps to 255: 255 for 8-bit samples, the window width for HU */
    double value_offset;       /* subtracted before scaling (window lower edge for HU; 0 for 8-bit) */
    int max_keypoints;         /* 0: all; else the strongest by response, then the order above */
    int threads;               /* CPU threads (0: all cores) */
} vl_sift_options;

typedef struct vl_sift_keypoint {
    float x, y;        /* input pixels */
    float size;        /* 2 sigma, input pixels */
    float angle;       /* degrees 0..360 */
    float response;    /* |interpolated DoG| on the 0..1 scale */
    int32_t octave;    /* OpenCV's packing */
    int32_t slice;     /* slice of the volume (0 for one image) */
} vl_sift_keypoint;

typedef struct vl_sift_features {
    int64_t count;
    vl_sift_keypoint *keypoints;   /* count entries, slice by slice, each slice in the documented order */
    float *descriptors;            /* count x 128, whole numbers 0..255 (OpenCV's float layout) */
    int64_t *slice_start;          /* slices + 1 entries: keypoints of slice z are [slice_start[z], slice_start[z+1]) */
    int64_t slices;
} vl_sift_features;

void vl_sift_options_default(vl_sift_options *options);
vl_status vl_sift_options_validate(const vl_sift_options *options);

/* SIFT on one float image (width x height, row-major). Fails with VL_ERR_INPUT for an image smaller than
 * VL_SIFT_MIN_SIDE or one without finite samples. A constant image yields no keypoints (not an error). */
vl_status vl_sift_image(const float *image, int64_t width, int64_t height, const vl_sift_options *options,
                        const vl_device *device, vl_sift_features *out, vl_device_outcome *outcome);
/* SIFT on every slice of a volume (any dtype), the samples taken as they are (after value_offset and
 * value_range). The GPU processes slices in batches; progress reports "sift" per slice. */
vl_status vl_sift_volume(const vl_volume *volume, const vl_sift_options *options, const vl_device *device,
                         const vl_progress *progress, vl_sift_features *out, vl_device_outcome *outcome);
/* Descriptors at given keypoints (as OpenCV's compute()): x, y, size, angle and octave are used; the
 * pyramid is the detector's. `descriptors` gets count x 128 floats. CPU only. */
vl_status vl_sift_describe(const float *image, int64_t width, int64_t height, const vl_sift_options *options,
                           const vl_sift_keypoint *keypoints, int64_t count, float *descriptors);
void vl_sift_features_free(vl_sift_features *features);

/* One descriptor as uint8 (OpenCV's CV_8U layout: the same whole numbers). */
void vl_sift_descriptor_to_u8(const float *descriptor, uint8_t *out);

/* The Gaussian pyramid (octave_layers + 3 levels per octave) and DoG pyramid (octave_layers + 2) of one
 * image, levels stored one after another, octave by octave; sizes in level_width/level_height. For tests
 * (F1) and inspection. */
typedef struct vl_sift_pyramid {
    int octaves, gauss_levels, dog_levels;   /* per octave */
    int64_t *level_width, *level_height;     /* octaves x gauss_levels */
    int64_t *gauss_offset, *dog_offset;      /* start of each level in gauss / dog */
    float *gauss, *dog;
} vl_sift_pyramid;
vl_status vl_sift_pyramid_build(const float *image, int64_t width, int64_t height, const vl_sift_options *options,
                                const vl_device *device, vl_sift_pyramid *pyramid);
void vl_sift_pyramid_free(vl_sift_pyramid *pyramid);

/* Matching: for each query descriptor its nearest and second-nearest train descriptor by L2 distance
 * (ties: the lower train index); kept when nearest < ratio * second (Lowe's test; ratio 0.8 default). */
typedef struct vl_feature_match {
    int32_t query, train;  /* indices into the two descriptor arrays */
    float distance;        /* L2 on the stored whole-number descriptors */
} vl_feature_match;

vl_status vl_match_descriptors(const float *query, int64_t query_count, const float *train, int64_t train_count,
                               double ratio, const vl_device *device, vl_feature_match **matches, int64_t *count,
                               vl_device_outcome *outcome);

typedef enum vl_transform_model {
    VL_TRANSFORM_SIMILARITY = 0,  /* rotation, uniform scale, translation (4 parameters) */
    VL_TRANSFORM_AFFINE           /* 6 parameters */
} vl_transform_model;

typedef struct vl_ransac_options {
    vl_transform_model model;    /* similarity */
    double inlier_threshold;     /* pixels, default 3 */
    int iterations;              /* default 2000 */
    uint64_t seed;               /* default 1: the same seed gives the same result */
    int min_inliers;             /* below this the estimate fails (default 8) */
    double min_scale, max_scale; /* plausible scale (sqrt |det|) of the map; others are degenerate (0.5, 2) */
} vl_ransac_options;

typedef struct vl_ransac_result {
    double matrix[6];        /* x' = m0 x + m1 y + m2, y' = m3 x + m4 y + m5 (A pixels -> B pixels) */
    int64_t inliers;
    uint8_t *inlier_mask;    /* one per match; owned, free with vl_ransac_result_free */
    double residual_rms;     /* px, over the inliers after the least-squares refit */
    double rotation_deg, scale;  /* of the linear part: degrees counter-clockwise as displayed (y down, the
                                  * keypoint angle's and cv2.getRotationMatrix2D's sense); scale = sqrt |det| */
} vl_ransac_result;

void vl_ransac_options_default(vl_ransac_options *options);
/* Estimates the transform from matched points a[i] -> b[i] (x, y pairs). Hypotheses that mirror the image
 * (det <= 0) or scale it outside [min_scale, max_scale] are discarded: with repeated structure or many
 * matches to one point they can gather inliers while meaning nothing. Fails with VL_ERR_INPUT when fewer
 * than min_inliers agree. */
vl_status vl_ransac_estimate(const float *a, const float *b, int64_t count, const vl_ransac_options *options,
                             vl_ransac_result *result);
void vl_ransac_result_free(vl_ransac_result *result);

/* One slice pair: keypoints of slice za of `a` matched to those of slice zb of `b` (Lowe's ratio), then a
 * RANSAC transform a -> b in pixels. `found` is 0 (and the transform the identity) when too few matches
 * agree; the matches and the inlier flags are returned when the pointers are not NULL (free them). */
typedef struct vl_slice_pair {
    int64_t slice_a, slice_b;
    int64_t matches, inliers;
    int found;
    double matrix[6], rotation_deg, scale, residual_rms;
} vl_slice_pair;

vl_status vl_register_slice_pair(const vl_sift_features *a, int64_t za, const vl_sift_features *b, int64_t zb,
                                 double ratio, const vl_ransac_options *ransac, const vl_device *device,
                                 vl_slice_pair *pair, vl_feature_match **matches, uint8_t **inliers);

/* For each slice of `a`, the slice of `b` among candidates [first[z], last[z]] with most RANSAC inliers
 * (ties: the nearer to centre[z], then the lower index); pairs gets a->nz entries. Progress "register". */
vl_status vl_register_slices(const vl_sift_features *a, const vl_sift_features *b, const int64_t *first,
                             const int64_t *last, const int64_t *centre, double ratio,
                             const vl_ransac_options *ransac, const vl_device *device, const vl_progress *progress,
                             vl_slice_pair *pairs);

#ifdef __cplusplus
}
#endif
#endif
