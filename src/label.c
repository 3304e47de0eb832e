#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "label_gpu.h"
#include "status.h"
#include "voxlabel/label.h"

void vl_label_options_default(vl_label_options *options)
{
    memset(options, 0, sizeof *options);
    options->connectivity = 26;
    options->order = VL_ORDER_MATLAB;
    options->device = VL_DEVICE_AUTO;
}

const char *vl_label_order_name(vl_label_order order)
{
    switch (order) {
    case VL_ORDER_MATLAB: return "matlab";
    case VL_ORDER_MATLAB_XY: return "matlab-xy";
    case VL_ORDER_SIZE: return "size";
    }
    return "unknown";
}

vl_status vl_label_order_parse(const char *text, vl_label_order *order)
{
    static const vl_label_order all[] = {VL_ORDER_MATLAB, VL_ORDER_MATLAB_XY, VL_ORDER_SIZE};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(text, vl_label_order_name(all[i])) == 0) {
            *order = all[i];
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT, "--order: '%s' is not one of matlab, matlab-xy, size", text);
}

int vl_connectivity_is_valid(int connectivity)
{
    return connectivity == 4 || connectivity == 8 || connectivity == 6 || connectivity == 18 || connectivity == 26;
}

void vl_label_result_free(vl_label_result *result)
{
    if (!result)
        return;
    free(result->sizes);
    result->sizes = NULL;
    result->count = 0;
}

vl_status vl_label_volume(const vl_volume *mask, vl_volume *labels,
                          const vl_label_options *options, vl_label_result *result)
{
    char why[256] = "";
    switch (options->device) {
    case VL_DEVICE_CPU:
        return vl_label_volume_cpu(mask, labels, options, result);
    case VL_DEVICE_GPU:
        if (!vl_gpu_usable(options->gpu_index, why, sizeof why))
            return vl_fail(VL_ERR_DEVICE, "gpu:%d: %s", options->gpu_index, why);
        return vl_label_volume_gpu(mask, labels, options, result);
    case VL_DEVICE_AUTO: {
        int gpu_failed = 0;
        if (vl_gpu_usable(options->gpu_index, why, sizeof why)) {
            vl_status status = vl_label_volume_gpu(mask, labels, options, result);
            if (status != VL_ERR_DEVICE && status != VL_ERR_MEMORY)
                return status;
            snprintf(why, sizeof why, "%s", vl_last_error());
            gpu_failed = 1;
        }
        vl_status status = vl_label_volume_cpu(mask, labels, options, result);
        if (status == VL_OK) {
            snprintf(result->fallback_reason, sizeof result->fallback_reason, "%s", why);
            result->gpu_failed = gpu_failed;
        }
        return status;
    }
    }
    return vl_fail(VL_ERR_ARGUMENT, "--device: unknown device kind %d", (int)options->device);
}
