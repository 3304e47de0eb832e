/* GPU half of src/stats/stats_euler.c: the Euler number of every component from the device-resident labels.
 * One thread per 2x2x2 window (lattice point); a window adds the table entry of each distinct label among its
 * 8 voxels with an integer atomic, so the totals are exact and identical to the CPU's whatever the order. */
#include <cuda_runtime.h>

#include "core/cuda_check.h"
#include "stats/stats_extras.h"
#include "stats/stats_gpu.h"

namespace {

__constant__ signed char euler_table[256];

__device__ uint32_t label_or_zero(const uint32_t *labels, long long x, long long y, long long z, long long nx,
                                  long long ny, long long nz)
{
    if (x < 0 || y < 0 || z < 0 || x >= nx || y >= ny || z >= nz)
        return 0;
    return labels[x + nx * (y + ny * z)];
}

__global__ void count_windows(const uint32_t *labels, long long nx, long long ny, long long nz,
                              unsigned long long *chi)
{
    const long long wx = nx + 1, wy = ny + 1, windows = wx * wy * (nz + 1);
    for (long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x; w < windows;
         w += (long long)gridDim.x * blockDim.x) {
        const long long x = w % wx, y = (w / wx) % wy, z = w / (wx * wy);
        uint32_t window[8];
        uint32_t any = 0;
        for (int i = 0; i < 8; i++) {
            window[i] = label_or_zero(labels, x - 1 + (i & 1), y - 1 + ((i >> 1) & 1), z - 1 + (i >> 2), nx, ny, nz);
            any |= window[i];
        }
        if (!any)
            continue;
        for (int i = 0; i < 8; i++) {
            const uint32_t a = window[i];
            bool seen = a == 0;
            for (int j = 0; j < i && !seen; j++)
                seen = window[j] == a;
            if (seen)
                continue;
            unsigned config = 0;
            for (int j = i; j < 8; j++)
                config |= (unsigned)(window[j] == a) << j;
            /* Two's complement: adding a negative entry as unsigned wraps to the right 64-bit total. */
            atomicAdd(&chi[a - 1], (unsigned long long)(long long)euler_table[config]);
        }
    }
}

} // namespace

extern "C" vl_status vl_stats_euler_gpu_device(const uint32_t *labels, int64_t nx, int64_t ny, int64_t nz,
                                               uint32_t count, int connectivity, int64_t *chi)
{
    signed char table[256];
    for (unsigned config = 0; config < 256; config++)
        table[config] = (signed char)vl_stats_euler_window(config, connectivity);
    VL_CUDA_TRY(cudaMemcpyToSymbol(euler_table, table, sizeof table), "copying the Euler table");
    unsigned long long *device_chi = nullptr;
    VL_CUDA_TRY(cudaMalloc(&device_chi, sizeof *device_chi * (count ? count : 1)), "allocating the Euler sums");
    cudaError_t error = cudaMemset(device_chi, 0, sizeof *device_chi * count);
    if (error == cudaSuccess) {
        count_windows<<<2048, 256>>>(labels, nx, ny, nz, device_chi);
        error = cudaGetLastError();
    }
    if (error == cudaSuccess)
        error = cudaMemcpy(chi, device_chi, sizeof *chi * count, cudaMemcpyDeviceToHost);
    cudaFree(device_chi);
    VL_CUDA_TRY(error, "counting the Euler windows");
    return VL_OK;
}
