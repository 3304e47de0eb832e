/* Stand-in for the CUDA statistics pass in builds without a CUDA toolkit. */
#include "stats_gpu.h"
#include "status.h"

vl_status vl_stats_sums_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                            const vl_stats_options *options, vl_stats_sums *sums, vl_stats_shape_sums *shape,
                            double *medians, vl_stats_gpu_timing *timing)
{
    (void)labels, (void)intensity, (void)count, (void)options, (void)sums, (void)shape, (void)medians, (void)timing;
    return vl_fail(VL_ERR_DEVICE, "gpu: this voxlabel was built without CUDA (rebuild with the CUDA toolkit on PATH)");
}

vl_status vl_stats_sums_gpu_device(const uint32_t *labels, const void *intensity, vl_dtype intensity_dtype, int64_t nx,
                                   int64_t ny, int64_t nz, uint32_t count, vl_stats_level level, vl_stats_sums *sums,
                                   vl_stats_shape_sums *shape, double *medians, vl_stats_gpu_timing *timing)
{
    (void)labels, (void)intensity, (void)intensity_dtype, (void)nx, (void)ny, (void)nz, (void)count, (void)level;
    (void)sums, (void)shape, (void)medians, (void)timing;
    return vl_fail(VL_ERR_DEVICE, "gpu: this voxlabel was built without CUDA (rebuild with the CUDA toolkit on PATH)");
}
