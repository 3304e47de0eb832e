/* The CUDA labeller's driver: device buffers in (vl_gpu_label_device) and the host-volume entry
 * behind vl_label_volume (vl_label_volume_gpu), which labels in z-slabs (src/label/label_slabs.c) a volume
 * that the device memory or the node numbering cannot take at once. Phases: union-find (ccl_blocks.cu),
 * flatten + root bitmask, per-segment root counts -> CUB exclusive scan, labels + sizes
 * (ccl_relabel.cu), and for the `size` and `size-raster` orders a CUB sort (ccl_size_order.cu). Device memory beyond mask +
 * labels: two u32 per 128-voxel-pair segment, one bit per voxel pair (roots), one u32 per 32 voxel
 * pairs (the block list), and O(components) for sizes and the size order, all stream-ordered from the
 * labeller's pool (ccl_scratch_pool.cu), which keeps them for the next call. */
#include <cub/device/device_scan.cuh>

#include <stdlib.h>
#include <string.h>

#include "label/ccl_gpu.h"
#include "ccl_call_device.cuh"
#include "ccl_kernels.cuh"
#include "ccl_scratch_pool.cuh"
#include "ccl_size_order.cuh"
#include "core/gpu_transfer.h"
#include "label/label_gpu.h"
#include "label/label_slabs.h"
#include "core/cuda_check.h"
#include "voxlabel/error.h"

using namespace vlccl;

namespace {


Grid make_grid(int64_t nx, int64_t ny, int64_t nz, bool xy)
{
    Grid g;
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.sxy = nx * ny;
    g.n0 = (uint32_t)(xy ? nx : ny);
    g.n1 = (uint32_t)(xy ? ny : nx);
    g.h0 = (g.n0 + 1) / 2;
    g.nseg = (g.h0 + kSegment - 1) / kSegment;
    g.nodes = (uint32_t)((uint64_t)g.h0 * g.n1 * (uint64_t)nz);
    g.div_h0 = make_fastdiv(g.h0);
    g.div_n1 = make_fastdiv(g.n1);
    return g;
}

/* Device allocations of one labelling call, released in one place (back to the pool, stream-ordered). */
struct Scratch {
    cudaStream_t stream;
    void *blocks[4];
    int used;
    size_t bytes;
    vl_status allocate(void **out, size_t bytes_wanted, const char *what)
    {
        *out = nullptr;
        cudaError_t error = scratch_allocate(out, bytes_wanted ? bytes_wanted : 1, stream);
        if (error != cudaSuccess)
            return vl_cuda_failure(error, what);
        blocks[used++] = *out;
        bytes += bytes_wanted;
        return VL_OK;
    }
    void release()
    {
        for (int i = 0; i < used; i++)
            cudaFreeAsync(blocks[i], stream);
        used = 0;
    }
};

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* Rows (y) the launch grids reach: 65535 thread blocks of 8. */
constexpr int64_t kMaxRows = 65535 * 8;

} // namespace

extern "C" int vl_gpu_label_shape_ok(int64_t nx, int64_t ny, int64_t nz)
{
    if (nx < 1 || ny < 1 || nz < 1 || nx > 0x7FFFFFFF || ny > 0x7FFFFFFF || nz > 0x7FFFFFFF)
        return 0;
    /* Launch grids of at most 65535 thread blocks of 8 rows along y (every kernel loops over z), and
     * nodes below 2^32 in both orders. */
    if (ny > kMaxRows)
        return 0;
    uint64_t pairs_x = (uint64_t)(nx + 1) / 2 * (uint64_t)ny * (uint64_t)nz;
    uint64_t pairs_y = (uint64_t)(ny + 1) / 2 * (uint64_t)nx * (uint64_t)nz;
    uint64_t segments = ((uint64_t)(nx > ny ? nx : ny) / 2 / kSegment + 1) * (uint64_t)(nx > ny ? nx : ny) * nz;
    return pairs_x < kEmpty && pairs_y < kEmpty && segments < kEmpty;
}

