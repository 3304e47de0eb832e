/* vl_label_volume and vl_label_multilabel: the labeller's dispatch between its CPU reference (ccl_cpu.c) and
 * its GPU half (cuda/label/ccl_gpu.cu, ccl_multilabel_gpu.cu), under the one device policy. */
#include "core/device.h"
#include "label/label_gpu.h"
#include "voxlabel/label.h"

typedef struct label_call {
    const vl_volume *mask;
    vl_volume *labels;
    const vl_label_options *options;
    vl_label_result *result;
} label_call;

static vl_status label_gpu(void *context)
{
    label_call *call = context;
    return vl_label_volume_gpu(call->mask, call->labels, call->options, call->result);
}

static vl_status label_cpu(void *context)
{
    label_call *call = context;
    return vl_label_volume_cpu(call->mask, call->labels, call->options, call->result);
}

/* Runs one labeller pair under the device policy and records where it ran. */
static vl_status dispatch(vl_stage_half gpu, vl_stage_half cpu, label_call *call)
{
    vl_device_outcome outcome;
    vl_status status = vl_device_run(&call->options->device, gpu, cpu, call, &outcome);
    if (status == VL_OK)
        call->result->outcome = outcome;
    return status;
}

vl_status vl_label_volume(const vl_volume *mask, vl_volume *labels, const vl_label_options *options,
                          vl_label_result *result)
{
    label_call call = {mask, labels, options, result};
    return dispatch(label_gpu, label_cpu, &call);
}

static vl_status multilabel_gpu(void *context)
{
    label_call *call = context;
    return vl_label_multilabel_gpu(call->mask, call->labels, call->options, call->result);
}

static vl_status multilabel_cpu(void *context)
{
    label_call *call = context;
    return vl_label_multilabel_cpu(call->mask, call->labels, call->options, call->result);
}

vl_status vl_label_multilabel(const vl_volume *classes, vl_volume *labels, const vl_label_options *options,
                              vl_label_result *result)
{
    /* Refused before the device policy, so that `auto` does not fall back to the CPU on bad input. */
    vl_status status = vl_class_map_check(classes);
    if (status != VL_OK)
        return status;
    label_call call = {classes, labels, options, result};
    return dispatch(multilabel_gpu, multilabel_cpu, &call);
}
