/* Stand-in for the CUDA colour stage in builds without a CUDA toolkit. */
#include "color_gpu.h"
#include "status.h"

static vl_status no_cuda(void)
{
    return vl_fail(VL_ERR_DEVICE, "gpu: this voxlabel was built without CUDA (rebuild with the CUDA toolkit on PATH)");
}

vl_status vl_rgb_to_hsv_gpu(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode)
{
    (void)rgb, (void)hsv, (void)pixels, (void)mode;
    return no_cuda();
}

vl_status vl_color_threshold_gpu(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range)
{
    (void)rgb, (void)mask, (void)pixels, (void)range;
    return no_cuda();
}

vl_status vl_color_threshold_device(const uint8_t *rgb_device, uint8_t *mask_device, int64_t pixels,
                                    const vl_color_range *range)
{
    (void)rgb_device, (void)mask_device, (void)pixels, (void)range;
    return no_cuda();
}
