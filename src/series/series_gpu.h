/* Internal: the halves of vl_series_label (include/voxlabel/series.h): the CPU reference (series_cpu.c) and the
 * device-resident GPU half (cuda/series/series_gpu.cu; without CUDA, cuda/no_cuda.c). */
#ifndef VL_SERIES_GPU_H
#define VL_SERIES_GPU_H

#include "voxlabel/series.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GPU half's buffers, kept between series (cuda/series/series_gpu.cu). */
typedef struct vl_series_gpu vl_series_gpu;

/* The whole series on device request->label->device.gpu_index: the CT uploaded once (straight from its memory
 * when `ct_pinned`, through the staging buffers otherwise), threshold, labels and
 * statistics' sums on the device, the labels downloaded (narrowed when asked). `*state` holds the buffers
 * (created on first use, grown when a series needs more). A series beyond the buffers' budget or the
 * labeller's single-call limits runs as the separate stages do on the GPU (labels in z-slabs). On failure
 * the outputs are left empty. */
vl_status vl_series_label_gpu(vl_series_gpu **state, const vl_volume *ct, int ct_pinned,
                              const vl_series_request *request, vl_volume *labels, vl_label_result *result,
                              vl_component_stats **stats, vl_series_timings *timings);
void vl_series_gpu_free(vl_series_gpu *state);

/* Page-locks host memory for device `gpu_index` (cudaHostRegister, portable), and undoes it. */
vl_status vl_series_gpu_pin(int gpu_index, void *data, size_t bytes);
void vl_series_gpu_unpin(void *data);

/* The CPU reference: vl_threshold, vl_label_volume_cpu, vl_component_stats_compute_cpu. Labels stay u32. */
vl_status vl_series_label_cpu(const vl_volume *ct, const vl_series_request *request, vl_volume *labels,
                              vl_label_result *result, vl_component_stats **stats, vl_series_timings *timings);

#ifdef __cplusplus
}
#endif
#endif
