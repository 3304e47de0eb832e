/* Internal: the CUDA colour stage behind vl_rgb_to_hsv / vl_color_threshold (cuda/color.cu), with a
 * stand-in in src/color_gpu_nocuda.c for builds without CUDA. Host pointers in, host pointers out;
 * VL_ERR_DEVICE when no GPU is usable (AUTO then falls back to the CPU). */
#ifndef VL_COLOR_GPU_H
#define VL_COLOR_GPU_H

#include "color_hsv_pixel.h"

#ifdef __cplusplus
extern "C" {
#endif

vl_status vl_rgb_to_hsv_gpu(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode);
vl_status vl_color_threshold_gpu(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range);

/* Device-resident variants for pipelines that keep data on the GPU (bench, fused stages): all pointers
 * are device pointers, the call is asynchronous on the default stream. */
vl_status vl_color_threshold_device(const uint8_t *rgb_device, uint8_t *mask_device, int64_t pixels,
                                    const vl_color_range *range);

#ifdef __cplusplus
}
#endif
#endif
