/* Internal: structuring elements as offset lists, the CPU engine, and the CUDA engine behind
 * vl_morphology_apply (cuda/image2d/morphology_gpu.cu; cuda/no_cuda.c stands in without CUDA). */
#ifndef VL_MORPHOLOGY_GPU_H
#define VL_MORPHOLOGY_GPU_H

#include <stdint.h>

#include "voxlabel/morphology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest radius per dimensionality: keeps an element's offsets within the GPU's constant memory. */
#define VL_MORPH_MAX_RADIUS_2D 32
#define VL_MORPH_MAX_RADIUS_3D 10
#define VL_MORPH_MAX_OFFSETS 9261 /* (2*10+1)^3 */

/* One structuring element: its offsets and how far it reaches along each axis. */
typedef struct vl_morph_element {
    int count;
    int reach[3];
    int8_t dx[VL_MORPH_MAX_OFFSETS], dy[VL_MORPH_MAX_OFFSETS], dz[VL_MORPH_MAX_OFFSETS];
} vl_morph_element;

/* One elementary pass: erosion or dilation by one element. An operation is one or two passes. */
typedef struct vl_morph_pass {
    int dilate;
    vl_morph_element element;
} vl_morph_pass;

/* Builds the passes of (op, se, radius, planar); returns their number (1 or 2) or 0 with vl_fail set. */
int vl_morph_plan(vl_morphology_op op, vl_structuring_element se, int radius, int planar, vl_morph_pass passes[2]);

/* CPU engine: applies the passes in order; `data` is nx*ny*nz 0/1 bytes, planar elements have reach[2] = 0. */
vl_status vl_morphology_cpu(uint8_t *data, int64_t nx, int64_t ny, int64_t nz, const vl_morph_pass *passes,
                            int pass_count);

/* GPU engine on host memory (uploads, runs, downloads) and on device memory (`scratch_device` holds as
 * many bytes as the mask; the result ends in `mask_device`). VL_ERR_DEVICE when no GPU is usable. */
vl_status vl_morphology_gpu(uint8_t *data, int64_t nx, int64_t ny, int64_t nz, const vl_morph_pass *passes,
                            int pass_count, int gpu_index);
vl_status vl_morphology_device(uint8_t *mask_device, uint8_t *scratch_device, int64_t nx, int64_t ny, int64_t nz,
                               const vl_morph_pass *passes, int pass_count);

#ifdef __cplusplus
}
#endif
#endif
