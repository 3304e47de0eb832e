/* Internal: the two halves of the colour stage behind vl_rgb_to_hsv / vl_color_threshold (color.c
 * dispatches): the CPU reference (color_cpu.c) and the GPU half (cuda/image2d/color_gpu.cu; cuda/no_cuda.c
 * without CUDA). Host pointers in, host pointers out; the GPU half returns VL_ERR_DEVICE when it cannot run. */
#ifndef VL_COLOR_INTERNAL_H
#define VL_COLOR_INTERNAL_H

#include "image2d/color_hsv_pixel.h"

#ifdef __cplusplus
extern "C" {
#endif

void vl_rgb_to_hsv_cpu(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode);
void vl_color_threshold_cpu(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range);

vl_status vl_rgb_to_hsv_gpu(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode, int gpu_index);
vl_status vl_color_threshold_gpu(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range,
                                 int gpu_index);

/* Device-resident variants for pipelines that keep data on the GPU (bench, fused stages): all pointers
 * are device pointers, the call is asynchronous on the default stream. */
vl_status vl_color_threshold_device(const uint8_t *rgb_device, uint8_t *mask_device, int64_t pixels,
                                    const vl_color_range *range);

#ifdef __cplusplus
}
#endif
#endif
