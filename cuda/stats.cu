/* CUDA component statistics: the GPU half of src/stats_cpu.c, filling the same sums.
 *
 * Pass: one warp per row of x. Each lane walks a contiguous segment of the row and accumulates, in registers,
 * the voxels of one label until another label appears (background gaps do not interrupt it); then it flushes
 * them with atomics. Every
 * lane's last run (which may continue into the next lane's segment) is combined across the warp first:
 * lanes holding the same label (__match_any_sync) reduce their sums by shuffles and only the lowest lane
 * issues the atomics. A giant component therefore costs one set of atomics per row, not per voxel or per
 * segment, and singletons cost one set each, as on the CPU.
 *
 * Integer sums are exact (64-bit); intensity sums are doubles, exact and so order-independent for integer
 * HU below 2^53 (docs/csv.md states the tolerance for F32 intensities).
 *
 * Median: foreground voxels become 64-bit keys (label << bits | order-preserving value), CUB radix-sorts
 * them, and component k's median is read at its offset (exclusive scan of the voxel counts) + n/2. */
#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <climits>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats_gpu.h"
#include "status.h"

namespace {

constexpr int kDirections = VL_STATS_DIRECTIONS;

/* Same numbering as vl_stats_direction (src/stats_common.c): d and -d share a class. */
__host__ __device__ constexpr int direction_class(int dx, int dy, int dz)
{
    return (dx < 0 || (dx == 0 && (dy < 0 || (dy == 0 && dz < 0)))) ? direction_class(-dx, -dy, -dz)
           : (dy == 0 && dz == 0)                                   ? 0
           : (dx == 0 && dz == 0)                                   ? 1
           : (dx == 0 && dy == 0)                                   ? 2
           : (dz == 0)                                              ? (dy == 1 ? 3 : 4)
           : (dy == 0)                                              ? (dz == 1 ? 5 : 6)
           : (dx == 0)                                              ? (dz == 1 ? 7 : 8)
           : (dy == 1)                                              ? (dz == 1 ? 9 : 10)
                                                                    : (dz == 1 ? 11 : 12);
}

/* Device arrays, each of `count` entries (struct of arrays so that atomics of one field stay together). */
struct DeviceSums {
    unsigned long long *voxels;
    unsigned long long *coordinate_sum; /* [3][count] */
    unsigned long long *bbox_min;       /* [3][count], start at ~0 */
    unsigned long long *bbox_max;       /* [3][count], start at 0 */
    unsigned long long *intensity_min;  /* order keys, start at ~0 */
    unsigned long long *intensity_max;  /* order keys, start at 0 */
    double *intensity_sum, *intensity_sum_squares;
    double *weighted_sum;               /* [3][count] */
    unsigned long long *moment_sum;     /* [6][count] */
    unsigned long long *border;
    unsigned long long *crossings;      /* [13][count] */
};

/* Monotone map of doubles to unsigned 64-bit keys (so that atomicMin/Max order them like the values). */
__host__ __device__ inline unsigned long long order_key(double value)
{
    unsigned long long bits;
    memcpy(&bits, &value, sizeof bits);
    return (bits >> 63) ? ~bits : (bits | 0x8000000000000000ull);
}

inline double order_value(unsigned long long key)
{
    unsigned long long bits = (key >> 63) ? (key & 0x7fffffffffffffffull) : ~key;
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* The run a lane is accumulating: one label, the lane's voxels (every 32nd) of one row. */
template <bool Full>
struct Run {
    uint32_t label;
    uint32_t voxels;
    uint32_t x_first, x_last;
    unsigned long long sum_x, sum_xx;
    double sum, sum_squares, weighted_x;
    unsigned long long key_min, key_max;
    uint32_t border;
    uint32_t crossings[Full ? kDirections : 1];

    __device__ void start(uint32_t a)
    {
        label = a;
        voxels = 0;
        x_first = 0xffffffffu;
        x_last = 0;
        sum_x = sum_xx = 0;
        sum = sum_squares = weighted_x = 0;
        key_min = ~0ull;
        key_max = 0;
        border = 0;
        for (int c = 0; c < (Full ? kDirections : 1); c++)
            crossings[c] = 0;
    }
};

template <bool Full, bool HasIntensity>
__device__ void flush(const Run<Full> &run, uint32_t count, unsigned long long y, unsigned long long z,
                      const DeviceSums &s)
{
    if (run.label == 0)
        return;
    const size_t k = run.label - 1;
    const unsigned long long n = run.voxels;
    atomicAdd(&s.voxels[k], n);
    atomicAdd(&s.coordinate_sum[k], run.sum_x);
    atomicAdd(&s.coordinate_sum[count + k], n * y);
    atomicAdd(&s.coordinate_sum[2 * (size_t)count + k], n * z);
    atomicMin(&s.bbox_min[k], (unsigned long long)run.x_first);
    atomicMax(&s.bbox_max[k], (unsigned long long)run.x_last);
    atomicMin(&s.bbox_min[count + k], y);
    atomicMax(&s.bbox_max[count + k], y);
    atomicMin(&s.bbox_min[2 * (size_t)count + k], z);
    atomicMax(&s.bbox_max[2 * (size_t)count + k], z);
    if (HasIntensity) {
        atomicMin(&s.intensity_min[k], run.key_min);
        atomicMax(&s.intensity_max[k], run.key_max);
        atomicAdd(&s.intensity_sum[k], run.sum);
        atomicAdd(&s.intensity_sum_squares[k], run.sum_squares);
        atomicAdd(&s.weighted_sum[k], run.weighted_x);
        atomicAdd(&s.weighted_sum[count + k], run.sum * (double)y);
        atomicAdd(&s.weighted_sum[2 * (size_t)count + k], run.sum * (double)z);
    }
    if (Full) {
        atomicAdd(&s.moment_sum[k], run.sum_xx);
        atomicAdd(&s.moment_sum[count + k], n * y * y);
        atomicAdd(&s.moment_sum[2 * (size_t)count + k], n * z * z);
        atomicAdd(&s.moment_sum[3 * (size_t)count + k], run.sum_x * y);
        atomicAdd(&s.moment_sum[4 * (size_t)count + k], run.sum_x * z);
        atomicAdd(&s.moment_sum[5 * (size_t)count + k], n * y * z);
        if (run.border)
            atomicAdd(&s.border[k], (unsigned long long)run.border);
        for (int c = 0; c < (Full ? kDirections : 1); c++)
            if (run.crossings[c])
                atomicAdd(&s.crossings[(size_t)c * count + k], (unsigned long long)run.crossings[c]);
    }
}

/* Combines the runs of the lanes in `group` (same label) into the lowest lane's run. */
template <bool Full, bool HasIntensity>
__device__ void reduce_group(Run<Full> &run, unsigned group)
{
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(group) - 1;
    unsigned others = group & ~(1u << leader);
    while (others) {
        const int from = __ffs(others) - 1;
        others &= others - 1;
        const uint32_t voxels = __shfl_sync(group, run.voxels, from);
        const uint32_t x_first = __shfl_sync(group, run.x_first, from);
        const uint32_t x_last = __shfl_sync(group, run.x_last, from);
        const unsigned long long sum_x = __shfl_sync(group, run.sum_x, from);
        if (lane == leader) {
            run.voxels += voxels;
            run.x_first = min(run.x_first, x_first);
            run.x_last = max(run.x_last, x_last);
            run.sum_x += sum_x;
        }
        if (HasIntensity) {
            const double sum = __shfl_sync(group, run.sum, from);
            const double sum_squares = __shfl_sync(group, run.sum_squares, from);
            const double weighted_x = __shfl_sync(group, run.weighted_x, from);
            const unsigned long long key_min = __shfl_sync(group, run.key_min, from);
            const unsigned long long key_max = __shfl_sync(group, run.key_max, from);
            if (lane == leader) {
                run.sum += sum;
                run.sum_squares += sum_squares;
                run.weighted_x += weighted_x;
                run.key_min = min(run.key_min, key_min);
                run.key_max = max(run.key_max, key_max);
            }
        }
        if (Full) {
            const unsigned long long sum_xx = __shfl_sync(group, run.sum_xx, from);
            const uint32_t border = __shfl_sync(group, run.border, from);
            if (lane == leader) {
                run.sum_xx += sum_xx;
                run.border += border;
            }
            for (int c = 0; c < (Full ? kDirections : 1); c++) {
                const uint32_t crossings = __shfl_sync(group, run.crossings[c], from);
                if (lane == leader)
                    run.crossings[c] += crossings;
            }
        }
    }
}

struct PassParameters {
    const uint32_t *labels;
    const void *intensity;
    long long nx, ny, nz;
    uint32_t count;
    DeviceSums sums;
    unsigned long long *first_bad; /* smallest voxel index whose label exceeds count */
};

template <typename Value, bool Full, bool HasIntensity>
__global__ void __launch_bounds__(256) stats_pass(PassParameters p)
{
    const int lane = threadIdx.x & 31;
    const long long warps = (long long)gridDim.x * (blockDim.x / 32);
    const long long rows = p.ny * p.nz;
    const Value *intensity = static_cast<const Value *>(p.intensity);
    for (long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; row < rows; row += warps) {
        const long long y = row % p.ny, z = row / p.ny;
        const uint32_t *line = p.labels + row * p.nx;
        uint32_t any = 0;
        for (long long x = lane; x < p.nx; x += 32)
            any |= line[x];
        if (!__any_sync(0xffffffffu, any != 0))
            continue;
        const uint32_t *around[3][3];
        if (Full)
            for (int dz = -1; dz <= 1; dz++)
                for (int dy = -1; dy <= 1; dy++) {
                    const long long yy = y + dy, zz = z + dz;
                    around[dz + 1][dy + 1] =
                        (yy < 0 || yy >= p.ny || zz < 0 || zz >= p.nz) ? nullptr : p.labels + (yy + p.ny * zz) * p.nx;
                }
        const bool border_row = y == 0 || y == p.ny - 1 || z == 0 || z == p.nz - 1;
        Run<Full> run;
        run.start(0);
        /* Lanes take every 32nd voxel, so each load of the warp reads 32 neighbouring voxels (coalesced, also in
         * the neighbour rows); every sum is additive and min/max order-free, so the split does not matter. */
        for (long long x = lane; x < p.nx; x += 32) {
            uint32_t a = line[x];
            if (a > p.count) {
                atomicMin(p.first_bad, (unsigned long long)(row * p.nx + x));
                a = 0;
            }
            /* Background does not end a run: a lane keeps summing one label across gaps, so a noisy giant
             * component costs a flush only where another label interrupts it, not one per run of voxels. */
            if (!a)
                continue;
            if (a != run.label) {
                flush<Full, HasIntensity>(run, p.count, y, z, p.sums);
                run.start(a);
            }
            run.voxels++;
            run.x_first = min(run.x_first, (uint32_t)x);
            run.x_last = (uint32_t)x;
            run.sum_x += (unsigned long long)x;
            if (HasIntensity) {
                const double value = (double)intensity[row * p.nx + x];
                run.sum += value;
                run.sum_squares += value * value;
                run.weighted_x += value * (double)x;
                const unsigned long long key = order_key(value);
                run.key_min = min(run.key_min, key);
                run.key_max = max(run.key_max, key);
            }
            if (Full) {
                run.sum_xx += (unsigned long long)x * (unsigned long long)x;
                run.border += border_row || x == 0 || x == p.nx - 1;
                run.crossings[0] += (x == 0 || line[x - 1] != a) + (x + 1 >= p.nx || line[x + 1] != a);
#pragma unroll
                for (int dz = -1; dz <= 1; dz++)
#pragma unroll
                    for (int dy = -1; dy <= 1; dy++) {
                        if (!dz && !dy)
                            continue;
                        const uint32_t *other = around[dz + 1][dy + 1];
#pragma unroll
                        for (int dx = -1; dx <= 1; dx++) {
                            const long long xx = x + dx;
                            const bool foreign = !other || xx < 0 || xx >= p.nx || other[xx] != a;
                            run.crossings[direction_class(dx, dy, dz)] += foreign;
                        }
                    }
            }
        }
        /* Lanes still holding the same label (a component spanning the row) combine before one flush. */
        const unsigned group = __match_any_sync(0xffffffffu, run.label);
        reduce_group<Full, HasIntensity>(run, group);
        if (lane == __ffs(group) - 1)
            flush<Full, HasIntensity>(run, p.count, y, z, p.sums);
    }
}

/* Median keys: label in the high bits, the value's order key in the low `value_bits`. */
template <typename Value>
__device__ inline unsigned long long value_key(Value v);
template <> __device__ inline unsigned long long value_key<uint8_t>(uint8_t v) { return v; }
template <> __device__ inline unsigned long long value_key<uint16_t>(uint16_t v) { return v; }
template <> __device__ inline unsigned long long value_key<int16_t>(int16_t v) { return (unsigned)(v + 32768); }
template <> __device__ inline unsigned long long value_key<uint32_t>(uint32_t v) { return v; }
template <> __device__ inline unsigned long long value_key<float>(float v)
{
    const unsigned bits = __float_as_uint(v);
    return (bits >> 31) ? ~bits : (bits | 0x80000000u);
}

template <typename Value>
__host__ __device__ inline double key_value(unsigned long long key);
template <> __host__ __device__ inline double key_value<uint8_t>(unsigned long long key) { return (double)key; }
template <> __host__ __device__ inline double key_value<uint16_t>(unsigned long long key) { return (double)key; }
template <> __host__ __device__ inline double key_value<int16_t>(unsigned long long key) { return (double)key - 32768.0; }
template <> __host__ __device__ inline double key_value<uint32_t>(unsigned long long key) { return (double)key; }
template <> __host__ __device__ inline double key_value<float>(unsigned long long key)
{
    const unsigned k = (unsigned)key;
    const unsigned bits = (k >> 31) ? (k & 0x7fffffffu) : ~k;
    float value;
    memcpy(&value, &bits, sizeof value);
    return (double)value;
}

template <typename Value>
constexpr int value_bits()
{
    return sizeof(Value) <= 2 ? 16 : 32;
}

constexpr int kKeyThreads = 256, kKeyItems = 16;

/* Block-aggregated compaction: one atomic per block of 4096 voxels, not one per voxel. */
template <typename Value>
__global__ void __launch_bounds__(kKeyThreads) extract_keys(const uint32_t *labels, const Value *intensity,
                                                            long long voxels, unsigned long long *keys,
                                                            unsigned long long *written)
{
    using Scan = cub::BlockScan<int, kKeyThreads>;
    __shared__ typename Scan::TempStorage scan_storage;
    __shared__ unsigned long long base;
    const long long tile = (long long)blockIdx.x * kKeyThreads * kKeyItems;
    uint32_t label[kKeyItems];
    int mine = 0;
#pragma unroll
    for (int i = 0; i < kKeyItems; i++) {
        const long long index = tile + (long long)i * kKeyThreads + threadIdx.x;
        label[i] = index < voxels ? labels[index] : 0;
        mine += label[i] != 0;
    }
    int offset, total;
    Scan(scan_storage).ExclusiveSum(mine, offset, total);
    if (threadIdx.x == 0)
        base = total ? atomicAdd(written, (unsigned long long)total) : 0;
    __syncthreads();
    unsigned long long at = base + offset;
#pragma unroll
    for (int i = 0; i < kKeyItems; i++)
        if (label[i]) {
            const long long index = tile + (long long)i * kKeyThreads + threadIdx.x;
            keys[at++] = ((unsigned long long)label[i] << value_bits<Value>()) | value_key<Value>(intensity[index]);
        }
}

template <typename Value>
__global__ void select_medians(const unsigned long long *sorted, const unsigned long long *offsets,
                               const unsigned long long *voxels, uint32_t count, double *medians)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count)
        return;
    const unsigned long long n = voxels[k];
    if (!n) {
        medians[k] = NAN;
        return;
    }
    const unsigned long long mask = (1ull << value_bits<Value>()) - 1;
    const unsigned long long *segment = sorted + offsets[k];
    const double high = key_value<Value>(segment[n / 2] & mask);
    if (n % 2) {
        medians[k] = high;
        return;
    }
    const double low = key_value<Value>(segment[n / 2 - 1] & mask);
    medians[k] = low + (high - low) / 2; /* the CPU's formula, so integer HU give identical medians */
}

