/* CUDA component statistics: the GPU half of src/stats/stats_cpu.c, filling the same sums.
 *
 * Pass: a block walks a z-range of a tile of rows, staging each slice of labels in shared memory once; one
 * warp per row, lanes taking every 32nd voxel. A lane accumulates, in registers, the voxels of one label
 * until another label appears (background gaps do not interrupt it), then flushes them with atomics. At the
 * row's end, lanes holding the same label (__match_any_sync) reduce their sums by shuffles and only the
 * lowest lane issues the atomics. A giant component therefore costs one set of atomics per row, not per
 * voxel, and singletons one set each, as on the CPU.
 *
 * Integer sums are exact (64-bit); intensity sums are doubles, exact and so order-independent for integer
 * HU below 2^53 (docs/csv.md states the tolerance for F32 intensities).
 *
 * Median: foreground voxels become keys (label above the value's rank in the foreground's range, 32 bits
 * when they fit), CUB radix-sorts them, and component k's median is read at its offset (exclusive scan of
 * the voxel counts) + n/2. */
#include <cuda_runtime.h>

#include <cuda_pipeline.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <type_traits>
#include <climits>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/gpu_transfer.h"
#include "stats/stats_gpu.h"
#include "core/cuda_check.h"
#include "voxlabel/error.h"

namespace {

constexpr int kDirections = VL_STATS_DIRECTIONS;

/* Same numbering as vl_stats_direction (src/stats/stats_common.c): d and -d share a class. */
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
    unsigned long long *pairs;          /* [13][count]: voxel pairs (p, p + d) of the label, d in the class */
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

/* The run a lane is accumulating: one label, the lane's voxels (every 32nd) of one row segment. */
template <bool Full>
struct Run {
    uint32_t label;
    uint32_t voxels;
    uint32_t x_first, x_last;
    unsigned long long sum_x, sum_xx;
    double sum, sum_squares, weighted_x;
    double low, high; /* compared as the CPU does, so NaN never enters either */
    uint32_t border;
    uint32_t pairs[Full ? kDirections : 1];

