/* `size` order on the device: a stable descending radix sort of the component sizes (CUB) over labels
 * numbered in `matlab` order, so equal sizes keep the matlab key as tie-break. The result is a table from
 * matlab label to size-order label, which the write pass applies. */
#include <cub/device/device_radix_sort.cuh>

#include "ccl_size_order.cuh"

namespace vlccl {
namespace {

__global__ void iota_kernel(uint32_t *values, uint32_t count)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        values[i] = i;
}

__global__ void invert_kernel(const uint32_t *sorted_old, uint32_t *new_label, uint32_t count)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        new_label[sorted_old[i]] = i + 1;
}

/* Sizes are below 2^end_bit: fewer radix passes. */
int size_end_bit(int64_t voxels)
{
    int end_bit = 1;
    while (end_bit < 64 && (1ull << end_bit) <= (unsigned long long)voxels)
        end_bit++;
    return end_bit;
}

unsigned blocks_for(uint32_t count)
{
    unsigned blocks = (count + 255) / 256;
    return blocks < 1 ? 1 : blocks > 4096 ? 4096 : blocks;
}

} // namespace

size_t size_order_scratch_bytes(uint32_t count, int64_t voxels)
{
    size_t sort_bytes = 0;
    cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_bytes, (unsigned long long *)nullptr,
                                              (unsigned long long *)nullptr, (uint32_t *)nullptr,
                                              (uint32_t *)nullptr, count, 0, size_end_bit(voxels));
    return ((sort_bytes + 255) / 256) * 256 + (size_t)count * (sizeof(unsigned long long) + 3 * sizeof(uint32_t)) + 1024;
}

cudaError_t order_by_size(unsigned long long *sizes, uint32_t count, int64_t voxels, void *scratch,
                          const uint32_t **new_label, cudaStream_t stream)
{
    const int end_bit = size_end_bit(voxels);
    size_t sort_bytes = 0;
    cudaError_t error = cub::DeviceRadixSort::SortPairsDescending(
        nullptr, sort_bytes, (unsigned long long *)nullptr, (unsigned long long *)nullptr, (uint32_t *)nullptr,
        (uint32_t *)nullptr, count, 0, end_bit, stream);
    if (error != cudaSuccess)
        return error;
    char *cursor = static_cast<char *>(scratch);
    void *sort_temp = cursor;
    cursor += ((sort_bytes + 255) / 256) * 256;
    unsigned long long *sorted_sizes = reinterpret_cast<unsigned long long *>(cursor);
    cursor += ((size_t)count * sizeof(unsigned long long) + 255) / 256 * 256;
    uint32_t *old_in = reinterpret_cast<uint32_t *>(cursor);
    cursor += ((size_t)count * sizeof(uint32_t) + 255) / 256 * 256;
    uint32_t *old_sorted = reinterpret_cast<uint32_t *>(cursor);
    cursor += ((size_t)count * sizeof(uint32_t) + 255) / 256 * 256;
    uint32_t *table = reinterpret_cast<uint32_t *>(cursor);

    iota_kernel<<<blocks_for(count), 256, 0, stream>>>(old_in, count);
    error = cub::DeviceRadixSort::SortPairsDescending(sort_temp, sort_bytes, sizes, sorted_sizes, old_in, old_sorted,
                                                      count, 0, end_bit, stream);
    if (error != cudaSuccess)
        return error;
    invert_kernel<<<blocks_for(count), 256, 0, stream>>>(old_sorted, table, count);
    *new_label = table;
    return cudaMemcpyAsync(sizes, sorted_sizes, (size_t)count * sizeof(unsigned long long), cudaMemcpyDeviceToDevice,
                           stream);
}

} // namespace vlccl
