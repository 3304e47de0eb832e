/* Internal: the two halves of vl_background_mog2 (mog2.c dispatches): the CPU reference (mog2_cpu.c) and
 * the GPU half (cuda/background/mog2_gpu.cu; cuda/no_cuda.c without CUDA). Both take the sequence as host
 * memory, frames along z, and write 0/1 into `foreground` (same size). */
#ifndef VL_BACKGROUND_MOG2_INTERNAL_H
#define VL_BACKGROUND_MOG2_INTERNAL_H

#include "background/mog2_pixel.h"
#include "voxlabel/background.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-frame constants of frame `number` (1 for the first frame). */
void vl_mog2_frame_constants(const vl_mog2_params *params, int64_t number, vl_mog2_frame *frame);

vl_status vl_background_mog2_cpu(const uint8_t *frames, uint8_t *foreground, int64_t pixels, int64_t count,
                                 const vl_mog2_params *params, const vl_progress *progress);
vl_status vl_background_mog2_gpu(const uint8_t *frames, uint8_t *foreground, int64_t pixels, int64_t count,
                                 const vl_mog2_params *params, const vl_progress *progress);

#ifdef __cplusplus
}
#endif
#endif
