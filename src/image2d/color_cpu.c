/* The colour stage's CPU reference: OpenCV's fixed-point RGB->HSV tables and the per-pixel loops. */
#include <math.h>
#include <pthread.h>

#include "image2d/color_internal.h"

void vl_hsv_tables_build(vl_hsv_tables *tables)
{
    tables->sdiv[0] = tables->hdiv180[0] = tables->hdiv256[0] = 0;
    /* nearbyint rounds half to even under the default rounding mode, as OpenCV's saturate_cast does. */
    for (int i = 1; i < 256; i++) {
        tables->sdiv[i] = (int32_t)nearbyint((double)(255 << VL_HSV_SHIFT) / i);
        tables->hdiv180[i] = (int32_t)nearbyint((double)(180 << VL_HSV_SHIFT) / (6.0 * i));
        tables->hdiv256[i] = (int32_t)nearbyint((double)(256 << VL_HSV_SHIFT) / (6.0 * i));
    }
}

static vl_hsv_tables shared_tables;
static pthread_once_t shared_tables_once = PTHREAD_ONCE_INIT;

static void build_shared_tables(void)
{
    vl_hsv_tables_build(&shared_tables);
}

const vl_hsv_tables *vl_hsv_tables_get(void)
{
    pthread_once(&shared_tables_once, build_shared_tables);
    return &shared_tables;
}

void vl_rgb_to_hsv_cpu(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode)
{
    const vl_hsv_tables *tables = vl_hsv_tables_get();
    for (int64_t i = 0; i < pixels; i++)
        vl_hsv_convert(tables, mode, rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], hsv + 3 * i);
}

void vl_color_threshold_cpu(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range)
{
    const vl_hsv_tables *tables = vl_hsv_tables_get();
    for (int64_t i = 0; i < pixels; i++) {
        uint8_t hsv[3];
        vl_hsv_convert(tables, range->mode, rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], hsv);
        mask[i] = (uint8_t)vl_hsv_in_range(range, hsv);
    }
}