extern "C" vl_status vl_gpu_label_device(const uint8_t *mask, uint32_t *labels, int64_t nx, int64_t ny, int64_t nz,
                                         int connectivity, vl_label_order order, void *stream_handle, int timed,
                                         vl_gpu_label_run *run)
{
    memset(run, 0, sizeof *run);
    if (!vl_connectivity_is_valid(connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "gpu: connectivity %d is not one of 4, 8, 6, 18, 26", connectivity);
    if (!vl_gpu_label_shape_ok(nx, ny, nz))
        return vl_fail(VL_ERR_DEVICE, "gpu: a %lldx%lldx%lld volume is beyond the GPU labeller's limits (2^33 voxels)",
                       (long long)nx, (long long)ny, (long long)nz);
    const bool xy = vl_label_order_is_raster(order) != 0; /* matlab-xy, size-raster */
    const Grid g = make_grid(nx, ny, nz, xy);
    const uint64_t segments = (uint64_t)nz * g.n1 * g.nseg;
    cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
    Scratch scratch{stream, {}, 0, 0};
    cudaEvent_t events[3] = {nullptr, nullptr, nullptr};
    vl_status status = VL_OK;
    cudaError_t error = cudaSuccess;
    uint32_t *segment_roots = nullptr, *segment_offset = nullptr, *root_bits = nullptr;
    unsigned long long *sizes = nullptr;
    void *cub_temp = nullptr, *order_temp = nullptr;
    size_t scan_bytes = 0;
    const size_t root_bits_bytes = ((size_t)g.nodes + 31) / 32 * sizeof(uint32_t);
    /* Block list: room for one block in 8 (26) or 16 (18, 8, 6, 4); denser volumes walk the whole grid. */
    BlockList list{nullptr, nullptr, g.nodes / 32 + 32, kEmpty};
    uint32_t count = 0;
    bool by_size = false;
    const uint32_t *new_label = nullptr; /* size orders: key-order label -> size-order label */

#define CUDA_TRY_OR_DONE(call, what)                    \
    do {                                           \
        error = (call);                            \
        if (error != cudaSuccess) {                \
            status = vl_cuda_failure(error, what);    \
            goto done;                             \
        }                                          \
    } while (0)
#define VL_TRY(call)               \
    do {                           \
        status = (call);           \
        if (status != VL_OK)       \
            goto done;             \
    } while (0)

    if (timed)
        for (int i = 0; i < 3; i++)
            CUDA_TRY_OR_DONE(cudaEventCreate(&events[i]), "creating timing events");
    CUDA_TRY_OR_DONE(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                              (int64_t)segments + 1, stream),
                "sizing the root scan");
    {
        void *block = nullptr;
        const size_t counts_bytes = round_up((segments + 1) * sizeof(uint32_t));
        const size_t list_bytes = round_up(((size_t)list.capacity + 1) * sizeof(uint32_t));
        VL_TRY(scratch.allocate(&block, 2 * counts_bytes + round_up(root_bits_bytes) + list_bytes + scan_bytes,
                                "allocating segment counts"));
        char *next = static_cast<char *>(block);
        segment_roots = reinterpret_cast<uint32_t *>(next);
        segment_offset = reinterpret_cast<uint32_t *>(next += counts_bytes);
        root_bits = reinterpret_cast<uint32_t *>(next += counts_bytes);
        list.count = reinterpret_cast<uint32_t *>(next += round_up(root_bits_bytes));
        list.entries = list.count + 1;
        cub_temp = next + list_bytes;
    }
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[0], stream), "recording an event");
    CUDA_TRY_OR_DONE(cudaMemsetAsync(segment_roots, 0, (segments + 1) * sizeof(uint32_t), stream), "clearing counts");
    CUDA_TRY_OR_DONE(cudaMemsetAsync(root_bits, 0, root_bits_bytes, stream), "clearing root bits");
    CUDA_TRY_OR_DONE(union_find_blocks(connectivity, xy, mask, labels, list, g, stream),
                "union-find kernels");
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[1], stream), "recording an event");
    CUDA_TRY_OR_DONE(flatten_roots(connectivity, xy, mask, labels, root_bits, segment_roots, list, g, stream),
                "flattening the forest");
    CUDA_TRY_OR_DONE(cub::DeviceScan::ExclusiveSum(cub_temp, scan_bytes, segment_roots, segment_offset,
                                              (int64_t)segments + 1, stream),
                "scanning root counts");
    CUDA_TRY_OR_DONE(cudaMemcpyAsync(&count, segment_offset + segments, sizeof count, cudaMemcpyDeviceToHost, stream),
                "reading the component count");
    CUDA_TRY_OR_DONE(cudaStreamSynchronize(stream), "union-find");
    {
        void *block = nullptr;
        const size_t sizes_bytes = round_up((size_t)count * sizeof(unsigned long long));
        const size_t order_bytes = vl_label_order_by_size(order) ? size_order_scratch_bytes(count, nx * ny * nz) : 0;
        VL_TRY(scratch.allocate(&block, sizes_bytes + order_bytes, "allocating component sizes"));
        sizes = static_cast<unsigned long long *>(block);
        order_temp = static_cast<char *>(block) + sizes_bytes;
    }
    CUDA_TRY_OR_DONE(cudaMemsetAsync(sizes, 0, (size_t)count * sizeof(unsigned long long), stream), "clearing sizes");
    by_size = vl_label_order_by_size(order) && count > 0; /* size, size-raster */
    /* `size` order: the sizes first, then the voxels straight in size order, instead of a write and a
     * remap pass over the labels: the remap's read and write of every label, for a separate sizes pass
     * (chosen by measurement on the bench, bench/gpu_bench.c). */
    if (by_size) {
        CUDA_TRY_OR_DONE(count_sizes(connectivity, xy, mask, labels, root_bits, segment_offset, sizes, list, g, stream),
                    "counting component sizes");
        CUDA_TRY_OR_DONE(order_by_size(sizes, count, nx * ny * nz, order_temp, &new_label, stream), "ordering by size");
    }
    CUDA_TRY_OR_DONE(write_labels(connectivity, xy, mask, labels, root_bits, segment_offset, by_size ? nullptr : sizes,
                             new_label, g, stream),
                "writing labels");
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[2], stream), "recording an event");
    CUDA_TRY_OR_DONE(cudaStreamSynchronize(stream), "labelling");
    if (timed) {
        CUDA_TRY_OR_DONE(cudaEventElapsedTime(&run->union_ms, events[0], events[1]), "reading timings");
        CUDA_TRY_OR_DONE(cudaEventElapsedTime(&run->total_ms, events[0], events[2]), "reading timings");
    }
    run->count = count;
    run->scratch_bytes = scratch.bytes;
    run->stream = stream;
    /* The sizes stay allocated for the caller; everything else goes back to the pool. */
    for (int i = 0; i < scratch.used; i++)
        if (scratch.blocks[i] == sizes)
            scratch.blocks[i] = scratch.blocks[--scratch.used];
    run->sizes = sizes;
    sizes = nullptr;

