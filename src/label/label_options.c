/* The labeller's options, orders and result: shared by the dispatcher and both halves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/label.h"

void vl_label_options_default(vl_label_options *options)
{
    memset(options, 0, sizeof *options);
    options->connectivity = 26;
    options->order = VL_ORDER_MATLAB;
    vl_device_default(&options->device);
}

const char *vl_label_order_name(vl_label_order order)
{
    switch (order) {
    case VL_ORDER_MATLAB: return "matlab";
    case VL_ORDER_MATLAB_XY: return "matlab-xy";
    case VL_ORDER_SIZE: return "size";
    case VL_ORDER_SIZE_RASTER: return "size-raster";
    }
    return "unknown";
}

vl_status vl_label_order_parse(const char *text, vl_label_order *order)
{
    static const vl_label_order all[] = {VL_ORDER_MATLAB, VL_ORDER_MATLAB_XY, VL_ORDER_SIZE, VL_ORDER_SIZE_RASTER};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(text, vl_label_order_name(all[i])) == 0) {
            *order = all[i];
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT, "--order: '%s' is not one of matlab, matlab-xy, size, size-raster", text);
}

int vl_label_order_is_raster(vl_label_order order)
{
    return order == VL_ORDER_MATLAB_XY || order == VL_ORDER_SIZE_RASTER;
}

int vl_label_order_by_size(vl_label_order order)
{
    return order == VL_ORDER_SIZE || order == VL_ORDER_SIZE_RASTER;
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
    free(result->classes);
    result->sizes = NULL;
    result->classes = NULL;
    result->count = 0;
}
