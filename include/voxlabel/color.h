/* voxlabel: the colour stage, 8-bit RGB -> HSV and a hue/saturation/value range threshold.
 *
 * Three conversions, each bit-exact on every one of the 2^24 RGB triples, on the CPU and on the GPU:
 *   VL_COLOR_THESIS       the thesis kernel (Vicenzotti 2010, appendix): V = max, S = 255*(max-min)/V and
 *                         H = {0, 85, 171} + 43*diff/(max-min) in int with truncating division, stored in
 *                         8 bits (negative H wraps mod 256). H spans 0..255 (43 units per 60 degrees).
 *   VL_COLOR_OPENCV       OpenCV's COLOR_RGB2HSV for 8-bit images (fixed point, shift 12): H 0..179.
 *   VL_COLOR_OPENCV_FULL  OpenCV's COLOR_RGB2HSV_FULL: H 0..255 (an H of 256 saturates to 255).
 *
 * Keep rule:
 *   THESIS  (uint8)(hue - H) <= hue_tol || (uint8)(hue - H) >= 255 - hue_tol, and S >= s_min and V >= v_min
 *           (the kernel's rule: the window is [hue - tol, hue + tol + 1] mod 256; the thesis used tol 20,
 *           s_min = v_min = 30). s_max and v_max apply too (255 leaves the kernel's rule unchanged).
 *   OPENCV* hue_lo <= H <= hue_hi, inclusive like cv::inRange, wrapping (H >= hue_lo || H <= hue_hi) when
 *           hue_lo > hue_hi; s_min <= S <= s_max and v_min <= V <= v_max. */
#ifndef VOXLABEL_COLOR_H
#define VOXLABEL_COLOR_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/image2d.h"
#include "voxlabel/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_color_mode {
    VL_COLOR_THESIS = 0,
    VL_COLOR_OPENCV,
    VL_COLOR_OPENCV_FULL
} vl_color_mode;

typedef struct vl_color_range {
    vl_color_mode mode;
    int hue, hue_tol;     /* THESIS: centre and tolerance of the kernel's rule */
    int hue_lo, hue_hi;   /* OPENCV*: inclusive hue bounds, wrapping when hue_lo > hue_hi */
    int s_min, s_max;     /* inclusive, 0..255 */
    int v_min, v_max;     /* inclusive, 0..255 */
} vl_color_range;

const char *vl_color_mode_name(vl_color_mode mode);   /* "thesis", "opencv", "opencv-full" */
vl_status vl_color_mode_parse(const char *text, vl_color_mode *mode);
/* Number of hue steps of a mode: 256 for THESIS and OPENCV_FULL, 180 for OPENCV. */
int vl_color_hue_steps(vl_color_mode mode);

/* The thesis defaults for `mode`: hue 0, tolerance 20, S >= 30, V >= 30, upper bounds 255. */
void vl_color_range_default(vl_color_range *range, vl_color_mode mode);
/* Sets the hue centre and tolerance; for the OpenCV modes also hue_lo/hi = hue -/+ tol modulo the hue
 * steps (every hue when 2*tol + 1 covers them all). */
vl_status vl_color_range_set_hue(vl_color_range *range, int hue, int hue_tol);
vl_status vl_color_range_validate(const vl_color_range *range);

/* One pixel through the CPU reference conversion. */
void vl_rgb_to_hsv_pixel(vl_color_mode mode, uint8_t r, uint8_t g, uint8_t b, uint8_t hsv[3]);
/* 1 when an HSV triple passes the range. */
int vl_color_range_keeps(const vl_color_range *range, const uint8_t hsv[3]);

/* Converts `pixels` interleaved RGB triples into interleaved HSV triples. */
vl_status vl_rgb_to_hsv(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode,
                        const vl_device *device);
/* Converts and thresholds in one pass: mask[i] = 1 when pixel i passes, else 0. */
vl_status vl_color_threshold(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range,
                             const vl_device *device);

#ifdef __cplusplus
}
#endif
#endif
