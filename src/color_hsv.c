/* The colour stage on the CPU (the reference) and its dispatch to the GPU. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "color_gpu.h"
#include "status.h"

static const char *const mode_names[] = {"thesis", "opencv", "opencv-full"};

const char *vl_color_mode_name(vl_color_mode mode)
{
    return (unsigned)mode < 3 ? mode_names[mode] : "unknown";
}

vl_status vl_color_mode_parse(const char *text, vl_color_mode *mode)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(text, mode_names[i]) == 0) {
            *mode = (vl_color_mode)i;
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT, "--mode: '%s' is not one of thesis, opencv, opencv-full", text);
}

int vl_color_hue_steps(vl_color_mode mode)
{
    return mode == VL_COLOR_OPENCV ? 180 : 256;
}

void vl_color_range_default(vl_color_range *range, vl_color_mode mode)
{
    memset(range, 0, sizeof *range);
    range->mode = mode;
    range->s_min = 30;
    range->v_min = 30;
    range->s_max = 255;
    range->v_max = 255;
    vl_color_range_set_hue(range, 0, 20);
}

vl_status vl_color_range_set_hue(vl_color_range *range, int hue, int hue_tol)
{
    int steps = vl_color_hue_steps(range->mode);
    if (hue < 0 || hue >= steps)
        return vl_fail(VL_ERR_ARGUMENT, "--hue: %d is outside 0..%d for mode %s", hue, steps - 1,
                       vl_color_mode_name(range->mode));
    if (hue_tol < 0 || hue_tol > 255)
        return vl_fail(VL_ERR_ARGUMENT, "--hue-tol: %d is outside 0..255", hue_tol);
    range->hue = hue;
    range->hue_tol = hue_tol;
    if (2 * hue_tol + 1 >= steps) {
        range->hue_lo = 0;
        range->hue_hi = 255;
    } else {
        range->hue_lo = ((hue - hue_tol) % steps + steps) % steps;
        range->hue_hi = (hue + hue_tol) % steps;
    }
    return VL_OK;
}

vl_status vl_color_range_validate(const vl_color_range *range)
{
    if ((unsigned)range->mode > VL_COLOR_OPENCV_FULL)
        return vl_fail(VL_ERR_ARGUMENT, "colour: unknown mode %d", (int)range->mode);
    const int values[] = {range->hue, range->hue_tol, range->hue_lo, range->hue_hi,
                          range->s_min, range->s_max, range->v_min, range->v_max};
    const char *names[] = {"hue", "hue tolerance", "hue low bound", "hue high bound",
                           "S minimum", "S maximum", "V minimum", "V maximum"};
    for (int i = 0; i < 8; i++)
        if (values[i] < 0 || values[i] > 255)
            return vl_fail(VL_ERR_ARGUMENT, "colour: %s %d is outside 0..255", names[i], values[i]);
    return VL_OK;
}

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

void vl_rgb_to_hsv_pixel(vl_color_mode mode, uint8_t r, uint8_t g, uint8_t b, uint8_t hsv[3])
{
    vl_hsv_convert(vl_hsv_tables_get(), mode, r, g, b, hsv);
}

int vl_color_range_keeps(const vl_color_range *range, const uint8_t hsv[3])
{
    return vl_hsv_in_range(range, hsv);
}

static int use_gpu_first(vl_device_kind device)
{
    return device == VL_DEVICE_GPU || device == VL_DEVICE_AUTO;
}

static int may_fall_back(vl_device_kind device, vl_status status)
{
    return device == VL_DEVICE_AUTO && (status == VL_ERR_DEVICE || status == VL_ERR_MEMORY);
}

vl_status vl_rgb_to_hsv(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode, vl_device_kind device)
{
    if ((unsigned)mode > VL_COLOR_OPENCV_FULL || pixels < 0)
        return vl_fail(VL_ERR_ARGUMENT, "colour: invalid mode or pixel count");
    if (use_gpu_first(device)) {
        vl_status status = vl_rgb_to_hsv_gpu(rgb, hsv, pixels, mode);
        if (!may_fall_back(device, status))
            return status;
    }
    const vl_hsv_tables *tables = vl_hsv_tables_get();
    for (int64_t i = 0; i < pixels; i++)
        vl_hsv_convert(tables, mode, rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], hsv + 3 * i);
    return VL_OK;
}

vl_status vl_color_threshold(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range,
                             vl_device_kind device)
{
    vl_status status = vl_color_range_validate(range);
    if (status != VL_OK)
        return status;
    if (pixels < 0)
        return vl_fail(VL_ERR_ARGUMENT, "colour: negative pixel count");
    if (use_gpu_first(device)) {
        status = vl_color_threshold_gpu(rgb, mask, pixels, range);
        if (!may_fall_back(device, status))
            return status;
    }
    const vl_hsv_tables *tables = vl_hsv_tables_get();
    for (int64_t i = 0; i < pixels; i++) {
        uint8_t hsv[3];
        vl_hsv_convert(tables, range->mode, rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], hsv);
        mask[i] = (uint8_t)vl_hsv_in_range(range, hsv);
    }
    return VL_OK;
}
