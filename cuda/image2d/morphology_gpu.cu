/* Binary morphology on the GPU with shared-memory tiles.
 *
 * Each block loads its output tile plus a halo as wide as the element's reach into shared memory
 * (voxels outside the volume load as background), then every thread tests the element's offsets
 * against the tile: erosion keeps a voxel when all of them are foreground, dilation when any is.
 * The offsets sit in constant memory: all threads of a warp read the same offset at the same time,
 * which constant memory broadcasts. Two slots hold the elements of an open/close pair. */
#include <cuda_runtime.h>

#include "image2d/morphology_gpu.h"
#include "core/cuda_check.h"
#include "voxlabel/error.h"

__constant__ int8_t element_dx[2][VL_MORPH_MAX_OFFSETS];
__constant__ int8_t element_dy[2][VL_MORPH_MAX_OFFSETS];
__constant__ int8_t element_dz[2][VL_MORPH_MAX_OFFSETS];


__global__ static void morphology_tile_kernel(const uint8_t *__restrict__ in, uint8_t *__restrict__ out, int64_t nx,
                                              int64_t ny, int64_t nz, int rx, int ry, int rz, int slot, int count,
                                              int dilate)
{
    extern __shared__ uint8_t tile[];
    const int tile_x = blockDim.x + 2 * rx, tile_y = blockDim.y + 2 * ry, tile_z = blockDim.z + 2 * rz;
    const int64_t x0 = (int64_t)blockIdx.x * blockDim.x - rx;
    const int64_t y0 = (int64_t)blockIdx.y * blockDim.y - ry;
    const int64_t z0 = (int64_t)blockIdx.z * blockDim.z - rz;
    const int threads = blockDim.x * blockDim.y * blockDim.z;
    const int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int tile_voxels = tile_x * tile_y * tile_z;
    for (int i = thread; i < tile_voxels; i += threads) {
        int tx = i % tile_x, ty = (i / tile_x) % tile_y, tz = i / (tile_x * tile_y);
        int64_t x = x0 + tx, y = y0 + ty, z = z0 + tz;
        uint8_t value = 0;
        if (x >= 0 && x < nx && y >= 0 && y < ny && z >= 0 && z < nz)
            value = in[x + nx * (y + ny * z)] != 0;
        tile[i] = value;
    }
    __syncthreads();
    const int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t y = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    const int64_t z = (int64_t)blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz)
        return;
    const int centre = (threadIdx.x + rx) + tile_x * ((threadIdx.y + ry) + tile_y * (threadIdx.z + rz));
    uint8_t result = dilate ? 0 : 1;
    for (int k = 0; k < count; k++) {
        uint8_t value = tile[centre + element_dx[slot][k] +
                             tile_x * (element_dy[slot][k] + tile_y * element_dz[slot][k])];
        if (value == (uint8_t)dilate) {
            result = (uint8_t)dilate;
            break;
        }
    }
    out[x + nx * (y + ny * z)] = result;
}

static vl_status launch_pass(const uint8_t *in, uint8_t *out, int64_t nx, int64_t ny, int64_t nz,
                             const vl_morph_pass *pass, int slot)
{
    const vl_morph_element *element = &pass->element;
    size_t bytes = (size_t)element->count;
    cudaError_t error = cudaMemcpyToSymbol(element_dx, element->dx, bytes, (size_t)slot * VL_MORPH_MAX_OFFSETS);
    if (error == cudaSuccess)
        error = cudaMemcpyToSymbol(element_dy, element->dy, bytes, (size_t)slot * VL_MORPH_MAX_OFFSETS);
    if (error == cudaSuccess)
        error = cudaMemcpyToSymbol(element_dz, element->dz, bytes, (size_t)slot * VL_MORPH_MAX_OFFSETS);
    if (error != cudaSuccess)
        return vl_cuda_failure(error, "uploading the structuring element");
    int planar = element->reach[2] == 0;
    dim3 block = planar ? dim3(32, 8, 1) : dim3(16, 8, 4);
    dim3 grid((unsigned)((nx + block.x - 1) / block.x), (unsigned)((ny + block.y - 1) / block.y),
              (unsigned)((nz + block.z - 1) / block.z));
    if (grid.y > 65535 || grid.z > 65535)
        return vl_fail(VL_ERR_ARGUMENT, "gpu: morphology: volume %lldx%lldx%lld is too tall for one launch",
                       (long long)nx, (long long)ny, (long long)nz);
    size_t shared = (size_t)(block.x + 2 * element->reach[0]) * (block.y + 2 * element->reach[1]) *
                    (block.z + 2 * element->reach[2]);
    morphology_tile_kernel<<<grid, block, shared>>>(in, out, nx, ny, nz, element->reach[0], element->reach[1],
                                                    element->reach[2], slot, element->count, pass->dilate);
    error = cudaGetLastError();
    return error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "morphology kernel");
}

extern "C" vl_status vl_morphology_device(uint8_t *mask_device, uint8_t *scratch_device, int64_t nx, int64_t ny,
                                          int64_t nz, const vl_morph_pass *passes, int pass_count)
{
    uint8_t *source = mask_device, *target = scratch_device;
    for (int p = 0; p < pass_count; p++) {
        vl_status status = launch_pass(source, target, nx, ny, nz, &passes[p], p % 2);
        if (status != VL_OK)
            return status;
        uint8_t *swap = source;
        source = target;
        target = swap;
    }
    if (source != mask_device) {
        cudaError_t error = cudaMemcpyAsync(mask_device, source, (size_t)(nx * ny * nz), cudaMemcpyDeviceToDevice);
        if (error != cudaSuccess)
            return vl_cuda_failure(error, "morphology copy");
    }
    return VL_OK;
}

extern "C" vl_status vl_morphology_gpu(uint8_t *data, int64_t nx, int64_t ny, int64_t nz,
                                       const vl_morph_pass *passes, int pass_count, int gpu_index)
{
    vl_status selected = vl_cuda_select(gpu_index);
    if (selected != VL_OK)
        return selected;
    size_t bytes = (size_t)(nx * ny * nz);
    if (bytes == 0)
        return VL_OK;
    uint8_t *mask_device = NULL, *scratch_device = NULL;
    cudaError_t error = cudaMalloc((void **)&mask_device, bytes);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&scratch_device, bytes);
    if (error == cudaSuccess)
        error = cudaMemcpy(mask_device, data, bytes, cudaMemcpyHostToDevice);
    vl_status status = error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "morphology upload");
    if (status == VL_OK)
        status = vl_morphology_device(mask_device, scratch_device, nx, ny, nz, passes, pass_count);
    if (status == VL_OK) {
        error = cudaMemcpy(data, mask_device, bytes, cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            status = vl_cuda_failure(error, "morphology download");
    }
    cudaFree(mask_device);
    cudaFree(scratch_device);
    return status;
}