    __device__ void start(uint32_t a)
    {
        label = a;
        voxels = 0;
        x_first = 0xffffffffu;
        x_last = 0;
        sum_x = sum_xx = 0;
        sum = sum_squares = weighted_x = 0;
        low = INFINITY;
        high = -INFINITY;
        border = 0;
#pragma unroll
        for (int c = 0; c < (Full ? kDirections : 1); c++)
            pairs[c] = 0;
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
        atomicMin(&s.intensity_min[k], order_key(run.low));
        atomicMax(&s.intensity_max[k], order_key(run.high));
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
#pragma unroll
        for (int c = 0; c < (Full ? kDirections : 1); c++)
            if (run.pairs[c])
                atomicAdd(&s.pairs[(size_t)c * count + k], (unsigned long long)run.pairs[c]);
    }
}

/* Another lane's run: `pick` moves one field (a shuffle by source lane or by xor). Only the fields the
 * pass keeps are moved. */
template <bool Full, bool HasIntensity, typename Pick>
__device__ __forceinline__ Run<Full> run_from(const Run<Full> &run, Pick pick)
{
    Run<Full> other;
    other.voxels = pick(run.voxels);
    other.x_first = pick(run.x_first);
    other.x_last = pick(run.x_last);
    other.sum_x = pick(run.sum_x);
    if constexpr (HasIntensity) {
        other.sum = pick(run.sum);
        other.sum_squares = pick(run.sum_squares);
        other.weighted_x = pick(run.weighted_x);
        other.low = pick(run.low);
        other.high = pick(run.high);
    }
    if constexpr (Full) {
        other.sum_xx = pick(run.sum_xx);
        other.border = pick(run.border);
#pragma unroll
        for (int c = 0; c < kDirections; c++)
            other.pairs[c] = pick(run.pairs[c]);
    }
    return other;
}

/* run += other, over the fields the pass keeps (the label is the caller's business). */
template <bool Full, bool HasIntensity>
__device__ __forceinline__ void absorb(Run<Full> &run, const Run<Full> &other)
{
    run.voxels += other.voxels;
    run.x_first = min(run.x_first, other.x_first);
    run.x_last = max(run.x_last, other.x_last);
    run.sum_x += other.sum_x;
    if constexpr (HasIntensity) {
        run.sum += other.sum;
        run.sum_squares += other.sum_squares;
        run.weighted_x += other.weighted_x;
        run.low = other.low < run.low ? other.low : run.low;
        run.high = other.high > run.high ? other.high : run.high;
    }
    if constexpr (Full) {
        run.sum_xx += other.sum_xx;
        run.border += other.border;
#pragma unroll
        for (int c = 0; c < kDirections; c++)
            run.pairs[c] += other.pairs[c];
    }
}

/* Combines the runs of the lanes in `group` (same label) into the lowest lane's run. */
template <bool Full, bool HasIntensity>
__device__ void reduce_group(Run<Full> &run, unsigned group)
{
    const int leader = __ffs(group) - 1;
    unsigned others = group & ~(1u << leader);
    while (others) {
        const int from = __ffs(others) - 1;
        others &= others - 1;
        const Run<Full> other =
            run_from<Full, HasIntensity>(run, [&](auto field) { return __shfl_sync(group, field, from); });
        if ((int)(threadIdx.x & 31) == leader)
            absorb<Full, HasIntensity>(run, other);
    }
}

/* The whole warp's runs summed into every lane, for rows where one label holds every run: lanes without a
 * run hold the identity of every field, so they may take part. Five shuffle rounds instead of one round per
 * lane of the group. */
template <bool Full, bool HasIntensity>
__device__ void reduce_warp(Run<Full> &run)
{
#pragma unroll
    for (int offset = 16; offset; offset /= 2)
        absorb<Full, HasIntensity>(
            run, run_from<Full, HasIntensity>(run, [&](auto field) { return __shfl_xor_sync(0xffffffffu, field, offset); }));
}

struct PassParameters {
    const uint32_t *labels;
    const void *intensity;
    long long nx, ny, nz;
    uint32_t count;
    DeviceSums sums;
    unsigned long long *first_bad; /* smallest voxel index whose label exceeds count */
    unsigned char *key_tiles;      /* NULL, or one flag per kKeyTile voxels: the tile holds foreground */
};

/* A block walks kTileZ slices of a tile of kTileY rows by kTileX voxels (a CT slice's width, so a row's
 * runs meet in one warp), one warp per row. Each slice's labels, with a one-voxel margin (zero outside the
 * volume), are staged in shared memory once and read there by the rows of this slice and of the slice
 * before: a voxel compares itself with its 13 forward neighbours only, since the crossings in a direction
 * class follow from the pairs of equal labels (see DeviceSums::pairs), and outside voxels, being 0, never
 * equal a label. Slices go through a ring of three: slice z + 2 is copied in (cp.async) while z is summed. */
constexpr int kTileX = 512, kTileY = 8, kTileZ = 8, kRing = 3;
constexpr int kPitch = kTileX + 2, kBandRows = kTileY + 2;
constexpr size_t kStagedBytes = sizeof(uint32_t) * kRing * kBandRows * kPitch;
constexpr int kKeyTile = 4096; /* voxels per block of extract_keys */

/* Starts copying slice z of the tile into `band` and commits the copies as one batch (empty past z_last). */
__device__ void stage_slice(uint32_t (*band)[kPitch], const PassParameters &p, long long x0, long long y0,
                            long long z, long long z_last)
{
    if (z <= z_last)
        for (int i = threadIdx.x; i < kBandRows * kPitch; i += blockDim.x) {
            const int r = i / kPitch, c = i % kPitch;
            const long long x = x0 + c - 1, y = y0 + r - 1;
            if (z < p.nz && x >= 0 && x < p.nx && y >= 0 && y < p.ny)
                __pipeline_memcpy_async(&band[r][c], &p.labels[x + p.nx * (y + p.ny * z)], sizeof(uint32_t));
            else
                band[r][c] = 0;
        }
    __pipeline_commit();
}

/* One forward neighbour (DX, DY, DZ) of the voxel at column c of row r, read from the slice that holds it:
 * an equal label is one more pair of its direction class (a compile-time index, so the run stays in
 * registers). */
template <int DX, int DY, int DZ>
__device__ inline void count_pair(uint32_t (&pairs)[kDirections], const uint32_t (*slice)[kPitch], int r, int c,
                                  uint32_t a)
{
    constexpr int direction = direction_class(DX, DY, DZ);
    pairs[direction] += slice[r + DY][c + DX] == a;
}

/* Row y of slice z, voxels x0 .. x0 + kTileX - 1: `here` holds slice z, `next` slice z + 1, row r = y - y0 + 1. */
template <typename Value, bool Full, bool HasIntensity>
__device__ void row_sums(const PassParameters &p, const uint32_t (*here)[kPitch], const uint32_t (*next)[kPitch],
                         int r, long long x0, long long y, long long z)
{
    const int lane = threadIdx.x & 31;
    uint32_t any = 0;
    for (int c = lane + 1; c <= kTileX; c += 32)
        any |= here[r][c];
    if (!__any_sync(0xffffffffu, any != 0))
        return;
    const long long row_start = p.nx * (y + p.ny * z);
    if (p.key_tiles && lane < 2)
        p.key_tiles[(row_start + min(x0 + lane * (kTileX - 1), p.nx - 1)) / kKeyTile] = 1;
    const Value *intensity = static_cast<const Value *>(p.intensity);
    const bool border_row = y == 0 || y == p.ny - 1 || z == 0 || z == p.nz - 1;
    Run<Full> run;
    run.start(0);
    /* Lanes take every 32nd voxel, so every shared-memory read of the warp is conflict-free; every sum is
     * additive and min/max order-free, so the split does not matter. */
#pragma unroll 2
    for (int c = lane + 1; c <= kTileX; c += 32) {
        uint32_t a = here[r][c];
        const long long x = x0 + c - 1;
        if (a > p.count) {
            atomicMin(p.first_bad, (unsigned long long)(row_start + x));
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
            const double value = (double)intensity[row_start + x];
            run.sum += value;
            run.sum_squares += value * value;
            run.weighted_x += value * (double)x;
            run.low = value < run.low ? value : run.low;
            run.high = value > run.high ? value : run.high;
        }
        if constexpr (Full) {
            run.sum_xx += (unsigned long long)x * (unsigned long long)x;
            run.border += border_row || x == 0 || x == p.nx - 1;
            count_pair<1, 0, 0>(run.pairs, here, r, c, a);
            count_pair<-1, 1, 0>(run.pairs, here, r, c, a);
            count_pair<0, 1, 0>(run.pairs, here, r, c, a);
            count_pair<1, 1, 0>(run.pairs, here, r, c, a);
            count_pair<-1, -1, 1>(run.pairs, next, r, c, a);
            count_pair<0, -1, 1>(run.pairs, next, r, c, a);
            count_pair<1, -1, 1>(run.pairs, next, r, c, a);
            count_pair<-1, 0, 1>(run.pairs, next, r, c, a);
            count_pair<0, 0, 1>(run.pairs, next, r, c, a);
            count_pair<1, 0, 1>(run.pairs, next, r, c, a);
            count_pair<-1, 1, 1>(run.pairs, next, r, c, a);
            count_pair<0, 1, 1>(run.pairs, next, r, c, a);
            count_pair<1, 1, 1>(run.pairs, next, r, c, a);
        }
    }
    /* Lanes still holding the same label (a component spanning the row) combine before one flush. */
    const unsigned with_run = __ballot_sync(0xffffffffu, run.label != 0);
    const uint32_t first_label = with_run ? __shfl_sync(0xffffffffu, run.label, __ffs(with_run) - 1) : 0;
    if (__all_sync(0xffffffffu, run.label == 0 || run.label == first_label)) {
        reduce_warp<Full, HasIntensity>(run);
        run.label = first_label;
        if (lane == 0)
            flush<Full, HasIntensity>(run, p.count, y, z, p.sums);
        return;
    }
    const unsigned group = __match_any_sync(0xffffffffu, run.label);
    reduce_group<Full, HasIntensity>(run, group);
    if (lane == __ffs(group) - 1)
        flush<Full, HasIntensity>(run, p.count, y, z, p.sums);
}

template <typename Value, bool Full, bool HasIntensity>
__global__ void __launch_bounds__(kTileY * 32, 3) stats_pass(PassParameters p)
{
    extern __shared__ uint32_t staged[];
    uint32_t(*ring)[kBandRows][kPitch] = reinterpret_cast<uint32_t(*)[kBandRows][kPitch]>(staged);
    const long long tiles_x = (p.nx + kTileX - 1) / kTileX, tiles_y = (p.ny + kTileY - 1) / kTileY;
    const long long x0 = (long long)(blockIdx.x % tiles_x) * kTileX;
    const long long y0 = (long long)(blockIdx.x / tiles_x % tiles_y) * kTileY;
    const long long z0 = (long long)(blockIdx.x / tiles_x / tiles_y) * kTileZ;
    const long long z_end = min(z0 + kTileZ, p.nz);
    const int r = threadIdx.x / 32 + 1;
    const long long y = y0 + r - 1;
    /* Slices z0 .. z_end are read: the last one only as the neighbours of z_end - 1. */
    stage_slice(ring[0], p, x0, y0, z0, z_end);
    stage_slice(ring[1], p, x0, y0, z0 + 1, z_end);
    for (long long z = z0; z < z_end; z++) {
        const int current = (int)((z - z0) % kRing);
        stage_slice(ring[(current + 2) % kRing], p, x0, y0, z + 2, z_end);
        __pipeline_wait_prior(1); /* this thread's copies of slices z and z + 1 have landed */
        __syncthreads();          /* and everyone's */
        if (y < p.ny)
            row_sums<Value, Full, HasIntensity>(p, ring[current], ring[(current + 1) % kRing], r, x0, y, z);
        __syncthreads(); /* slice z's buffer takes slice z + 3 next */
    }
}

/* Median keys: the component's label above the value's rank in the foreground's range of values,
 * [low, low + 2^value_bits). Both fit 32 bits on CT (18 label bits for 171 k components, 12 bits for the
 * HU above a threshold), which halves the bytes of every sort pass against 64-bit keys, the fallback. */
template <typename Value>
__host__ __device__ inline uint32_t value_key(Value v)
{
    return (uint32_t)v;
}
template <> __host__ __device__ inline uint32_t value_key<int16_t>(int16_t v) { return (uint32_t)(v + 32768); }
template <> __host__ __device__ inline uint32_t value_key<float>(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return (bits >> 31) ? ~bits : (bits | 0x80000000u);
}

template <typename Value>
__host__ __device__ inline double key_value(uint32_t key)
{
    return (double)key;
}
template <> __host__ __device__ inline double key_value<int16_t>(uint32_t key) { return (double)key - 32768.0; }
template <> __host__ __device__ inline double key_value<float>(uint32_t key)
{
    const uint32_t bits = (key >> 31) ? (key & 0x7fffffffu) : ~key;
    float value;
    memcpy(&value, &bits, sizeof value);
    return (double)value;
}

struct KeyLayout {
    uint32_t low;   /* value key of the smallest foreground value */
    int value_bits; /* bits of (largest - smallest) value key */
};

constexpr int kKeyThreads = 256, kKeyItems = kKeyTile / kKeyThreads;

/* Block-aggregated compaction: one atomic per block of kKeyTile voxels, not one per voxel; tiles the pass
 * saw no foreground in are skipped without reading them. */
template <typename Value, typename Key>
__global__ void __launch_bounds__(kKeyThreads) extract_keys(const uint32_t *labels, const Value *intensity,
                                                            long long voxels, const unsigned char *key_tiles,
                                                            KeyLayout layout, Key *keys, unsigned long long *written)
{
    if (!key_tiles[blockIdx.x])
        return;
    using Scan = cub::BlockScan<int, kKeyThreads>;
    __shared__ typename Scan::TempStorage scan_storage;
    __shared__ unsigned long long base;
    const long long tile = (long long)blockIdx.x * kKeyTile;
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
            keys[at++] = ((Key)label[i] << layout.value_bits) | (Key)(value_key<Value>(intensity[index]) - layout.low);
        }
}

