/* The colour stage on the GPU: one fused RGB -> HSV -> range kernel, one thread per pixel (grid-stride).
 * The arithmetic is src/image2d/color_hsv_pixel.h, shared with the CPU reference, so results are bit-identical. */
#include <cuda_runtime.h>

#include <stdint.h>

#include "image2d/color_internal.h"
#include "core/cuda_check.h"
#include "voxlabel/error.h"

/* The OpenCV reciprocal tables live in constant memory; each block copies the ones it needs into
 * shared memory because pixels index them divergently (constant memory serialises such reads). */
__constant__ vl_hsv_tables device_tables;


static vl_status upload_tables(void)
{
    static int uploaded_device = -1;
    int device = 0;
    cudaError_t error = cudaGetDevice(&device);
    if (error != cudaSuccess)
        return vl_cuda_failure(error, "no usable CUDA device");
    if (uploaded_device == device)
        return VL_OK;
    error = cudaMemcpyToSymbol(device_tables, vl_hsv_tables_get(), sizeof(vl_hsv_tables));
    if (error != cudaSuccess)
        return vl_cuda_failure(error, "uploading the HSV tables");
    uploaded_device = device;
    return VL_OK;
}

__device__ static void load_tables(vl_color_mode mode, int32_t *sdiv, int32_t *hdiv)
{
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
        sdiv[i] = device_tables.sdiv[i];
        hdiv[i] = mode == VL_COLOR_OPENCV ? device_tables.hdiv180[i] : device_tables.hdiv256[i];
    }
    __syncthreads();
}

__device__ static void convert_pixel(vl_color_mode mode, const int32_t *sdiv, const int32_t *hdiv, const uint8_t *rgb,
                                     uint8_t hsv[3])
{
    int r = rgb[0], g = rgb[1], b = rgb[2];
    if (mode == VL_COLOR_THESIS)
        vl_hsv_thesis(r, g, b, &hsv[0], &hsv[1], &hsv[2]);
    else
        vl_hsv_opencv(sdiv, hdiv, mode == VL_COLOR_OPENCV ? 180 : 256, r, g, b, &hsv[0], &hsv[1], &hsv[2]);
}

__global__ static void rgb_to_hsv_kernel(const uint8_t *__restrict__ rgb, uint8_t *__restrict__ hsv, int64_t pixels,
                                         vl_color_mode mode)
{
    __shared__ int32_t sdiv[256], hdiv[256];
    load_tables(mode, sdiv, hdiv);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < pixels; i += (int64_t)gridDim.x * blockDim.x)
        convert_pixel(mode, sdiv, hdiv, rgb + 3 * i, hsv + 3 * i);
}

__global__ static void color_threshold_kernel(const uint8_t *__restrict__ rgb, uint8_t *__restrict__ mask,
                                              int64_t pixels, vl_color_range range)
{
    __shared__ int32_t sdiv[256], hdiv[256];
    load_tables(range.mode, sdiv, hdiv);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < pixels;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint8_t hsv[3];
        convert_pixel(range.mode, sdiv, hdiv, rgb + 3 * i, hsv);
        mask[i] = (uint8_t)vl_hsv_in_range(&range, hsv);
    }
}

/* Four pixels per thread: three aligned 32-bit loads (12 bytes = 4 RGB triples) and one 32-bit store, so
 * a warp moves 384 contiguous bytes in and 128 out per step. Needs 4-byte aligned buffers; the last
 * pixels % 4 pixels are left to the scalar kernel. */
