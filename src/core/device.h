/* Internal: the one device selection and fallback policy (include/voxlabel/device.h states it). */
#ifndef VL_CORE_DEVICE_H
#define VL_CORE_DEVICE_H

#include "voxlabel/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One half of a stage, run on `context`. */
typedef vl_status (*vl_stage_half)(void *context);

/* Runs `gpu` or `cpu` on `context` as `device` asks (NULL: AUTO on GPU 0), falling back from the GPU to the CPU under AUTO,
 * and fills `outcome` (may be NULL). The GPU half runs with `device->gpu_index` current on this thread. */
vl_status vl_device_run(const vl_device *device, vl_stage_half gpu, vl_stage_half cpu, void *context,
                        vl_device_outcome *outcome);

#ifdef __cplusplus
}
#endif
#endif