__global__ void widen_labels_u8(const uint8_t *in, uint32_t *out, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = in[i];
}

__global__ void widen_labels_u16(const uint16_t *in, uint32_t *out, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = in[i];
}

/* Releases every device buffer on scope exit, so each early return is clean. */
struct DeviceBuffers {
    void *pointers[16] = {};
    int used = 0;
    cudaError_t allocate(void **out, size_t bytes)
    {
        cudaError_t error = cudaMalloc(out, bytes ? bytes : 1);
        if (error == cudaSuccess)
            pointers[used++] = *out;
        return error;
    }
    ~DeviceBuffers()
    {
        for (int i = 0; i < used; i++)
            cudaFree(pointers[i]);
    }
};

vl_status cuda_failure(cudaError_t error, const char *what)
{
    cudaGetLastError();
    if (error == cudaErrorMemoryAllocation)
        return vl_fail(VL_ERR_MEMORY, "gpu statistics: %s: out of device memory", what);
    return vl_fail(VL_ERR_DEVICE, "gpu statistics: %s: %s", what, cudaGetErrorString(error));
}

#define STATS_CUDA_TRY(call, what)                   \
    do {                                             \
        cudaError_t error_ = (call);                 \
        if (error_ != cudaSuccess)                   \
            return cuda_failure(error_, what);       \
    } while (0)

