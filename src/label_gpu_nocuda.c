/* Stand-in for the CUDA labeller in builds without a CUDA toolkit. */
#include <stdio.h>

#include "label_gpu.h"
#include "status.h"

int vl_gpu_usable(int gpu_index, char *why, size_t why_size)
{
    (void)gpu_index;
    snprintf(why, why_size, "this voxlabel was built without CUDA");
    return 0;
}

vl_status vl_label_volume_gpu(const vl_volume *mask, vl_volume *labels,
                              const vl_label_options *options, vl_label_result *result)
{
    (void)mask;
    (void)labels;
    (void)options;
    (void)result;
    return vl_fail(VL_ERR_DEVICE, "gpu: this voxlabel was built without CUDA (rebuild with the CUDA toolkit on PATH)");
}
