/* voxlabel: a random-forest pixel classifier trained from scribbles (ilastik's workflow, Pianu et al.'s GPU
 * training), CPU and GPU, with a versioned model file (.vlrf, docs/forest.md).
 *
 * Training: every scribbled voxel (label 1..C; 0 = unlabelled) is a sample with the filter bank's channels
 * (voxlabel/filters.h) as features. Each feature is cut into at most 1024 bins near its sample quantiles
 * (midpoints between neighbouring distinct values); trees grow breadth-first: per node sqrt(F) candidate
 * features, class histograms per bin, the split of least weighted Gini impurity (compared exactly in integer
 * arithmetic, ties to the earlier candidate and the lower bin), bootstrap weights per tree. Every random draw
 * is a hash of (seed, tree, node, draw), so the forest is a function of the seed and the samples only: the
 * CPU and the GPU grow the same forest.
 *
 * Prediction: a voxel goes left when feature <= threshold; the class probabilities are the mean of the reached
 * leaves' class fractions over the trees (float32, summed in tree order); the class map is the argmax, ties to
 * the lower class. Prediction runs tile by tile (features are never held for the whole volume) and a voxel's
 * result does not depend on the tiling. */
#ifndef VOXLABEL_FOREST_H
#define VOXLABEL_FOREST_H
#include <stdint.h>
#include "voxlabel/device.h"
#include "voxlabel/error.h"
#include "voxlabel/filters.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"
#ifdef __cplusplus
extern "C" {
#endif

/* 2: features computed in float32 with fused multiply-adds (docs/forest.md); version 1 models were trained on
 * the float64 filter bank and are refused with a message to retrain. */
#define VL_FOREST_FORMAT_VERSION 2
#define VL_FOREST_MAX_CLASSES 255
#define VL_FOREST_MAX_DEPTH 64

/* One node: an inner node sends `feature <= threshold` to `left`, the rest to `right` (node indices of the
 * same tree); a leaf has feature -1 and its class fractions at leaf_values[left * classes]. */
typedef struct vl_forest_node {
    int32_t feature;
    float threshold;
    int32_t left, right;
} vl_forest_node;

typedef struct vl_forest {
    vl_filter_bank bank;
    int feature_count;          /* vl_filter_bank_channels(&bank) */
    int class_count;            /* C: classes 1..C of the scribbles */
    int tree_count;
    int64_t *tree_node_start;   /* tree_count + 1 offsets into nodes */
    vl_forest_node *nodes;
    int64_t *tree_leaf_start;   /* tree_count + 1 offsets (in leaves) into leaf_values */
    float *leaf_values;         /* class fractions, class_count per leaf */
    /* training record */
    double training_spacing[3];
    int64_t training_samples;
    uint64_t seed;
    double oob_accuracy;        /* -1 when unknown (no out-of-bag sample, or an imported forest) */
    float *importances;         /* feature_count mean decrease of impurity, summing to 1; NULL when unknown */
} vl_forest;

typedef struct vl_forest_options {
    int trees;                  /* default 100 */
    int max_depth;              /* default 0: until pure or min_samples_leaf (capped at VL_FOREST_MAX_DEPTH) */
    int min_samples_leaf;       /* default 1 (bootstrap-weighted samples) */
    int max_features;           /* candidates per node; 0 (default): floor(sqrt(F)) */
    int bins;                   /* 2..1024, default 1024 (exact thresholds up to 1024 distinct values) */
    int bootstrap;              /* default 1 */
    uint64_t seed;              /* default 1 */
    int64_t max_samples;        /* scribbled voxels beyond this are thinned deterministically; default 2,000,000 */
    int threads;                /* CPU threads, 0 = all cores */
    vl_device device;           /* training and prediction backend */
    uint64_t gpu_chunk_samples; /* GPU training: samples resident at once; 0 = as many as device memory holds */
    int tile;                   /* CPU prediction tile edge in voxels (x and y; z too in 3D), default 128 */
    int gpu_pass_planes;        /* GPU prediction, which works in slabs of whole planes: z planes a sigma's filter
                                   passes run on together (at least 4 of its z radii); 0 = the whole slab. The
                                   results are the same bits whatever the value; default 0 */
    vl_progress progress;
} vl_forest_options;

void vl_forest_options_default(vl_forest_options *options);
void vl_forest_free(vl_forest *forest);

/* Samples already featurised: features[i * feature_count + f], classes[i] in 1..class_count. The forest takes
 * `bank` as its feature definition. `outcome` may be NULL. */
vl_status vl_forest_train_samples(const float *features, const uint8_t *classes, int64_t samples,
                                  int feature_count, int class_count, const vl_filter_bank *bank,
                                  const vl_forest_options *options, vl_forest *forest, vl_device_outcome *outcome);

/* The scribble map's geometry must equal the image's (sizes, and spacing/origin within 1e-3 mm); classes are
 * 1..max label and each of them needs a scribble. */
vl_status vl_forest_collect_samples(const vl_volume *image, const vl_volume *scribbles, const vl_filter_bank *bank,
                                    const vl_forest_options *options, float **features, uint8_t **classes,
                                    int64_t *samples, int *class_count);

/* Image + scribbles -> forest. */
vl_status vl_forest_train(const vl_volume *image, const vl_volume *scribbles, const vl_filter_bank *bank,
                          const vl_forest_options *options, vl_forest *forest, vl_device_outcome *outcome);

/* Per-class probabilities (class_count float32 volumes, may be NULL) and the class map (U8 volume of classes
 * 1..C, may be NULL) of every voxel of `image`. `outcome` may be NULL. */
vl_status vl_forest_predict(const vl_forest *forest, const vl_volume *image, const vl_forest_options *options,
                            vl_volume *probabilities, vl_volume *class_map, vl_device_outcome *outcome);

/* Probabilities of featurised samples (samples x class_count), on the CPU. */
vl_status vl_forest_predict_samples(const vl_forest *forest, const float *features, int64_t samples,
                                    float *probabilities);

/* The .vlrf file (docs/forest.md), written atomically; an existing file is replaced only with `force`. */
vl_status vl_forest_save(const vl_forest *forest, const char *path, int force);
vl_status vl_forest_load(const char *path, vl_forest *forest);

#ifdef __cplusplus
}
#endif
#endif
