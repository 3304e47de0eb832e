#include "core/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"

void vl_device_default(vl_device *device)
{
    memset(device, 0, sizeof *device);
    device->kind = VL_DEVICE_AUTO;
}

const char *vl_device_kind_name(vl_device_kind kind)
{
    switch (kind) {
    case VL_DEVICE_AUTO: return "auto";
    case VL_DEVICE_CPU: return "cpu";
    case VL_DEVICE_GPU: return "gpu";
    }
    return "unknown";
}

vl_status vl_device_parse(const char *text, vl_device *device)
{
    device->gpu_index = 0;
    if (strcmp(text, "auto") == 0 || strcmp(text, "cpu") == 0 || strcmp(text, "gpu") == 0) {
        device->kind = text[0] == 'a' ? VL_DEVICE_AUTO : text[0] == 'c' ? VL_DEVICE_CPU : VL_DEVICE_GPU;
        return VL_OK;
    }
    if (strncmp(text, "gpu:", 4) == 0 && text[4] >= '0' && text[4] <= '9') {
        char *end = NULL;
        long index = strtol(text + 4, &end, 10);
        if (*end == '\0' && index < 1024) {
            device->kind = VL_DEVICE_GPU;
            device->gpu_index = (int)index;
            return VL_OK;
        }
    }
    return vl_fail(VL_ERR_ARGUMENT, "--device: '%s' is not one of auto, cpu, gpu, gpu:N", text);
}

static void record(vl_device_outcome *outcome, vl_device_kind used, const char *reason, int gpu_failed)
{
    if (!outcome)
        return;
    outcome->used = used;
    snprintf(outcome->fallback_reason, sizeof outcome->fallback_reason, "%s", reason);
    outcome->gpu_failed = gpu_failed;
}

vl_status vl_device_run(const vl_device *device, vl_stage_half gpu, vl_stage_half cpu, void *context,
                        vl_device_outcome *outcome)
{
    vl_device automatic;
    if (!device) {
        vl_device_default(&automatic);
        device = &automatic;
    }
    char why[256] = "";
    switch (device->kind) {
    case VL_DEVICE_CPU:
        record(outcome, VL_DEVICE_CPU, "", 0);
        return cpu(context);
    case VL_DEVICE_GPU:
        if (!vl_device_gpu_usable(device->gpu_index, why, sizeof why))
            return vl_fail(VL_ERR_DEVICE, "gpu:%d: %s", device->gpu_index, why);
        record(outcome, VL_DEVICE_GPU, "", 0);
        return gpu(context);
    case VL_DEVICE_AUTO: {
        int gpu_failed = 0;
        if (vl_device_gpu_usable(device->gpu_index, why, sizeof why)) {
            vl_status status = gpu(context);
            /* Out of device memory or a failing device: the CPU reference redoes the work. Any other
             * failure (bad input, bad arguments) would fail on the CPU too, so it is returned as it is. */
            if (status != VL_ERR_DEVICE && status != VL_ERR_MEMORY) {
                record(outcome, VL_DEVICE_GPU, "", 0);
                return status;
            }
            snprintf(why, sizeof why, "%s", vl_last_error());
            gpu_failed = 1;
        }
        vl_status status = cpu(context);
        if (status == VL_OK)
            record(outcome, VL_DEVICE_CPU, why, gpu_failed);
        return status;
    }
    }
    return vl_fail(VL_ERR_ARGUMENT, "--device: unknown device kind %d", (int)device->kind);
}

vl_device_notice vl_device_outcome_notice(const vl_device_outcome *outcome, const char *stage, char *text,
                                          size_t text_size)
{
    if (outcome->gpu_failed) {
        snprintf(text, text_size, "the GPU failed, %s on the CPU instead: %s", stage, outcome->fallback_reason);
        return VL_DEVICE_NOTICE_WARNING;
    }
    if (outcome->fallback_reason[0]) {
        snprintf(text, text_size, "%s on the CPU: %s", stage, outcome->fallback_reason);
        return VL_DEVICE_NOTICE_NOTE;
    }
    if (text_size)
        text[0] = '\0';
    return VL_DEVICE_NOTICE_NONE;
}
