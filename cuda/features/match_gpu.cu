/* Brute-force descriptor matching on the GPU: one thread per query, its 128 bytes in registers; the train
 * descriptors pass through shared memory in tiles that the whole block reads, and a squared distance is
 * four-byte SIMD work (|q - t| per byte, then a byte dot product), exact in 32-bit integers as on the CPU.
 * The block size comes from the occupancy calculator. */
#include <cuda_runtime.h>

#include <stdlib.h>

#include "core/cuda_check.h"
#include "features/match_internal.h"

#define WORDS (VL_SIFT_DESCRIPTOR_SIZE / 4)
#define TRAIN_TILE 64

__global__ static void match_kernel(const uint32_t *__restrict__ query, int64_t query_count,
                                    const uint32_t *__restrict__ train, int64_t train_count, vl_match_best *out)
{
    __shared__ uint32_t tile[TRAIN_TILE * WORDS];
    int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    uint32_t mine[WORDS];
    for (int k = 0; k < WORDS; k++)
        mine[k] = q < query_count ? query[q * WORDS + k] : 0;
    int32_t best = INT32_MAX, second = INT32_MAX, best_train = -1;
    for (int64_t t0 = 0; t0 < train_count; t0 += TRAIN_TILE) {
        int64_t tile_count = train_count - t0 < TRAIN_TILE ? train_count - t0 : TRAIN_TILE;
        __syncthreads();
        for (int i = threadIdx.x; i < tile_count * WORDS; i += blockDim.x)
            tile[i] = train[t0 * WORDS + i];
        __syncthreads();
        for (int t = 0; t < tile_count; t++) {
            uint32_t sum = 0;
            for (int k = 0; k < WORDS; k++) {
                uint32_t d = __vabsdiffu4(mine[k], tile[t * WORDS + k]);
                sum = __dp4a(d, d, sum);
            }
            int32_t s = (int32_t)sum;
            if (s < best) {
                second = best;
                best = s;
                best_train = (int32_t)(t0 + t);
            } else if (s < second) {
                second = s;
            }
        }
    }
    if (q < query_count)
        out[q] = vl_match_best{best_train, best, second};
}

static uint8_t *pack(const float *descriptors, int64_t count)
{
    uint8_t *bytes = (uint8_t *)malloc((size_t)(count ? count : 1) * VL_SIFT_DESCRIPTOR_SIZE);
    for (int64_t i = 0; bytes && i < count * VL_SIFT_DESCRIPTOR_SIZE; i++)
        bytes[i] = (uint8_t)descriptors[i];
    return bytes;
}

extern "C" vl_status vl_match_best_gpu(const float *query, int64_t query_count, const float *train,
                                       int64_t train_count, vl_match_best *out, int gpu_index)
{
    vl_status status = vl_cuda_select(gpu_index);
    if (status != VL_OK)
        return status;
    uint8_t *host_query = pack(query, query_count), *host_train = pack(train, train_count);
    uint32_t *device_query = NULL, *device_train = NULL;
    vl_match_best *device_out = NULL;
    cudaError_t error = host_query && host_train ? cudaSuccess : cudaErrorMemoryAllocation;
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&device_query, (size_t)query_count * VL_SIFT_DESCRIPTOR_SIZE);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&device_train, (size_t)train_count * VL_SIFT_DESCRIPTOR_SIZE);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&device_out, (size_t)query_count * sizeof *device_out);
    if (error == cudaSuccess)
        error = cudaMemcpy(device_query, host_query, (size_t)query_count * VL_SIFT_DESCRIPTOR_SIZE,
                           cudaMemcpyHostToDevice);
    if (error == cudaSuccess)
        error = cudaMemcpy(device_train, host_train, (size_t)train_count * VL_SIFT_DESCRIPTOR_SIZE,
                           cudaMemcpyHostToDevice);
    if (error == cudaSuccess) {
        int grid = 0, block = 128;
        if (cudaOccupancyMaxPotentialBlockSize(&grid, &block, match_kernel, 0, 0) != cudaSuccess || block < 32)
            block = 128;
        int64_t blocks = (query_count + block - 1) / block;
        match_kernel<<<(unsigned)blocks, block>>>(device_query, query_count, device_train, train_count, device_out);
        error = cudaGetLastError();
    }
    if (error == cudaSuccess)
        error = cudaMemcpy(out, device_out, (size_t)query_count * sizeof *out, cudaMemcpyDeviceToHost);
    if (error != cudaSuccess)
        status = vl_cuda_failure(error, "matching descriptors");
    cudaFree(device_query);
    cudaFree(device_train);
    cudaFree(device_out);
    free(host_query);
    free(host_train);
    return status;
}