done:
    scratch.release();
    for (int i = 0; i < 3; i++)
        if (events[i])
            cudaEventDestroy(events[i]);
    if (status == VL_OK)
        cudaStreamSynchronize(stream);
    return status;
#undef CUDA_TRY_OR_DONE
#undef VL_TRY
}

extern "C" void vl_gpu_label_run_free(vl_gpu_label_run *run)
{
    if (run && run->sizes) {
        cudaFreeAsync(run->sizes, static_cast<cudaStream_t>(run->stream));
        run->sizes = nullptr;
    }
}

namespace {

/* One GPU's slab buffers, reused from slab to slab. A slab that runs out of memory releases them, so
 * that the driver's retry at half the depth allocates them anew. */
struct DeviceSlabs {
    int gpu_index;
    int connectivity;
    int64_t depth; /* slices the buffers hold */
    uint8_t *mask;
    uint32_t *labels;
    void release()
    {
        cudaFree(mask);
        cudaFree(labels);
        mask = nullptr;
        labels = nullptr;
        depth = 0;
    }
    cudaError_t allocate_buffers(int64_t voxels)
    {
        cudaError_t error = cudaMalloc(&mask, (size_t)voxels);
        return error == cudaSuccess ? cudaMalloc(&labels, (size_t)voxels * sizeof(uint32_t)) : error;
    }
    vl_status reserve(const vl_volume *slab_mask)
    {
        if (slab_mask->nz <= depth)
            return VL_OK;
        release();
        const int64_t voxels = vl_volume_voxels(slab_mask);
        cudaError_t error = allocate_buffers(voxels);
        if (error == cudaErrorMemoryAllocation) {
            /* The scratch pool's kept memory may be what is missing: give it back and try once more. */
            cudaGetLastError();
            release();
            scratch_release_kept();
            error = allocate_buffers(voxels);
        }
        if (error == cudaSuccess) {
            depth = slab_mask->nz;
            return VL_OK;
        }
        size_t free_bytes = 0, total_bytes = 0;
        cudaGetLastError();
        release();
        cudaMemGetInfo(&free_bytes, &total_bytes);
        return vl_fail(error == cudaErrorMemoryAllocation ? VL_ERR_MEMORY : VL_ERR_DEVICE,
                       "gpu:%d: %lld slice%s of %lldx%lld voxels need%s %.1f MiB of device memory, %.1f MiB free: %s",
                       gpu_index, (long long)slab_mask->nz, slab_mask->nz == 1 ? "" : "s", (long long)slab_mask->nx,
                       (long long)slab_mask->ny, slab_mask->nz == 1 ? "s" : "",
                       (double)vl_gpu_label_bytes_per_slice(slab_mask->nx, slab_mask->ny) * slab_mask->nz / (1 << 20),
                       (double)free_bytes / (1 << 20), cudaGetErrorString(error));
    }
};

/* vl_slab_labeller on the GPU: upload the slab's mask, label it, download its labels and sizes. */
vl_status label_slab_on_device(void *context, const vl_volume *slab_mask, uint32_t *slab_labels,
                               vl_label_order order, uint32_t *count, uint64_t **sizes, uint32_t **classes)
{
    (void)classes; /* masks only */
    DeviceSlabs *device = static_cast<DeviceSlabs *>(context);
    const int64_t voxels = vl_volume_voxels(slab_mask);
    vl_gpu_label_run run;
    memset(&run, 0, sizeof run);
    cudaError_t error = cudaSuccess;
    vl_status status = device->reserve(slab_mask);
    if (status == VL_OK && (error = vl_gpu_upload(device->mask, slab_mask->data, (size_t)voxels)) != cudaSuccess)
        status = vl_cuda_failure(error, "uploading the mask");
    if (status == VL_OK)
        status = vl_gpu_label_device(device->mask, device->labels, slab_mask->nx, slab_mask->ny, slab_mask->nz,
                                     device->connectivity, order, nullptr, 0, &run);
    if (status == VL_OK &&
        (error = vl_gpu_download(slab_labels, device->labels, (size_t)voxels * sizeof(uint32_t))) != cudaSuccess)
        status = vl_cuda_failure(error, "downloading the labels");
    uint64_t *host_sizes = nullptr;
    if (status == VL_OK && !(host_sizes = static_cast<uint64_t *>(malloc(((size_t)run.count + 1) * sizeof(uint64_t)))))
        status = vl_fail(VL_ERR_MEMORY, "label: no memory for %u component sizes", run.count);
    /* Through the pinned staging too: there is one size per component (millions on noise), and a plain
     * copy into new pageable pages takes its page faults on one thread (cuda/core/gpu_transfer.cu). */
    if (status == VL_OK && run.count > 0 &&
        (error = vl_gpu_download(host_sizes, run.sizes, (size_t)run.count * sizeof(uint64_t))) != cudaSuccess)
        status = vl_cuda_failure(error, "downloading the sizes");
    vl_gpu_label_run_free(&run);
    if (status != VL_OK) {
        free(host_sizes);
        if (status == VL_ERR_MEMORY)
            device->release();
        return status;
    }
    *count = run.count;
    *sizes = host_sizes;
    return VL_OK;
}

/* Slices per slab: as many as `budget` bytes hold (vl_gpu_label_bytes_per_slice), and no more than the
 * labeller's node numbering takes; 0 when not even one slice is within its limits. */
int64_t slab_depth(const vl_volume *mask, uint64_t budget)
{
    int64_t fits = (int64_t)(budget / vl_gpu_label_bytes_per_slice(mask->nx, mask->ny));
    fits = fits < 1 ? 1 : fits > mask->nz ? mask->nz : fits;
    if (vl_gpu_label_shape_ok(mask->nx, mask->ny, fits))
        return fits;
    if (!vl_gpu_label_shape_ok(mask->nx, mask->ny, 1))
        return 0;
    int64_t lo = 1, hi = fits; /* shape_ok(lo) and not shape_ok(hi) */
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (vl_gpu_label_shape_ok(mask->nx, mask->ny, mid) ? lo : hi) = mid;
    }
    return lo;
}

} // namespace