template <typename Value, typename Key>
__global__ void select_medians(const Key *sorted, const unsigned long long *offsets, const unsigned long long *voxels,
                               uint32_t count, KeyLayout layout, double *medians)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count)
        return;
    const unsigned long long n = voxels[k];
    if (!n) {
        medians[k] = NAN;
        return;
    }
    const Key mask = ((Key)1 << layout.value_bits) - 1;
    const Key *segment = sorted + offsets[k];
    const double high = key_value<Value>((uint32_t)(segment[n / 2] & mask) + layout.low);
    if (n % 2) {
        medians[k] = high;
        return;
    }
    const double low = key_value<Value>((uint32_t)(segment[n / 2 - 1] & mask) + layout.low);
    medians[k] = low + (high - low) / 2; /* the CPU's formula, so integer HU give identical medians */
}

/* What the median needs to size and lay out its keys: [0] the foreground voxels, [1] the largest
 * component maximum's order key, [2] the complement of the smallest minimum's (so that all three start at 0). */
struct Larger {
    __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return max(a, b); }
};

__global__ void median_extent(const unsigned long long *voxels, const unsigned long long *key_min,
                              const unsigned long long *key_max, uint32_t count, unsigned long long *extent)
{
    using Reduce = cub::BlockReduce<unsigned long long, 256>;
    __shared__ typename Reduce::TempStorage storage[3];
    unsigned long long total = 0, high = 0, low_complement = 0;
    for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x) {
        total += voxels[k];
        high = max(high, key_max[k]);
        low_complement = max(low_complement, ~key_min[k]);
    }
    total = Reduce(storage[0]).Sum(total);
    high = Reduce(storage[1]).Reduce(high, Larger());
    low_complement = Reduce(storage[2]).Reduce(low_complement, Larger());
    if (threadIdx.x == 0) {
        atomicAdd(&extent[0], total);
        atomicMax(&extent[1], high);
        atomicMax(&extent[2], low_complement);
    }
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



