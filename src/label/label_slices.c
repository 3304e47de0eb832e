/* Per-slice 2D labels of a stack, derived from one vl_label_volume call with connectivity 4 or 8.
 * Its global numbering follows the MATLAB key z*nx*ny + x*ny + y, which sorts by slice first, so the
 * labels of slice z form one contiguous run: subtracting the run's start gives contiguous per-slice
 * labels that keep the MATLAB order inside the slice. */
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/label.h"

vl_status vl_label_slices(const vl_volume *mask, int connectivity, const vl_device *device,
                          vl_slice_labels *result)
{
    memset(result, 0, sizeof *result);
    if (connectivity != 4 && connectivity != 8)
        return vl_fail(VL_ERR_ARGUMENT, "--conn: per-slice labelling needs connectivity 4 or 8, not %d", connectivity);
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = VL_ORDER_MATLAB;
    if (device)
        options.device = *device;
    vl_label_result global;
    memset(&global, 0, sizeof global);
    vl_status status = vl_label_volume(mask, &result->labels, &options, &global);
    if (status != VL_OK)
        return status;
    result->outcome = global.outcome;
    vl_label_result_free(&global);
    int64_t nz = mask->nz, plane = mask->nx * mask->ny;
    result->count = calloc((size_t)(nz > 0 ? nz : 1), sizeof *result->count);
    result->first = calloc((size_t)(nz > 0 ? nz : 1), sizeof *result->first);
    if (!result->count || !result->first) {
        vl_slice_labels_free(result);
        return vl_fail(VL_ERR_MEMORY, "labels: out of memory");
    }
    uint32_t *labels = result->labels.data;
    for (int64_t z = 0; z < nz; z++) {
        uint32_t low = UINT32_MAX, high = 0;
        uint32_t *slice = labels + z * plane;
        for (int64_t i = 0; i < plane; i++)
            if (slice[i]) {
                low = slice[i] < low ? slice[i] : low;
                high = slice[i] > high ? slice[i] : high;
            }
        if (high == 0)
            continue;
        result->first[z] = low;
        result->count[z] = high - low + 1;
        for (int64_t i = 0; i < plane; i++)
            if (slice[i])
                slice[i] -= low - 1;
    }
    return VL_OK;
}

void vl_slice_labels_free(vl_slice_labels *labels)
{
    if (!labels)
        return;
    vl_volume_free(&labels->labels);
    free(labels->count);
    free(labels->first);
    memset(labels, 0, sizeof *labels);
}