template <typename Value>
vl_status run_pass_and_median(const uint32_t *labels, const void *intensity, long long nx, long long ny, long long nz,
                              uint32_t count, bool full, const DeviceSums &sums, unsigned long long *first_bad,
                              double *device_medians, DeviceBuffers &buffers, vl_stats_gpu_timing *timing)
{
    const bool has_intensity = intensity != nullptr;
    PassParameters p{labels, intensity, nx, ny, nz, count, sums, first_bad};
    int device = 0, processors = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device);
    const long long rows = ny * nz;
    const long long blocks = std::min<long long>((rows + 7) / 8, (long long)processors * 64);
    cudaEvent_t marks[4];
    for (auto &mark : marks)
        cudaEventCreate(&mark);
    cudaEventRecord(marks[0]);
    if (full && has_intensity)
        stats_pass<Value, true, true><<<(unsigned)blocks, 256>>>(p);
    else if (full)
        stats_pass<Value, true, false><<<(unsigned)blocks, 256>>>(p);
    else if (has_intensity)
        stats_pass<Value, false, true><<<(unsigned)blocks, 256>>>(p);
    else
        stats_pass<Value, false, false><<<(unsigned)blocks, 256>>>(p);
    cudaEventRecord(marks[1]);
    cudaError_t error = cudaGetLastError();
    vl_status status = VL_OK;
    if (error != cudaSuccess)
        status = cuda_failure(error, "statistics pass");
    if (status == VL_OK && device_medians) {
        /* Total foreground, to size the keys. */
        unsigned long long *total_device = nullptr, total = 0;
        size_t reduce_bytes = 0, scan_bytes = 0, sort_bytes = 0;
        void *temp = nullptr;
        unsigned long long *keys = nullptr, *keys_alternate = nullptr, *offsets = nullptr;
        error = buffers.allocate((void **)&total_device, sizeof(unsigned long long) * 2);
        if (error == cudaSuccess)
            error = cub::DeviceReduce::Sum(nullptr, reduce_bytes, sums.voxels, total_device, (int)count);
        if (error == cudaSuccess)
            error = cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, sums.voxels, offsets, (int)count);
        void *reduce_temp = nullptr;
        if (error == cudaSuccess)
            error = buffers.allocate(&reduce_temp, std::max(reduce_bytes, scan_bytes));
        if (error == cudaSuccess)
            error = cub::DeviceReduce::Sum(reduce_temp, reduce_bytes, sums.voxels, total_device, (int)count);
        if (error == cudaSuccess)
            error = cudaMemcpy(&total, total_device, sizeof total, cudaMemcpyDeviceToHost);
        if (error == cudaSuccess && total > (unsigned long long)INT_MAX) {
            status = vl_fail(VL_ERR_ARGUMENT, "gpu statistics: %llu foreground voxels exceed the GPU median's limit "
                                              "of 2^31 (use --device cpu)", total);
            for (auto &mark : marks)
                cudaEventDestroy(mark);
            return status;
        }
        if (error == cudaSuccess)
            error = buffers.allocate((void **)&keys, sizeof(unsigned long long) * total);
        if (error == cudaSuccess)
            error = buffers.allocate((void **)&keys_alternate, sizeof(unsigned long long) * total);
        if (error == cudaSuccess)
            error = buffers.allocate((void **)&offsets, sizeof(unsigned long long) * count);
        int label_bits = 1;
        while (label_bits < 32 && ((unsigned long long)count >> label_bits))
            label_bits++;
        const int end_bit = value_bits<Value>() + label_bits;
        cub::DoubleBuffer<unsigned long long> sorted(keys, keys_alternate);
        if (error == cudaSuccess)
            error = cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, sorted, (int)total, 0, end_bit);
        if (error == cudaSuccess)
            error = buffers.allocate(&temp, sort_bytes);
        cudaEventRecord(marks[2]);
        if (error == cudaSuccess) {
            cudaMemsetAsync(total_device + 1, 0, sizeof(unsigned long long));
            const long long voxels = nx * ny * nz;
            const long long tiles = (voxels + kKeyThreads * kKeyItems - 1) / (kKeyThreads * kKeyItems);
            extract_keys<Value><<<(unsigned)tiles, kKeyThreads>>>(labels, static_cast<const Value *>(intensity),
                                                                  voxels, keys, total_device + 1);
            error = cub::DeviceRadixSort::SortKeys(temp, sort_bytes, sorted, (int)total, 0, end_bit);
        }
        if (error == cudaSuccess)
            error = cub::DeviceScan::ExclusiveSum(reduce_temp, scan_bytes, sums.voxels, offsets, (int)count);
        if (error == cudaSuccess) {
            select_medians<Value><<<(count + 255) / 256, 256>>>(sorted.Current(), offsets, sums.voxels, count,
                                                                 device_medians);
            error = cudaGetLastError();
        }
        cudaEventRecord(marks[3]);
        if (error != cudaSuccess)
            status = cuda_failure(error, "median");
    }
    if (status == VL_OK) {
        error = cudaEventSynchronize(device_medians ? marks[3] : marks[1]);
        if (error != cudaSuccess)
            status = cuda_failure(error, "statistics pass");
    }
    if (status == VL_OK && timing) {
        cudaEventElapsedTime(&timing->pass_ms, marks[0], marks[1]);
        timing->median_ms = 0;
        if (device_medians)
            cudaEventElapsedTime(&timing->median_ms, marks[2], marks[3]);
    }
    for (auto &mark : marks)
        cudaEventDestroy(mark);
    return status;
}

} // namespace

