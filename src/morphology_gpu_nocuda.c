/* Stand-in for the CUDA morphology in builds without a CUDA toolkit. */
#include "morphology_gpu.h"
#include "status.h"

vl_status vl_morphology_gpu(uint8_t *data, int64_t nx, int64_t ny, int64_t nz, const vl_morph_pass *passes,
                            int pass_count)
{
    (void)data, (void)nx, (void)ny, (void)nz, (void)passes, (void)pass_count;
    return vl_fail(VL_ERR_DEVICE, "gpu: this voxlabel was built without CUDA (rebuild with the CUDA toolkit on PATH)");
}

vl_status vl_morphology_device(uint8_t *mask_device, uint8_t *scratch_device, int64_t nx, int64_t ny, int64_t nz,
                               const vl_morph_pass *passes, int pass_count)
{
    (void)mask_device, (void)scratch_device, (void)nx, (void)ny, (void)nz, (void)passes, (void)pass_count;
    return vl_fail(VL_ERR_DEVICE, "gpu: this voxlabel was built without CUDA (rebuild with the CUDA toolkit on PATH)");
}