__global__ static void color_threshold_kernel_x4(const uint32_t *__restrict__ rgb_words, uint32_t *__restrict__ mask_words,
                                                 int64_t groups, vl_color_range range)
{
    __shared__ int32_t sdiv[256], hdiv[256];
    load_tables(range.mode, sdiv, hdiv);
    for (int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; g < groups;
         g += (int64_t)gridDim.x * blockDim.x) {
        uint32_t words[3] = {rgb_words[3 * g], rgb_words[3 * g + 1], rgb_words[3 * g + 2]};
        const uint8_t *bytes = (const uint8_t *)words;
        uint32_t packed = 0;
        for (int k = 0; k < 4; k++) {
            uint8_t hsv[3];
            convert_pixel(range.mode, sdiv, hdiv, bytes + 3 * k, hsv);
            packed |= (uint32_t)vl_hsv_in_range(&range, hsv) << (8 * k);
        }
        mask_words[g] = packed;
    }
}

static unsigned grid_for(int64_t pixels)
{
    int64_t blocks = (pixels + 255) / 256;
    return (unsigned)(blocks < 1 ? 1 : blocks > 65535 * 16 ? 65535 * 16 : blocks);
}

static void launch_threshold(const uint8_t *rgb, uint8_t *mask, int64_t pixels, const vl_color_range *range)
{
    int64_t groups = ((uintptr_t)rgb % 4 == 0 && (uintptr_t)mask % 4 == 0) ? pixels / 4 : 0;
    if (groups > 0)
        color_threshold_kernel_x4<<<grid_for(groups), 256>>>((const uint32_t *)rgb, (uint32_t *)mask, groups, *range);
    int64_t done = 4 * groups;
    if (done < pixels)
        color_threshold_kernel<<<grid_for(pixels - done), 256>>>(rgb + 3 * done, mask + done, pixels - done, *range);
}

vl_status vl_color_threshold_device(const uint8_t *rgb_device, uint8_t *mask_device, int64_t pixels,
                                    const vl_color_range *range)
{
    vl_status status = upload_tables();
    if (status != VL_OK || pixels == 0)
        return status;
    launch_threshold(rgb_device, mask_device, pixels, range);
    cudaError_t error = cudaGetLastError();
    return error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "colour threshold kernel");
}

/* Copies `pixels` RGB triples up, runs `launch`, copies `out_bytes_per_pixel` bytes per pixel back. */
static vl_status run_on_device(const uint8_t *rgb, uint8_t *out, int64_t pixels, int out_bytes_per_pixel,
                               const vl_color_range *range, vl_color_mode mode, int gpu_index)
{
    vl_status status = vl_cuda_select(gpu_index);
    if (status == VL_OK)
        status = upload_tables();
    if (status != VL_OK)
        return status;
    if (pixels == 0)
        return VL_OK;
    uint8_t *rgb_device = NULL, *out_device = NULL;
    size_t in_bytes = (size_t)pixels * 3, out_bytes = (size_t)pixels * (size_t)out_bytes_per_pixel;
    cudaError_t error = cudaMalloc((void **)&rgb_device, in_bytes);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&out_device, out_bytes);
    if (error == cudaSuccess)
        error = cudaMemcpy(rgb_device, rgb, in_bytes, cudaMemcpyHostToDevice);
    if (error == cudaSuccess) {
        if (range)
            launch_threshold(rgb_device, out_device, pixels, range);
        else
            rgb_to_hsv_kernel<<<grid_for(pixels), 256>>>(rgb_device, out_device, pixels, mode);
        error = cudaGetLastError();
    }
    if (error == cudaSuccess)
        error = cudaMemcpy(out, out_device, out_bytes, cudaMemcpyDeviceToHost);
    cudaFree(rgb_device);
    cudaFree(out_device);
    return error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "colour stage");
}

extern "C" vl_status vl_rgb_to_hsv_gpu(const uint8_t *rgb, uint8_t *hsv, int64_t pixels, vl_color_mode mode,
                                       int gpu_index)
{
    return run_on_device(rgb, hsv, pixels, 3, NULL, mode, gpu_index);
}

extern "C" vl_status vl_color_threshold_gpu(const uint8_t *rgb, uint8_t *mask, int64_t pixels,
                                            const vl_color_range *range, int gpu_index)
{
    return run_on_device(rgb, mask, pixels, 1, range, range->mode, gpu_index);
}
