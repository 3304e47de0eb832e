/* Internal: one prediction request, as the CPU and GPU halves of vl_forest_predict receive it. */
#ifndef VL_FOREST_PREDICT_H
#define VL_FOREST_PREDICT_H
#include "voxlabel/forest.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_forest_prediction {
    const vl_forest *forest;
    const vl_volume *image;
    const vl_forest_options *options;
    float **probabilities; /* class_count arrays of the image's voxels, or NULL */
    uint8_t *class_map;    /* classes 1..C, or NULL */
} vl_forest_prediction;

/* Tile edges and counts for `tile` (z edge 1 for 2D banks). */
void vl_forest_tiling(const vl_volume *image, const vl_filter_bank *bank, int tile, int64_t edge[3],
                      int64_t count[3]);

/* The argmax of `classes` probabilities, ties to the lower class, as class number 1..C. */
static inline
#ifdef __CUDACC__
    __host__ __device__
#endif
    uint8_t vl_forest_argmax(const float *probabilities, int classes)
{
    int best = 0;
    for (int c = 1; c < classes; c++)
        if (probabilities[c] > probabilities[best])
            best = c;
    return (uint8_t)(best + 1);
}

vl_status vl_forest_predict_cpu(vl_forest_prediction *prediction);
vl_status vl_forest_predict_gpu(vl_forest_prediction *prediction);

#ifdef __cplusplus
}
#endif
#endif
