/* Internal: the CUDA labeller behind vl_label_volume.
 * Implemented in cuda/ (built when a CUDA toolkit is found) and by cuda/no_cuda.c otherwise. */
#ifndef VL_LABEL_GPU_H
#define VL_LABEL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/label.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device bytes the GPU labeller plans with per slice of nx*ny voxels: the u8 mask, the u32 labels and
 * the union-find's scratch (1/16 + 1/16 + 1/32 byte per voxel, rounded up), without the O(N) sizes. */
static inline uint64_t vl_gpu_label_bytes_per_slice(int64_t nx, int64_t ny)
{
    return (uint64_t)nx * (uint64_t)ny * 21 / 4 + 1;
}

/* Same contract and bit-identical results as vl_label_volume_cpu. A volume larger than
 * options->device.gpu_memory (or than the device's free memory) is labelled in z-slabs (src/label/label_slabs.c). */
vl_status vl_label_volume_gpu(const vl_volume *mask, vl_volume *labels,
                              const vl_label_options *options, vl_label_result *result);

/* The CUDA half of vl_label_multilabel (cuda/label/ccl_multilabel_gpu.cu): same contract and bit-identical
 * results as vl_label_multilabel_cpu, z-slabs included. */
vl_status vl_label_multilabel_gpu(const vl_volume *classes, vl_volume *labels, const vl_label_options *options,
                                  vl_label_result *result);

#ifdef __cplusplus
}
#endif
#endif
