/* The GPU half of the device module: which CUDA device can run this build's kernels, its name, and the
 * one CUDA error helper every stage's GPU half reports through. */
#include <cuda_runtime.h>

#include <stdio.h>

#include "core/cuda_check.h"
#include "voxlabel/error.h"
#include "voxlabel/device.h"

namespace {

/* A kernel of this build: if it cannot load, the device's architecture is not one nvcc built for. */
__global__ void probe_kernel(int *out)
{
    if (out)
        *out = 0;
}

} // namespace

extern "C" int vl_device_gpu_usable(int gpu_index, char *why, size_t why_size)
{
    int devices = 0;
    cudaError_t error = cudaGetDeviceCount(&devices);
    if (error != cudaSuccess) {
        cudaGetLastError();
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        if (driver == 0)
            snprintf(why, why_size, "no NVIDIA GPU driver is installed");
        else if (error == cudaErrorInsufficientDriver)
            snprintf(why, why_size, "the NVIDIA driver supports CUDA %d.%d but voxlabel needs %d.%d", driver / 1000,
                     driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
        else
            snprintf(why, why_size, "no usable CUDA device (%s)", cudaGetErrorString(error));
        return 0;
    }
    if (gpu_index < 0 || gpu_index >= devices) {
        snprintf(why, why_size, "no CUDA device %d (%d found)", gpu_index, devices);
        return 0;
    }
    error = cudaSetDevice(gpu_index);
    cudaFuncAttributes attributes;
    if (error == cudaSuccess)
        error = cudaFuncGetAttributes(&attributes, probe_kernel);
    if (error != cudaSuccess) {
        cudaGetLastError();
        cudaDeviceProp properties;
        if (cudaGetDeviceProperties(&properties, gpu_index) == cudaSuccess)
            snprintf(why, why_size, "%s (compute capability %d.%d) cannot run this build's kernels (%s)",
                     properties.name, properties.major, properties.minor, cudaGetErrorString(error));
        else
            snprintf(why, why_size, "device %d: %s", gpu_index, cudaGetErrorString(error));
        cudaGetLastError();
        return 0;
    }
    return 1;
}

extern "C" void vl_device_gpu_name(int gpu_index, char *name, size_t name_size)
{
    cudaDeviceProp properties;
    if (cudaGetDeviceProperties(&properties, gpu_index) == cudaSuccess)
        snprintf(name, name_size, "%s (gpu:%d)", properties.name, gpu_index);
    else
        snprintf(name, name_size, "gpu:%d", gpu_index);
}

vl_status vl_cuda_failure(cudaError_t error, const char *what)
{
    cudaGetLastError();
    if (error == cudaErrorMemoryAllocation)
        return vl_fail(VL_ERR_MEMORY, "gpu: %s: out of device memory", what);
    return vl_fail(VL_ERR_DEVICE, "gpu: %s: %s", what, cudaGetErrorString(error));
}

vl_status vl_cuda_select(int gpu_index)
{
    cudaError_t error = cudaSetDevice(gpu_index);
    return error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "selecting the device");
}
