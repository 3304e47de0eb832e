/* `size` and `size-raster` orders on the device: a stable descending radix sort of the component sizes
 * (CUB) over labels numbered in `matlab` order (`size`) or `matlab-xy` order (`size-raster`), so equal
 * sizes keep that key as tie-break. The result is a table from key-order label to size-order label, which
 * the write pass applies.
 *
 * The sort keys are as narrow as the sizes allow: 32-bit when the volume has fewer than 2^32 voxels, and
 * for many components only the bits of the largest size (a reduction and an 8-byte read-back find it).
 * Narrower keys take fewer radix passes; the read-back is a synchronisation, which costs more than the
 * passes it saves when components are few (kFindLargestFrom, chosen by measurement on the bench,
 * bench/gpu_bench.c). */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include "ccl_size_order.cuh"

namespace vlccl {
namespace {

/* keys[i] := sizes[i], old[i] := i. */
template <typename Key>
__global__ void prepare_kernel(const unsigned long long *sizes, Key *keys, uint32_t *old, uint32_t count)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        keys[i] = (Key)sizes[i];
        old[i] = i;
    }
}

/* new_label[old label - 1] := its size-order label, and the sizes in size order. */
template <typename Key>
__global__ void invert_kernel(const Key *sorted_keys, const uint32_t *sorted_old, uint32_t *new_label,
                              unsigned long long *sizes, uint32_t count)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        new_label[sorted_old[i]] = i + 1;
        sizes[i] = sorted_keys[i];
    }
}

/* The bits needed for values up to `largest`. */
int bits_for(unsigned long long largest)
{
    int bits = 1;
    while (bits < 64 && (1ull << bits) <= largest)
        bits++;
    return bits;
}

unsigned blocks_for(uint32_t count)
{
    unsigned blocks = (count + 255) / 256;
    return blocks < 1 ? 1 : blocks > 4096 ? 4096 : blocks;
}

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* Carves the scratch: CUB's temporary storage (the larger of the sort's at most end_bit bits and the
 * reduction's), keys in and out, old labels in and out, the table and the largest size. */
template <typename Key>
struct SortScratch {
    void *temp;
    size_t temp_bytes;
    Key *keys, *sorted_keys;
    uint32_t *old, *sorted_old, *table;
    unsigned long long *largest;

    static size_t temp_needed(uint32_t count, int end_bit)
    {
        size_t sort_bytes = 0, reduce_bytes = 0;
        cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_bytes, (Key *)nullptr, (Key *)nullptr,
                                                  (uint32_t *)nullptr, (uint32_t *)nullptr, count, 0, end_bit);
        cub::DeviceReduce::Max(nullptr, reduce_bytes, (unsigned long long *)nullptr, (unsigned long long *)nullptr,
                               count);
        return round_up(sort_bytes > reduce_bytes ? sort_bytes : reduce_bytes);
    }
    static size_t bytes(uint32_t count, int end_bit)
    {
        return temp_needed(count, end_bit) + 2 * round_up((size_t)count * sizeof(Key)) +
               3 * round_up((size_t)count * sizeof(uint32_t)) + 256;
    }
    SortScratch(void *scratch, uint32_t count, int end_bit)
    {
        char *cursor = static_cast<char *>(scratch);
        temp = cursor;
        temp_bytes = temp_needed(count, end_bit);
        cursor += temp_bytes;
        keys = reinterpret_cast<Key *>(cursor);
        sorted_keys = reinterpret_cast<Key *>(cursor += round_up((size_t)count * sizeof(Key)));
        old = reinterpret_cast<uint32_t *>(cursor += round_up((size_t)count * sizeof(Key)));
        sorted_old = reinterpret_cast<uint32_t *>(cursor += round_up((size_t)count * sizeof(uint32_t)));
        table = reinterpret_cast<uint32_t *>(cursor += round_up((size_t)count * sizeof(uint32_t)));
        largest = reinterpret_cast<unsigned long long *>(cursor += round_up((size_t)count * sizeof(uint32_t)));
    }
};

/* Components from which the largest size is looked up first: a onesweep pass over 4 M 32-bit pairs costs
 * about as much as the read-back. */
constexpr uint32_t kFindLargestFrom = 1u << 22;

/* Keys of 32 bits while every size fits. */
bool narrow_keys(int64_t voxels) { return voxels < (int64_t)1 << 32; }

template <typename Key>
cudaError_t sort_by_size(unsigned long long *sizes, uint32_t count, int64_t voxels, void *scratch,
                         const uint32_t **new_label, cudaStream_t stream)
{
    SortScratch<Key> s(scratch, count, bits_for((unsigned long long)voxels));
    size_t temp_bytes = s.temp_bytes;
    cudaError_t error = cudaSuccess;
    unsigned long long largest = (unsigned long long)voxels;
    if (count >= kFindLargestFrom) {
        error = cub::DeviceReduce::Max(s.temp, temp_bytes, sizes, s.largest, count, stream);
        if (error == cudaSuccess)
            error = cudaMemcpyAsync(&largest, s.largest, sizeof largest, cudaMemcpyDeviceToHost, stream);
        if (error == cudaSuccess)
            error = cudaStreamSynchronize(stream);
        if (error != cudaSuccess)
            return error;
    }
    const int end_bit = bits_for(largest);
    prepare_kernel<Key><<<blocks_for(count), 256, 0, stream>>>(sizes, s.keys, s.old, count);
    temp_bytes = s.temp_bytes;
    error = cub::DeviceRadixSort::SortPairsDescending(s.temp, temp_bytes, s.keys, s.sorted_keys, s.old, s.sorted_old,
                                                      count, 0, end_bit, stream);
    if (error != cudaSuccess)
        return error;
    invert_kernel<Key><<<blocks_for(count), 256, 0, stream>>>(s.sorted_keys, s.sorted_old, s.table, sizes, count);
    *new_label = s.table;
    return cudaGetLastError();
}

} // namespace

size_t size_order_scratch_bytes(uint32_t count, int64_t voxels)
{
    const int end_bit = bits_for((unsigned long long)voxels);
    return narrow_keys(voxels) ? SortScratch<uint32_t>::bytes(count, end_bit)
                               : SortScratch<unsigned long long>::bytes(count, end_bit);
}

cudaError_t order_by_size(unsigned long long *sizes, uint32_t count, int64_t voxels, void *scratch,
                          const uint32_t **new_label, cudaStream_t stream)
{
    return narrow_keys(voxels) ? sort_by_size<uint32_t>(sizes, count, voxels, scratch, new_label, stream)
                               : sort_by_size<unsigned long long>(sizes, count, voxels, scratch, new_label, stream);
}

} // namespace vlccl