inline size_t aligned(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

/* Exact medians: keys of every foreground voxel, radix-sorted, read at each component's offset + n/2. */
template <typename Value, typename Key>
cudaError_t sorted_medians(const uint32_t *labels, const Value *intensity, long long voxels, uint32_t count,
                           const DeviceSums &sums, const unsigned char *key_tiles, unsigned long long total,
                           KeyLayout layout, int end_bit, double *device_medians, DeviceBuffers &buffers)
{
    size_t sort_bytes = 0, scan_bytes = 0;
    cub::DoubleBuffer<Key> sorted(nullptr, nullptr);
    unsigned long long *offsets = nullptr;
    cudaError_t error = cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, sorted, (int)total, 0, end_bit);
    if (error == cudaSuccess)
        error = cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, sums.voxels, offsets, (int)count);
    /* One allocation for the lot, so the median pays for one cudaMalloc, not four. */
    const size_t key_bytes = aligned(sizeof(Key) * total), offset_bytes = aligned(sizeof(unsigned long long) * count),
                 counter_bytes = aligned(sizeof(unsigned long long));
    char *memory = nullptr;
    if (error == cudaSuccess)
        error = buffers.allocate((void **)&memory, 2 * key_bytes + offset_bytes + counter_bytes +
                                                       std::max(sort_bytes, scan_bytes));
    if (error != cudaSuccess)
        return error;
    sorted = cub::DoubleBuffer<Key>((Key *)memory, (Key *)(memory + key_bytes));
    offsets = (unsigned long long *)(memory + 2 * key_bytes);
    unsigned long long *written = (unsigned long long *)(memory + 2 * key_bytes + offset_bytes);
    void *temp = memory + 2 * key_bytes + offset_bytes + counter_bytes;
    cudaMemsetAsync(written, 0, sizeof *written);
    extract_keys<Value, Key><<<(unsigned)((voxels + kKeyTile - 1) / kKeyTile), kKeyThreads>>>(
        labels, intensity, voxels, key_tiles, layout, sorted.Current(), written);
    error = cub::DeviceRadixSort::SortKeys(temp, sort_bytes, sorted, (int)total, 0, end_bit);
    if (error == cudaSuccess)
        error = cub::DeviceScan::ExclusiveSum(temp, scan_bytes, sums.voxels, offsets, (int)count);
    if (error == cudaSuccess) {
        select_medians<Value, Key><<<(count + 255) / 256, 256>>>(sorted.Current(), offsets, sums.voxels, count,
                                                                 layout, device_medians);
        error = cudaGetLastError();
    }
    return error;
}