extern "C" vl_status vl_stats_sums_gpu_device(const uint32_t *labels, const void *intensity, vl_dtype intensity_dtype,
                                              int64_t nx, int64_t ny, int64_t nz, uint32_t count, vl_stats_level level,
                                              vl_stats_sums *sums, vl_stats_shape_sums *shape, double *medians,
                                              vl_stats_gpu_timing *timing)
{
    if (count == 0)
        return VL_OK;
    const bool full = level == VL_STATS_FULL;
    const size_t n = count;
    /* Layout: the arrays that start at ~0 (minimum fields) first, so two memsets initialise everything. */
    const size_t min_words = 4 * n, zero_words = (1 + 3 + 3 + 1) * n + (2 + 3) * n + (full ? (6 + 1 + kDirections) * n : 0);
    DeviceBuffers buffers;
    unsigned long long *block = nullptr, *first_bad = nullptr;
    double *device_medians = nullptr;
    STATS_CUDA_TRY(buffers.allocate((void **)&block, sizeof(unsigned long long) * (min_words + zero_words)),
                   "allocating the sums");
    STATS_CUDA_TRY(buffers.allocate((void **)&first_bad, sizeof(unsigned long long)), "allocating the sums");
    if (medians && intensity && full)
        STATS_CUDA_TRY(buffers.allocate((void **)&device_medians, sizeof(double) * n), "allocating the medians");
    STATS_CUDA_TRY(cudaMemset(block, 0xff, sizeof(unsigned long long) * min_words), "initialising the sums");
    STATS_CUDA_TRY(cudaMemset(block + min_words, 0, sizeof(unsigned long long) * zero_words), "initialising the sums");
    STATS_CUDA_TRY(cudaMemset(first_bad, 0xff, sizeof(unsigned long long)), "initialising the sums");
    DeviceSums s{};
    unsigned long long *at = block;
    s.bbox_min = at, at += 3 * n;
    s.intensity_min = at, at += n;
    s.voxels = at, at += n;
    s.coordinate_sum = at, at += 3 * n;
    s.bbox_max = at, at += 3 * n;
    s.intensity_max = at, at += n;
    s.intensity_sum = (double *)at, at += n;
    s.intensity_sum_squares = (double *)at, at += n;
    s.weighted_sum = (double *)at, at += 3 * n;
    if (full) {
        s.moment_sum = at, at += 6 * n;
        s.border = at, at += n;
        s.crossings = at, at += kDirections * n;
    }
    vl_stats_gpu_timing local;
    vl_stats_gpu_timing *t = timing ? timing : &local;
    vl_status status;
    switch (intensity ? intensity_dtype : VL_I16) {
    case VL_U8:
        status = run_pass_and_median<uint8_t>(labels, intensity, nx, ny, nz, count, full, s, first_bad, device_medians,
                                              buffers, t);
        break;
    case VL_U16:
        status = run_pass_and_median<uint16_t>(labels, intensity, nx, ny, nz, count, full, s, first_bad,
                                               device_medians, buffers, t);
        break;
    case VL_U32:
        status = run_pass_and_median<uint32_t>(labels, intensity, nx, ny, nz, count, full, s, first_bad,
                                               device_medians, buffers, t);
        break;
    case VL_F32:
        status = run_pass_and_median<float>(labels, intensity, nx, ny, nz, count, full, s, first_bad, device_medians,
                                            buffers, t);
        break;
    default:
        status = run_pass_and_median<int16_t>(labels, intensity, nx, ny, nz, count, full, s, first_bad,
                                              device_medians, buffers, t);
        break;
    }
    if (status != VL_OK)
        return status;
    unsigned long long bad = 0;
    STATS_CUDA_TRY(cudaMemcpy(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost), "reading the sums");
    if (bad != ~0ull) {
        uint32_t value = 0;
        cudaMemcpy(&value, labels + bad, sizeof value, cudaMemcpyDeviceToHost);
        return vl_fail(VL_ERR_INPUT, "statistics: voxel %lld has label %u but the volume has only %u labels",
                       (long long)bad, value, count);
    }
    /* Download and reshape into the CPU's array-of-structs sums. */
    const size_t words = min_words + zero_words;
    unsigned long long *host = (unsigned long long *)malloc(sizeof(unsigned long long) * words);
    if (!host)
        return vl_fail(VL_ERR_MEMORY, "statistics: no host memory for %u components", count);
    cudaError_t error = cudaMemcpy(host, block, sizeof(unsigned long long) * words, cudaMemcpyDeviceToHost);
    if (error == cudaSuccess && device_medians)
        error = cudaMemcpy(medians, device_medians, sizeof(double) * n, cudaMemcpyDeviceToHost);
    if (error != cudaSuccess) {
        free(host);
        return cuda_failure(error, "reading the sums");
    }
    const ptrdiff_t shift = host - block;
    auto on_host = [shift](const void *device_pointer) {
        return (const unsigned long long *)device_pointer + shift;
    };
    const unsigned long long *voxels = on_host(s.voxels), *coordinate = on_host(s.coordinate_sum),
                             *low = on_host(s.bbox_min), *high = on_host(s.bbox_max), *key_min = on_host(s.intensity_min),
                             *key_max = on_host(s.intensity_max);
    const double *sum = (const double *)on_host(s.intensity_sum),
                 *squares = (const double *)on_host(s.intensity_sum_squares),
                 *weighted = (const double *)on_host(s.weighted_sum);
    vl_stats_sums_clear(sums, count);
    for (size_t k = 0; k < n; k++) {
        vl_stats_sums *out = &sums[k];
        out->voxels = voxels[k];
        if (!out->voxels)
            continue;
        for (int axis = 0; axis < 3; axis++) {
            out->coordinate_sum[axis] = coordinate[axis * n + k];
            out->bbox_min[axis] = (int64_t)low[axis * n + k];
            out->bbox_max[axis] = (int64_t)high[axis * n + k];
            out->weighted_coordinate_sum[axis] = weighted[axis * n + k];
        }
        if (intensity) {
            out->intensity_min = order_value(key_min[k]);
            out->intensity_max = order_value(key_max[k]);
            out->intensity_sum = sum[k];
            out->intensity_sum_squares = squares[k];
        }
    }
    if (full) {
        const unsigned long long *moment = on_host(s.moment_sum), *border = on_host(s.border),
                                 *crossings = on_host(s.crossings);
        for (size_t k = 0; k < n; k++) {
            vl_stats_shape_sums *out = &shape[k];
            for (int m = 0; m < 6; m++)
                out->moment_sum[m] = moment[m * n + k];
            out->border_voxels = border[k];
            for (int c = 0; c < kDirections; c++)
                out->crossings[c] = crossings[c * n + k];
        }
    }
    free(host);
    return VL_OK;
}

