/* The GPU halves of every stage in a build without a CUDA toolkit: compiled instead of cuda/ ** / *.cu.
 * Each reports the device as unusable, so the device policy (src/core/device.c) runs the CPU half under
 * `auto` and fails with VL_ERR_DEVICE under `gpu`. */
#include <stdio.h>

#include "voxlabel/error.h"
#include "filters/filters_internal.h"
#include "image2d/color_internal.h"
#include "graphcut/maxflow_internal.h"
#include "background/mog2_internal.h"
#include "image2d/morphology_gpu.h"
#include "features/match_internal.h"
#include "features/sift_internal.h"
#include "forest/forest_internal.h"
#include "forest/forest_predict.h"
#include "label/ccl_multilabel_gpu.h"
#include "label/label_gpu.h"
#include "series/series_gpu.h"
#include "stats/stats_gpu.h"
#include "voxlabel/label_device.h"

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

vl_status vl_series_label_gpu(vl_series_gpu **state, const vl_volume *ct, int ct_pinned,
                              const vl_series_request *request, vl_volume *labels, vl_label_result *result,
                              vl_component_stats **stats, vl_series_timings *timings)
{
    (void)state, (void)ct, (void)ct_pinned, (void)request, (void)labels, (void)result, (void)stats, (void)timings;
    return no_cuda();
}

void vl_series_gpu_free(vl_series_gpu *state)
{
    (void)state; /* never made without CUDA */
}

vl_status vl_series_gpu_pin(int gpu_index, void *data, size_t bytes)
{
    (void)gpu_index, (void)data, (void)bytes;
    return no_cuda();
}

void vl_series_gpu_unpin(void *data)
{
    (void)data; /* never pinned without CUDA */
}

vl_status vl_label_multilabel_gpu(const vl_volume *classes, vl_volume *labels, const vl_label_options *options,
                                  vl_label_result *result)
{
    (void)classes, (void)labels, (void)options, (void)result;
    return no_cuda();
}

uint64_t vl_gpu_multilabel_bytes(int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype)
{
    (void)nx, (void)ny, (void)nz, (void)dtype;
    return 0;
}

vl_status vl_stats_sums_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                            const vl_stats_options *options, vl_stats_sums *sums, vl_stats_shape_sums *shape,
                            double *medians, int64_t *euler, vl_stats_gpu_timing *timing)
{
    (void)labels, (void)intensity, (void)count, (void)options, (void)sums, (void)shape, (void)medians, (void)euler;
    (void)timing;
    return no_cuda();
}

vl_status vl_stats_euler_gpu_device(const uint32_t *labels, int64_t nx, int64_t ny, int64_t nz, uint32_t count,
                                    int connectivity, int64_t *chi)
{
    (void)labels, (void)nx, (void)ny, (void)nz, (void)count, (void)connectivity, (void)chi;
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

vl_status vl_maxflow_gpu(const vl_grid_graph *graph, uint8_t *segment, int64_t relabel_interval, int allow_persistent,
                         vl_maxflow_result *result)
{
    (void)graph, (void)segment, (void)relabel_interval, (void)allow_persistent, (void)result;
    return no_cuda();
}

vl_status vl_background_mog2_gpu(const uint8_t *frames, uint8_t *foreground, int64_t pixels, int64_t count,
                                 const vl_mog2_params *params, const vl_progress *progress)
{
    (void)frames, (void)foreground, (void)pixels, (void)count, (void)params, (void)progress;
    return no_cuda();
}

vl_status vl_sift_run_gpu(const vl_sift_plan *plan, const float *image, const vl_volume *volume,
                          const vl_sift_options *options, const vl_progress *progress, vl_sift_features *out,
                          int gpu_index, uint64_t gpu_memory)
{
    (void)plan, (void)image, (void)volume, (void)options, (void)progress, (void)out, (void)gpu_index,
        (void)gpu_memory;
    return no_cuda();
}

vl_status vl_sift_pyramid_gpu(const vl_sift_plan *plan, const float *image, float *gauss, float *dog, int gpu_index)
{
    (void)plan, (void)image, (void)gauss, (void)dog, (void)gpu_index;
    return no_cuda();
}

vl_status vl_match_best_gpu(const float *query, int64_t query_count, const float *train, int64_t train_count,
                            vl_match_best *out, int gpu_index)
{
    (void)query, (void)query_count, (void)train, (void)train_count, (void)out, (void)gpu_index;
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

vl_status vl_label_device_array(const uint8_t *mask, uint32_t *labels, int64_t nx, int64_t ny, int64_t nz,
                                int connectivity, vl_label_order order, int gpu_index, void *stream,
                                uint32_t *count)
{
    (void)mask, (void)labels, (void)nx, (void)ny, (void)nz, (void)connectivity, (void)order, (void)gpu_index,
        (void)stream;
    *count = 0;
    return no_cuda();
}

vl_status vl_filters_compute_box_gpu(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box,
                                     float *channels)
{
    (void)image, (void)bank, (void)box, (void)channels;
    return no_cuda();
}
