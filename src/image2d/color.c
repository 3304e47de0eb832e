/* The colour stage: modes, ranges, and the dispatch of vl_rgb_to_hsv / vl_color_threshold between the
 * CPU reference (color_cpu.c) and the GPU half (cuda/image2d/color_gpu.cu) under the device policy. */
#include <string.h>

#include "core/device.h"
#include "voxlabel/error.h"
#include "image2d/color_internal.h"

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

void vl_rgb_to_hsv_pixel(vl_color_mode mode, uint8_t r, uint8_t g, uint8_t b, uint8_t hsv[3])
{
    vl_hsv_convert(vl_hsv_tables_get(), mode, r, g, b, hsv);
}

int vl_color_range_keeps(const vl_color_range *range, const uint8_t hsv[3])
{
    return vl_hsv_in_range(range, hsv);
}

typedef struct color_call {
    const uint8_t *rgb;
    uint8_t *out;
    int64_t pixels;
    vl_color_mode mode;
    const vl_color_range *range; /* NULL: convert to HSV; otherwise threshold */
    int gpu_index;
} color_call;

static vl_status color_gpu(void *context)
{
    const color_call *c = context;
    return c->range ? vl_color_threshold_gpu(c->rgb, c->out, c->pixels, c->range, c->gpu_index)
                    : vl_rgb_to_hsv_gpu(c->rgb, c->out, c->pixels, c->mode, c->gpu_index);
}

static vl_status color_cpu(void *context)
{
    const color_call *c = context;
    if (c->range)
        vl_color_threshold_cpu(c->rgb, c->out, c->pixels, c->range);
    else
        vl_rgb_to_hsv_cpu(c->rgb, c->out, c->pixels, c->mode);
    return VL_OK;
}

static vl_status run_color(color_call *call, const vl_device *device)
{
    call->gpu_index = device ? device->gpu_index : 0;
    return vl_device_run(device, color_gpu, color_cpu, call, NULL);
}

vl_status vl_rgb_to_hsv(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode, const vl_device *device)
{
    if ((unsigned)mode > VL_COLOR_OPENCV_FULL || pixels < 0)
        return vl_fail(VL_ERR_ARGUMENT, "colour: invalid mode or pixel count");
    color_call call = {rgb, hsv, pixels, mode, NULL, 0};
    return run_color(&call, device);
}

vl_status vl_color_threshold(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range,
                             const vl_device *device)
{
    vl_status status = vl_color_range_validate(range);
    if (status != VL_OK)
        return status;
    if (pixels < 0)
        return vl_fail(VL_ERR_ARGUMENT, "colour: negative pixel count");
    color_call call = {rgb, mask, pixels, range->mode, range, 0};
    return run_color(&call, device);
}