extern "C" vl_status vl_stats_sums_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                       const vl_stats_options *options, vl_stats_sums *sums, vl_stats_shape_sums *shape,
                                       double *medians, vl_stats_gpu_timing *timing)
{
    STATS_CUDA_TRY(cudaSetDevice(options->gpu_index), "selecting the device");
    const long long voxels = vl_volume_voxels(labels);
    DeviceBuffers buffers;
    uint32_t *device_labels = nullptr;
    void *device_raw = nullptr, *device_intensity = nullptr;
    cudaEvent_t marks[2];
    cudaEventCreate(&marks[0]);
    cudaEventCreate(&marks[1]);
    cudaEventRecord(marks[0]);
    STATS_CUDA_TRY(buffers.allocate((void **)&device_labels, sizeof(uint32_t) * voxels), "allocating the labels");
    if (labels->dtype == VL_U32) {
        STATS_CUDA_TRY(cudaMemcpy(device_labels, labels->data, sizeof(uint32_t) * voxels, cudaMemcpyHostToDevice),
                       "uploading the labels");
    } else {
        const size_t bytes = vl_dtype_size(labels->dtype) * voxels;
        STATS_CUDA_TRY(buffers.allocate(&device_raw, bytes), "allocating the labels");
        STATS_CUDA_TRY(cudaMemcpy(device_raw, labels->data, bytes, cudaMemcpyHostToDevice), "uploading the labels");
        if (labels->dtype == VL_U8)
            widen_labels_u8<<<1024, 256>>>((const uint8_t *)device_raw, device_labels, voxels);
        else
            widen_labels_u16<<<1024, 256>>>((const uint16_t *)device_raw, device_labels, voxels);
        STATS_CUDA_TRY(cudaGetLastError(), "widening the labels");
    }
    if (intensity) {
        const size_t bytes = vl_dtype_size(intensity->dtype) * voxels;
        STATS_CUDA_TRY(buffers.allocate(&device_intensity, bytes), "allocating the intensity");
        STATS_CUDA_TRY(cudaMemcpy(device_intensity, intensity->data, bytes, cudaMemcpyHostToDevice),
                       "uploading the intensity");
    }
    cudaEventRecord(marks[1]);
    cudaEventSynchronize(marks[1]);
    float upload_ms = 0;
    cudaEventElapsedTime(&upload_ms, marks[0], marks[1]);
    cudaEventDestroy(marks[0]);
    cudaEventDestroy(marks[1]);
    vl_status status = vl_stats_sums_gpu_device(device_labels, device_intensity, intensity ? intensity->dtype : VL_I16,
                                                labels->nx, labels->ny, labels->nz, count, options->level, sums,
                                                shape, medians, timing);
    if (timing)
        timing->transfer_ms = upload_ms;
    return status;
}
