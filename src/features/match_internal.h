/* Internal: the two halves of descriptor matching behind vl_match_descriptors (match.c dispatches): the CPU
 * reference (match_cpu.c) and the GPU half (cuda/features/match_gpu.cu; cuda/no_cuda.c without CUDA).
 *
 * Distances are exact: descriptors hold whole numbers 0..255, so a squared L2 distance is an integer below
 * 128 * 255^2 < 2^24, summed in int32 on both halves. For every query both halves return the nearest and
 * second-nearest squared distance and the nearest train index (ties: the lower index). */
#ifndef VL_MATCH_INTERNAL_H
#define VL_MATCH_INTERNAL_H

#include <stdint.h>

#include "voxlabel/features.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_match_best {
    int32_t train;            /* -1 when there is no train descriptor */
    int32_t best, second;     /* squared distances; second = INT32_MAX with a single train descriptor */
} vl_match_best;

void vl_match_best_cpu(const float *query, int64_t query_count, const float *train, int64_t train_count,
                       int threads, vl_match_best *out);
vl_status vl_match_best_gpu(const float *query, int64_t query_count, const float *train, int64_t train_count,
                            vl_match_best *out, int gpu_index);

#ifdef __cplusplus
}
#endif
#endif
