/* vl_label_device_array (include/voxlabel/label_device.h): the public door to the device labeller
 * (vl_gpu_label_device, ccl_gpu.cu) for buffers the caller already holds on the GPU. */
#include <cuda_runtime.h>

#include "core/cuda_check.h"
#include "label/ccl_gpu.h"
#include "voxlabel/label_device.h"

namespace {

/* VL_OK when `pointer` is device (or managed) memory of `gpu_index`. */
vl_status check_device_pointer(const void *pointer, int gpu_index, const char *what)
{
    cudaPointerAttributes attributes;
    cudaError_t error = cudaPointerGetAttributes(&attributes, pointer);
    if (error != cudaSuccess) {
        cudaGetLastError();
        return vl_fail(VL_ERR_ARGUMENT, "label: the %s is not CUDA memory (%s)", what, cudaGetErrorString(error));
    }
    if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
        return vl_fail(VL_ERR_ARGUMENT, "label: the %s is not device memory", what);
    if (attributes.device != gpu_index)
        return vl_fail(VL_ERR_ARGUMENT, "label: the %s is on gpu:%d, not gpu:%d", what, attributes.device, gpu_index);
    return VL_OK;
}

} // namespace

extern "C" vl_status vl_label_device_array(const uint8_t *mask, uint32_t *labels, int64_t nx, int64_t ny, int64_t nz,
                                           int connectivity, vl_label_order order, int gpu_index, void *stream,
                                           uint32_t *count)
{
    *count = 0;
    if (nx < 1 || ny < 1 || nz < 1)
        return vl_fail(VL_ERR_ARGUMENT, "label: a %lldx%lldx%lld volume is empty", (long long)nx, (long long)ny,
                       (long long)nz);
    int previous = 0;
    cudaError_t error = cudaGetDevice(&previous);
    if (error == cudaSuccess)
        error = cudaSetDevice(gpu_index);
    if (error != cudaSuccess)
        return vl_cuda_failure(error, "label: selecting the array's device");
    vl_status status = check_device_pointer(mask, gpu_index, "mask");
    if (status == VL_OK)
        status = check_device_pointer(labels, gpu_index, "labels output");
    vl_gpu_label_run run;
    if (status == VL_OK) {
        status = vl_gpu_label_device(mask, labels, nx, ny, nz, connectivity, order, stream, 0, &run);
        if (status == VL_OK)
            *count = run.count;
        vl_gpu_label_run_free(&run);
    }
    cudaSetDevice(previous);
    return status;
}
