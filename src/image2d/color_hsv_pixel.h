/* Internal: the per-pixel colour arithmetic, compiled unchanged into the CPU reference (src/image2d/color_cpu.c)
 * and the CUDA kernels (cuda/image2d/color_gpu.cu), so that both backends are bit-identical by construction. The
 * independent oracles live in tests/image2d_hsv_exhaustive.c. */
#ifndef VL_COLOR_HSV_PIXEL_H
#define VL_COLOR_HSV_PIXEL_H

#include <stdint.h>

#include "voxlabel/color.h"

#ifdef __CUDACC__
#define VL_HOSTDEV __host__ __device__
#else
#define VL_HOSTDEV
#endif

/* OpenCV's fixed-point reciprocal tables (shift 12): sdiv[i] = round(255*2^12/i), hdiv[i] =
 * round(hr*2^12/(6i)) with round-half-even, entry 0 = 0. Built once by vl_hsv_tables_build. */
#define VL_HSV_SHIFT 12
typedef struct vl_hsv_tables {
    int32_t sdiv[256];
    int32_t hdiv180[256];
    int32_t hdiv256[256];
} vl_hsv_tables;

#ifdef __cplusplus
extern "C" {
#endif
void vl_hsv_tables_build(vl_hsv_tables *tables);
const vl_hsv_tables *vl_hsv_tables_get(void);
#ifdef __cplusplus
}
#endif

/* The thesis kernel: every intermediate in int, results stored in unsigned char (so H wraps). */
VL_HOSTDEV static inline void vl_hsv_thesis(int r, int g, int b, uint8_t *h_out, uint8_t *s_out, uint8_t *v_out)
{
    int max = r > g ? r : g;
    max = max > b ? max : b;
    int min = r < g ? r : g;
    min = min < b ? min : b;
    uint8_t h = 0, s = 0, v = (uint8_t)max;
    if (v != 0) {
        s = (uint8_t)(255 * (max - min) / v);
        if (s != 0) {
            int delta = max - min;
            int hue;
            if (max == r)
                hue = 0 + 43 * (g - b) / delta;
            else if (max == g)
                hue = 85 + 43 * (b - r) / delta;
            else
                hue = 171 + 43 * (r - g) / delta;
            h = (uint8_t)hue;
        }
    }
    *h_out = h;
    *s_out = s;
    *v_out = v;
}

/* OpenCV RGB2HSV_b: ties go to R, then G; negative H gets `hue_steps` added; H saturates to 0..255.
 * Right shifts of negative ints are arithmetic here, as in OpenCV (GCC and NVCC guarantee it). */
VL_HOSTDEV static inline void vl_hsv_opencv(const int32_t *sdiv, const int32_t *hdiv, int hue_steps, int r, int g,
                                            int b, uint8_t *h_out, uint8_t *s_out, uint8_t *v_out)
{
    int v = b, vmin = b;
    v = v > g ? v : g;
    v = v > r ? v : r;
    vmin = vmin < g ? vmin : g;
    vmin = vmin < r ? vmin : r;
    int diff = v - vmin;
    int vr = v == r ? -1 : 0;
    int vg = v == g ? -1 : 0;
    int s = (diff * sdiv[v] + (1 << (VL_HSV_SHIFT - 1))) >> VL_HSV_SHIFT;
    int h = (vr & (g - b)) + (~vr & ((vg & (b - r + 2 * diff)) + (~vg & (r - g + 4 * diff))));
    h = (h * hdiv[diff] + (1 << (VL_HSV_SHIFT - 1))) >> VL_HSV_SHIFT;
    h += h < 0 ? hue_steps : 0;
    *h_out = (uint8_t)(h < 0 ? 0 : h > 255 ? 255 : h);
    *s_out = (uint8_t)s;
    *v_out = (uint8_t)v;
}

VL_HOSTDEV static inline void vl_hsv_convert(const vl_hsv_tables *tables, vl_color_mode mode, int r, int g, int b,
                                             uint8_t hsv[3])
{
    if (mode == VL_COLOR_THESIS)
        vl_hsv_thesis(r, g, b, &hsv[0], &hsv[1], &hsv[2]);
    else if (mode == VL_COLOR_OPENCV)
        vl_hsv_opencv(tables->sdiv, tables->hdiv180, 180, r, g, b, &hsv[0], &hsv[1], &hsv[2]);
    else
        vl_hsv_opencv(tables->sdiv, tables->hdiv256, 256, r, g, b, &hsv[0], &hsv[1], &hsv[2]);
}

VL_HOSTDEV static inline int vl_hsv_in_range(const vl_color_range *range, const uint8_t hsv[3])
{
    int hue_ok;
    if (range->mode == VL_COLOR_THESIS) {
        uint8_t distance = (uint8_t)(range->hue - hsv[0]);
        hue_ok = distance <= range->hue_tol || distance >= 255 - range->hue_tol;
    } else if (range->hue_lo <= range->hue_hi) {
        hue_ok = hsv[0] >= range->hue_lo && hsv[0] <= range->hue_hi;
    } else {
        hue_ok = hsv[0] >= range->hue_lo || hsv[0] <= range->hue_hi;
    }
    return hue_ok && hsv[1] >= range->s_min && hsv[1] <= range->s_max && hsv[2] >= range->v_min &&
           hsv[2] <= range->v_max;
}

#endif
