/* Internal: the CUDA multilabel labeller on device buffers (cuda/label/ccl_multilabel_gpu.cu), for
 * vl_label_multilabel_gpu, the GPU tests and bench/. Plain C so that C programs can call it. */
#ifndef VL_CCL_MULTILABEL_GPU_H
#define VL_CCL_MULTILABEL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/label.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_gpu_multilabel_run {
    uint32_t count;              /* N: labels are 1..N */
    unsigned long long *sizes;   /* device array of N voxel counts */
    uint32_t *classes;           /* device array of N classes */
    float union_ms;              /* union-find: the component forest is complete */
    float total_ms;              /* union-find + labels 1..N in the order + sizes + classes */
    size_t scratch_bytes;        /* device bytes used beyond the class map and the labels */
} vl_gpu_multilabel_run;

/* Device bytes the multilabel labeller plans with for an nx x ny x nz map: the class map, the labels, and
 * the scratch of the larger of the two node orders (per 2x2x2 block: class word, pieces word, mixed-list
 * entry, size and class; per voxel: parent; per 64-key segment of a line: root count, base and root word;
 * CUB's scan). */
uint64_t vl_gpu_multilabel_bytes(int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype);

/* Largest volume it takes at once: voxels below 2^32 - 1. */
int vl_gpu_multilabel_shape_ok(int64_t nx, int64_t ny, int64_t nz);

/* Labels the device class map (`dtype` u8, u16 or u32, nx*ny*nz values, x fastest; checked by
 * vl_class_map_check) into the device labels (nx*ny*nz u32), exactly like vl_label_multilabel_cpu. Runs on
 * `stream` (NULL = default) of the current device and returns when done; `timed` fills the times. */
vl_status vl_gpu_multilabel_device(const void *classes, vl_dtype dtype, uint32_t *labels, int64_t nx, int64_t ny,
                                   int64_t nz, int connectivity, vl_label_order order, void *stream, int timed,
                                   vl_gpu_multilabel_run *run);

void vl_gpu_multilabel_run_free(vl_gpu_multilabel_run *run);

#ifdef __cplusplus
}
#endif
#endif
