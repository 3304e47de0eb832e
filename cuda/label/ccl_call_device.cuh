/* The device side of a host-volume labelling call, shared by the mask labeller (ccl_gpu.cu) and the
 * multilabel one (ccl_multilabel_gpu.cu): the device and memory budget the z-slabs are planned with, and the
 * device named in the result. */
#ifndef VL_CCL_CALL_DEVICE_CUH
#define VL_CCL_CALL_DEVICE_CUH

#include <cuda_runtime.h>

#include <stdio.h>

#include "core/cuda_check.h"
#include "voxlabel/device.h"
#include "voxlabel/label.h"

namespace vlccl {

/* Selects device.gpu_index and sets *budget to the bytes a call may plan its slabs with: seven eighths of the
 * free memory, or device.gpu_memory when that is less. The eighth left to CUB and the O(N) arrays (a slab
 * that still runs out is retried at half the depth) makes a nearly full device label in many slabs rather
 * than in one-slice ones. */
inline vl_status select_device_budget(const vl_device &device, uint64_t *budget)
{
    cudaError_t error = cudaSetDevice(device.gpu_index);
    if (error != cudaSuccess)
        return vl_cuda_failure(error, "selecting the device");
    size_t free_bytes = 0, total_bytes = 0;
    if ((error = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
        return vl_cuda_failure(error, "reading the free device memory");
    *budget = free_bytes - free_bytes / 8;
    if (device.gpu_memory && device.gpu_memory < *budget)
        *budget = device.gpu_memory;
    return VL_OK;
}

/* The GPU as the device result used, by name, with the number of z-slabs when there were several. */
inline void name_device_used(vl_label_result *result, int gpu_index)
{
    result->outcome.used = VL_DEVICE_GPU;
    char name[96];
    vl_device_gpu_name(gpu_index, name, sizeof name);
    if (result->slabs > 1)
        snprintf(result->device_name, sizeof result->device_name, "%s, %lld z-slabs", name, (long long)result->slabs);
    else
        snprintf(result->device_name, sizeof result->device_name, "%s", name);
}

} // namespace vlccl

#endif