template <typename Value>
vl_status run_pass_and_median(const uint32_t *labels, const void *intensity, long long nx, long long ny, long long nz,
                              uint32_t count, bool full, const DeviceSums &sums, unsigned long long *first_bad,
                              double *device_medians, DeviceBuffers &buffers, vl_stats_gpu_timing *timing)
{
    const bool has_intensity = intensity != nullptr;
    const long long voxels = nx * ny * nz;
    unsigned char *key_tiles = nullptr;
    unsigned long long *extent = nullptr;
    if (device_medians) {
        VL_CUDA_TRY(buffers.allocate((void **)&key_tiles, (size_t)((voxels + kKeyTile - 1) / kKeyTile)),
                       "allocating the median");
        VL_CUDA_TRY(buffers.allocate((void **)&extent, 3 * sizeof(unsigned long long)), "allocating the median");
        VL_CUDA_TRY(cudaMemset(key_tiles, 0, (size_t)((voxels + kKeyTile - 1) / kKeyTile)), "initialising the median");
        VL_CUDA_TRY(cudaMemset(extent, 0, 3 * sizeof(unsigned long long)), "initialising the median");
    }
    PassParameters p{labels, intensity, nx, ny, nz, count, sums, first_bad, key_tiles};
    const long long blocks =
        (nx + kTileX - 1) / kTileX * ((ny + kTileY - 1) / kTileY) * ((nz + kTileZ - 1) / kTileZ);
    if (blocks > INT_MAX)
        return vl_fail(VL_ERR_ARGUMENT, "gpu statistics: %lld x %lld x %lld voxels need more than 2^31 blocks", nx, ny,
                       nz);
    auto pass = full ? (has_intensity ? stats_pass<Value, true, true> : stats_pass<Value, true, false>)
                     : (has_intensity ? stats_pass<Value, false, true> : stats_pass<Value, false, false>);
    VL_CUDA_TRY(cudaFuncSetAttribute(pass, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kStagedBytes),
                   "configuring the statistics pass");
    cudaEvent_t marks[3];
    for (auto &mark : marks)
        cudaEventCreate(&mark);
    cudaEventRecord(marks[0]);
    pass<<<(unsigned)blocks, kTileY * 32, kStagedBytes>>>(p);
    cudaEventRecord(marks[1]);
    cudaError_t error = cudaGetLastError();
    vl_status status = VL_OK;
    if (error != cudaSuccess)
        status = vl_cuda_failure(error, "statistics pass");
    if (status == VL_OK && device_medians) {
        unsigned long long range[3] = {0, 0, 0};
        median_extent<<<64, 256>>>(sums.voxels, sums.intensity_min, sums.intensity_max, count, extent);
        error = cudaMemcpy(range, extent, sizeof range, cudaMemcpyDeviceToHost);
        const unsigned long long total = range[0];
        if (error == cudaSuccess && total > (unsigned long long)INT_MAX) {
            status = vl_fail(VL_ERR_ARGUMENT, "gpu statistics: %llu foreground voxels exceed the GPU median's limit "
                                              "of 2^31 (use --device cpu)", total);
        } else if (error == cudaSuccess) {
            /* The extent holds order keys of doubles; back to the value type's own keys. Floats keep all 32
             * bits: a NaN lies outside [min, max] and must not spill into the label's bits. */
            KeyLayout layout{0, 32};
            if (!std::is_same<Value, float>::value && total) {
                layout.low = value_key<Value>((Value)order_value(~range[2]));
                const uint32_t high = value_key<Value>((Value)order_value(range[1]));
                layout.value_bits = 0;
                while (layout.value_bits < 32 && ((high - layout.low) >> layout.value_bits))
                    layout.value_bits++;
            }
            int label_bits = 1;
            while (label_bits < 32 && ((unsigned long long)count >> label_bits))
                label_bits++;
            const int end_bit = layout.value_bits + label_bits;
            const Value *values = static_cast<const Value *>(intensity);
            error = end_bit <= 32
                        ? sorted_medians<Value, uint32_t>(labels, values, voxels, count, sums, key_tiles, total,
                                                          layout, end_bit, device_medians, buffers)
                        : sorted_medians<Value, unsigned long long>(labels, values, voxels, count, sums, key_tiles,
                                                                    total, layout, end_bit, device_medians, buffers);
        }
        cudaEventRecord(marks[2]);
        if (status == VL_OK && error != cudaSuccess)
            status = vl_cuda_failure(error, "median");
    }
    if (status == VL_OK) {
        error = cudaEventSynchronize(device_medians ? marks[2] : marks[1]);
        if (error != cudaSuccess)
            status = vl_cuda_failure(error, "statistics pass");
    }
    if (status == VL_OK && timing) {
        cudaEventElapsedTime(&timing->pass_ms, marks[0], marks[1]);
        timing->median_ms = 0;
        if (device_medians)
            cudaEventElapsedTime(&timing->median_ms, marks[1], marks[2]);
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
    VL_CUDA_TRY(buffers.allocate((void **)&block, sizeof(unsigned long long) * (min_words + zero_words)),
                   "allocating the sums");
    VL_CUDA_TRY(buffers.allocate((void **)&first_bad, sizeof(unsigned long long)), "allocating the sums");
    if (medians && intensity && full)
        VL_CUDA_TRY(buffers.allocate((void **)&device_medians, sizeof(double) * n), "allocating the medians");
    VL_CUDA_TRY(cudaMemset(block, 0xff, sizeof(unsigned long long) * min_words), "initialising the sums");
    VL_CUDA_TRY(cudaMemset(block + min_words, 0, sizeof(unsigned long long) * zero_words), "initialising the sums");
    VL_CUDA_TRY(cudaMemset(first_bad, 0xff, sizeof(unsigned long long)), "initialising the sums");
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
        s.pairs = at, at += kDirections * n;
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
    VL_CUDA_TRY(cudaMemcpy(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost), "reading the sums");
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
    cudaError_t error = vl_gpu_download(host, block, sizeof(unsigned long long) * words);
    if (error == cudaSuccess && device_medians)
        error = vl_gpu_download(medians, device_medians, sizeof(double) * n);
    if (error != cudaSuccess) {
        free(host);
        return vl_cuda_failure(error, "reading the sums");
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
                                 *pairs = on_host(s.pairs);
        for (size_t k = 0; k < n; k++) {
            vl_stats_shape_sums *out = &shape[k];
            for (int m = 0; m < 6; m++)
                out->moment_sum[m] = moment[m * n + k];
            out->border_voxels = border[k];
            /* Each voxel has two neighbours per class; those of its own label are twice the class's pairs. */
            for (int c = 0; c < kDirections; c++)
                out->crossings[c] = 2 * (voxels[k] - pairs[c * n + k]);
        }
    }
    free(host);
    return VL_OK;
}

extern "C" vl_status vl_stats_sums_gpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                       const vl_stats_options *options, vl_stats_sums *sums, vl_stats_shape_sums *shape,
                                       double *medians, int64_t *euler, vl_stats_gpu_timing *timing)
{
    VL_CUDA_TRY(cudaSetDevice(options->device.gpu_index), "selecting the device");
    const long long voxels = vl_volume_voxels(labels);
    DeviceBuffers buffers;
    uint32_t *device_labels = nullptr;
    void *device_raw = nullptr, *device_intensity = nullptr;
    cudaEvent_t marks[2];
    cudaEventCreate(&marks[0]);
    cudaEventCreate(&marks[1]);
    cudaEventRecord(marks[0]);
    VL_CUDA_TRY(buffers.allocate((void **)&device_labels, sizeof(uint32_t) * voxels), "allocating the labels");
    if (labels->dtype == VL_U32) {
        VL_CUDA_TRY(vl_gpu_upload(device_labels, labels->data, sizeof(uint32_t) * voxels), "uploading the labels");
    } else {
        const size_t bytes = vl_dtype_size(labels->dtype) * voxels;
        VL_CUDA_TRY(buffers.allocate(&device_raw, bytes), "allocating the labels");
        VL_CUDA_TRY(vl_gpu_upload(device_raw, labels->data, bytes), "uploading the labels");
        if (labels->dtype == VL_U8)
            widen_labels_u8<<<1024, 256>>>((const uint8_t *)device_raw, device_labels, voxels);
        else
            widen_labels_u16<<<1024, 256>>>((const uint16_t *)device_raw, device_labels, voxels);
        VL_CUDA_TRY(cudaGetLastError(), "widening the labels");
    }
    if (intensity) {
        const size_t bytes = vl_dtype_size(intensity->dtype) * voxels;
        VL_CUDA_TRY(buffers.allocate(&device_intensity, bytes), "allocating the intensity");
        VL_CUDA_TRY(vl_gpu_upload(device_intensity, intensity->data, bytes), "uploading the intensity");
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
    if (status == VL_OK && euler)
        status = vl_stats_euler_gpu_device(device_labels, labels->nx, labels->ny, labels->nz, count,
                                           options->connectivity, euler);
    return status;
}
