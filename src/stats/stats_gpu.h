/* Internal: the CUDA statistics pass behind vl_component_stats_compute (cuda/stats/stats_gpu.cu; without CUDA,
 * cuda/no_cuda.c). It fills the same sums as the CPU pass, and the shared finaliser turns them
 * into statistics, so integer results are bit-identical to the CPU's by construction of the sums. */
#ifndef VL_STATS_GPU_H
#define VL_STATS_GPU_H

#include "stats/stats_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_stats_gpu_timing {
    float pass_ms;      /* the statistics pass over the device-resident volume (CUDA events) */
    float median_ms;    /* from the pass's end: range read-back, allocation, keys, sort, selection (0 without it) */
    float transfer_ms;  /* uploads and the download of the sums */
} vl_stats_gpu_timing;

/* Host volumes: uploads them to device options->device.gpu_index, runs vl_stats_sums_gpu_device, downloads.
 * `shape` is filled at the full level, `medians` (may be NULL) at the full level with intensity, and `euler`
 * (may be NULL) with the Euler numbers at options->connectivity (6 or 26) by vl_stats_euler_gpu_device. */
vl_status vl_stats_sums_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                            const vl_stats_options *options, vl_stats_sums *sums, vl_stats_shape_sums *shape,
                            double *medians, int64_t *euler, vl_stats_gpu_timing *timing);

/* Euler numbers of labels 1..count of device-resident u32 labels (cuda/stats/stats_euler_gpu.cu), into the
 * host array chi[count]; connectivity 6 or 26. */
vl_status vl_stats_euler_gpu_device(const uint32_t *labels, int64_t nx, int64_t ny, int64_t nz, uint32_t count,
                                    int connectivity, int64_t *chi);

/* Device-resident volumes (x fastest): u32 labels and an intensity array of `intensity_dtype` (NULL: none).
 * Results land in the host arrays as for vl_stats_sums_gpu. */
vl_status vl_stats_sums_gpu_device(const uint32_t *labels, const void *intensity, vl_dtype intensity_dtype, int64_t nx,
                                   int64_t ny, int64_t nz, uint32_t count, vl_stats_level level, vl_stats_sums *sums,
                                   vl_stats_shape_sums *shape, double *medians, vl_stats_gpu_timing *timing);

#ifdef __cplusplus
}
#endif
#endif
