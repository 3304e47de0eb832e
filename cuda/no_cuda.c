/* The GPU halves of every stage in a build without a CUDA toolkit: compiled instead of cuda/ ** / *.cu.
 * Each reports the device as unusable, so the device policy (src/core/device.c) runs the CPU half under
 * `auto` and fails with VL_ERR_DEVICE under `gpu`. */
#include <stdio.h>

#include "voxlabel/error.h"
#include "filters/filters_internal.h"
#include "image2d/color_internal.h"
#include "image2d/morphology_gpu.h"
#include "forest/forest_internal.h"
#include "forest/forest_predict.h"
#include "label/label_gpu.h"
#include "stats/stats_gpu.h"

#define NO_CUDA_REASON "this voxlabel was built without CUDA"

static vl_status no_cuda(void)
{
    return vl_fail(VL_ERR_DEVICE, "gpu: " NO_CUDA_REASON " (rebuild with the CUDA toolkit on PATH)");
}

int vl_device_gpu_usable(int gpu_index, char *why, size_t why_size)
{
    (void)gpu_index;
    snprintf(why, why_size, NO_CUDA_REASON);
    return 0;
}

vl_status vl_label_volume_gpu(const vl_volume *mask, vl_volume *labels, const vl_label_options *options,
                              vl_label_result *result)
{
    (void)mask, (void)labels, (void)options, (void)result;
    return no_cuda();
}

vl_status vl_stats_sums_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                            const vl_stats_options *options, vl_stats_sums *sums, vl_stats_shape_sums *shape,
                            double *medians, vl_stats_gpu_timing *timing)
{
    (void)labels, (void)intensity, (void)count, (void)options, (void)sums, (void)shape, (void)medians, (void)timing;
    return no_cuda();
}

vl_status vl_stats_sums_gpu_device(const uint32_t *labels, const void *intensity, vl_dtype intensity_dtype, int64_t nx,
                                   int64_t ny, int64_t nz, uint32_t count, vl_stats_level level, vl_stats_sums *sums,
                                   vl_stats_shape_sums *shape, double *medians, vl_stats_gpu_timing *timing)
{
    (void)labels, (void)intensity, (void)intensity_dtype, (void)nx, (void)ny, (void)nz, (void)count, (void)level;
    (void)sums, (void)shape, (void)medians, (void)timing;
    return no_cuda();
}

vl_status vl_morphology_gpu(uint8_t *data, int64_t nx, int64_t ny, int64_t nz, const vl_morph_pass *passes,
                            int pass_count, int gpu_index)
{
    (void)data, (void)nx, (void)ny, (void)nz, (void)passes, (void)pass_count, (void)gpu_index;
    return no_cuda();
}

vl_status vl_morphology_device(uint8_t *mask_device, uint8_t *scratch_device, int64_t nx, int64_t ny, int64_t nz,
                               const vl_morph_pass *passes, int pass_count)
{
    (void)mask_device, (void)scratch_device, (void)nx, (void)ny, (void)nz, (void)passes, (void)pass_count;
    return no_cuda();
}

vl_status vl_rgb_to_hsv_gpu(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode, int gpu_index)
{
    (void)rgb, (void)hsv, (void)pixels, (void)mode, (void)gpu_index;
    return no_cuda();
}

vl_status vl_color_threshold_gpu(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range,
                                 int gpu_index)
{
    (void)rgb, (void)mask, (void)pixels, (void)range, (void)gpu_index;
    return no_cuda();
}

vl_status vl_color_threshold_device(const uint8_t *rgb_device, uint8_t *mask_device, int64_t pixels,
                                    const vl_color_range *range)
{
    (void)rgb_device, (void)mask_device, (void)pixels, (void)range;
    return no_cuda();
}

vl_status vl_forest_train_gpu(const vl_forest_binned *binned, const vl_forest_plan *plan, int gpu_index,
                              uint64_t chunk_samples, const vl_progress *progress, vl_tree *trees)
{
    (void)binned, (void)plan, (void)gpu_index, (void)chunk_samples, (void)progress, (void)trees;
    return no_cuda();
}

vl_status vl_forest_predict_gpu(vl_forest_prediction *prediction)
{
    (void)prediction;
    return no_cuda();
}

vl_status vl_filters_compute_box_gpu(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box,
                                     float *channels)
{
    (void)image, (void)bank, (void)box, (void)channels;
    return no_cuda();
}