extern "C" vl_status vl_label_volume_gpu(const vl_volume *mask, vl_volume *labels, const vl_label_options *options,
                                         vl_label_result *result)
{
    memset(result, 0, sizeof *result);
    if (mask->dtype != VL_U8)
        return vl_fail(VL_ERR_ARGUMENT, "label: the mask must be u8, not %s", vl_dtype_name(mask->dtype));
    if (!vl_connectivity_is_valid(options->connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "--conn: %d is not one of 6, 18, 26, 4, 8", options->connectivity);
    uint64_t budget = 0;
    vl_status status = select_device_budget(options->device, &budget);
    if (status != VL_OK)
        return status;
    const int64_t depth = slab_depth(mask, budget);
    if (depth == 0)
        return vl_fail(VL_ERR_DEVICE, "gpu: %lldx%lld slices are beyond the GPU labeller's limits (ny <= %lld)",
                       (long long)mask->nx, (long long)mask->ny, (long long)kMaxRows);

    vl_progress_report(&options->progress, "labelling (gpu)", 0.0);
    DeviceSlabs device{options->device.gpu_index, options->connectivity, 0, nullptr, nullptr};
    status = vl_label_in_slabs(mask, 0, labels, options, depth, label_slab_on_device, &device, result,
                               &result->slabs);
    device.release();
    if (status != VL_OK)
        return status;
    name_device_used(result, options->device.gpu_index);
    vl_progress_report(&options->progress, "labelling (gpu)", 1.0);
    return VL_OK;
}
