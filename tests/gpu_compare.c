/* GPU == CPU comparison shared by the GPU tests. */
#include <stdio.h>
#include <string.h>

#include "gpu_compare.h"
#include "label_compare.h"
#include "label/label_gpu.h"
#include "test_check.h"

const vl_label_order vl_gpu_test_orders[4] = {VL_ORDER_MATLAB, VL_ORDER_MATLAB_XY, VL_ORDER_SIZE,
                                             VL_ORDER_SIZE_RASTER};

/* Runs CPU and GPU on `mask` and compares everything; prints the first difference. */
int vl_gpu_test_compare(const vl_volume *mask, int connectivity, vl_label_order order, int64_t slab_depth,
                        const char *what)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = order;
    vl_volume cpu_labels, gpu_labels;
    vl_label_result cpu, gpu;
    if (vl_label_volume_cpu(mask, &cpu_labels, &options, &cpu) != VL_OK) {
        REPORT_FAILURE("%s: cpu labelling failed", what);
        return 0;
    }
    options.device.kind = VL_DEVICE_GPU;
    options.device.gpu_memory = (uint64_t)slab_depth * vl_gpu_label_bytes_per_slice(mask->nx, mask->ny);
    if (vl_label_volume(mask, &gpu_labels, &options, &gpu) != VL_OK) {
        REPORT_FAILURE("%s: gpu labelling failed", what);
        vl_volume_free(&cpu_labels);
        vl_label_result_free(&cpu);
        return 0;
    }
    int ok = vl_test_same_labelling(&cpu_labels, &cpu, "cpu", &gpu_labels, &gpu, "gpu", what);
    if (gpu.outcome.used != VL_DEVICE_GPU || strstr(gpu.device_name, "gpu:0") == NULL) {
        REPORT_FAILURE("%s: device_used %d, device_name '%s'", what, (int)gpu.outcome.used, gpu.device_name);
        ok = 0;
    }
    const int64_t slabs = slab_depth ? (mask->nz + slab_depth - 1) / slab_depth : 1;
    if (gpu.slabs != slabs) {
        REPORT_FAILURE("%s: labelled in %lld z-slabs, expected %lld", what, (long long)gpu.slabs, (long long)slabs);
        ok = 0;
    }
    vl_volume_free(&cpu_labels);
    vl_volume_free(&gpu_labels);
    vl_label_result_free(&cpu);
    vl_label_result_free(&gpu);
    return ok;
}

int vl_gpu_test_compare_in_slabs(const vl_volume *mask, const char *name, int connectivity, vl_label_order order,
                                 int64_t depth)
{
    char what[800];
    snprintf(what, sizeof what, "%s conn %d order %s, z-slabs of %lld slices", name, connectivity,
             vl_label_order_name(order), (long long)depth);
    if (!vl_gpu_test_compare(mask, connectivity, order, depth, what))
        return 1;
    printf("ok %s\n", what);
    fflush(stdout);
    return 0;
}

int vl_gpu_test_compare_all(const vl_volume *mask, const char *name, const int *conns, int conn_count)
{
    int failed = 0;
    for (int i = 0; i < conn_count; i++)
        for (int o = 0; o < 4; o++) {
            char what[800];
            snprintf(what, sizeof what, "%s conn %d order %s", name, conns[i], vl_label_order_name(vl_gpu_test_orders[o]));
            if (!vl_gpu_test_compare(mask, conns[i], vl_gpu_test_orders[o], 0, what))
                failed++;
            else
                printf("ok %s\n", what);
            fflush(stdout);
        }
    return failed;
}

