/* The CUDA half of the multilabel labeller (src/label/ccl_cpu.c is its reference): one launch sequence
 * labels every class of a class map at once.
 *
 * Nodes are voxels, numbered by the order's key (z*nx*ny + x*ny + y for `matlab` and `size`,
 * z*nx*ny + y*nx + x for `matlab-xy` and `size-raster`), so "link the larger root under the smaller"
 * leaves every component rooted at its minimum-key voxel and a root's rank among all roots in node
 * order is its label minus one: the same minimum-key numbering as the CPU and the binary labeller.
 * Phases: init (every voxel its own root), merge (every voxel unites with its backward neighbours of the
 * same class that its left neighbour does not already reach, atomicMin on the parent), compress (every node points at its root), root flags -> CUB
 * exclusive scan (ranks), write (labels, sizes with warp-aggregated atomics, each root's class), and
 * for the size orders the CUB sort of ccl_size_order.cu and one remap pass.
 * Device memory: the class map, the labels (the root flags before the write), the forest and the ranks
 * (u32 per voxel each), and O(components). */
#include <cub/device/device_scan.cuh>

#include <stdlib.h>
#include <string.h>

#include "ccl_size_order.cuh"
#include "core/cuda_check.h"
#include "core/gpu_transfer.h"
#include "label/ccl_multilabel_gpu.h"
#include "label/label_gpu.h"
#include "label/label_slabs.h"
#include "voxlabel/error.h"

namespace {

constexpr uint32_t kNoNode = 0xFFFFFFFFu;
constexpr int64_t kMaxRows = 65535 * 8;

struct Shape {
    int64_t nx, ny, nz, sxy;
};

template <bool XY>
__device__ __forceinline__ uint32_t node_of(const Shape &s, int64_t x, int64_t y, int64_t z)
{
    return (uint32_t)(XY ? z * s.sxy + y * s.nx + x : z * s.sxy + x * s.ny + y);
}

/* Are voxels (dx, dy, dz) apart (each in -1..1) neighbours under `connectivity`? */
__device__ __forceinline__ bool step_ok(int connectivity, int dx, int dy, int dz)
{
    const int axes = (dx != 0) + (dy != 0) + (dz != 0);
    if (connectivity == 4 || connectivity == 8)
        return dz == 0 && axes <= (connectivity == 4 ? 1 : 2);
    return axes <= (connectivity == 6 ? 1 : connectivity == 18 ? 2 : 3);
}

/* Parents only ever decrease, so a stale read is still an ancestor and the walks converge. */
__device__ __forceinline__ uint32_t find_root(const uint32_t *parent, uint32_t n)
{
    for (uint32_t p = __ldcg(parent + n); p != n; p = __ldcg(parent + n))
        n = p;
    return n;
}

/* The same walk with path halving (n points at its grandparent on the way up). The plain store may race
 * with an atomicMin on the same cell; both values are ancestors of n in its component, and unite()
 * re-unites whatever a lost update leaves apart, as in the binary labeller (ccl_union_find.cuh). */
__device__ __forceinline__ uint32_t find_root_halving(uint32_t *parent, uint32_t n)
{
    for (;;) {
        const uint32_t p = __ldcg(parent + n);
        if (p == n)
            return n;
        const uint32_t grandparent = __ldcg(parent + p);
        if (grandparent == p)
            return p;
        __stcg(parent + n, grandparent);
        n = grandparent;
    }
}

__device__ void unite(uint32_t *parent, uint32_t a, uint32_t b)
{
    for (;;) {
        a = find_root_halving(parent, a);
        b = find_root_halving(parent, b);
        if (a == b)
            return;
        if (a > b) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        const uint32_t old = atomicMin(parent + b, a);
        if (old == b)
            return;
        b = old;
    }
}

/* Threads (32 x 8 per block) walk x and y; blockIdx.z and the loop walk z. */
dim3 voxel_grid(const Shape &s)
{
    return dim3((unsigned)((s.nx + 31) / 32), (unsigned)((s.ny + 7) / 8), (unsigned)(s.nz < 65535 ? s.nz : 65535));
}

dim3 node_grid(uint64_t nodes)
{
    const uint64_t blocks = (nodes + 255) / 256;
    return dim3((unsigned)(blocks < 1 ? 1 : blocks > 65535 * 16 ? 65535 * 16 : blocks));
}

template <typename T, bool XY>
__global__ void init_kernel(const T *__restrict__ classes, uint32_t *parent, Shape s)
{
    const int64_t x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (x >= s.nx || y >= s.ny)
        return;
    for (int64_t z = blockIdx.z; z < s.nz; z += gridDim.z) {
        const uint32_t n = node_of<XY>(s, x, y, z);
        parent[n] = classes[z * s.sxy + y * s.nx + x] ? n : kNoNode;
    }
}

/* Every voxel unites with its backward neighbours (raster order) that hold its class. When the voxel on its
 * left (x - 1) holds the class too, the voxel unites with it, and a backward neighbour at offset d with
 * dx <= 0 is skipped when d + (1, 0, 0) is a neighbour offset of the left voxel under the connectivity: the
 * left voxel's own merge (or, by the same rule, that of the voxel on its left, down to the start of the run)
 * unites them. Under 26 that leaves 5 of 13 unions inside a class; the partition is the same. */
template <typename T, bool XY>
__global__ void merge_kernel(const T *__restrict__ classes, uint32_t *parent, Shape s, int connectivity)
{
    const int64_t x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (x >= s.nx || y >= s.ny)
        return;
    for (int64_t z = blockIdx.z; z < s.nz; z += gridDim.z) {
        const int64_t v = z * s.sxy + y * s.nx + x;
        const T c = classes[v];
        if (!c)
            continue;
        const uint32_t n = node_of<XY>(s, x, y, z);
        const bool left_same = x > 0 && classes[v - 1] == c;
        if (left_same)
            unite(parent, n, node_of<XY>(s, x - 1, y, z));
        for (int k = 0; k < 12; k++) {
            /* k 0..8: dz = -1, (dy, dx) over {-1,0,1}^2; 9..11: dz = 0, dy = -1. (dx = -1 alone is the left.) */
            const int dz = k < 9 ? -1 : 0;
            const int dy = k < 9 ? k / 3 - 1 : -1;
            const int dx = k < 9 ? k % 3 - 1 : k - 10;
            if (!step_ok(connectivity, dx, dy, dz))
                continue;
            if (left_same && dx <= 0 && step_ok(connectivity, dx + 1, dy, dz))
                continue;
            const int64_t ux = x + dx, uy = y + dy, uz = z + dz;
            if (ux < 0 || ux >= s.nx || uy < 0 || uy >= s.ny || uz < 0)
                continue;
            if (classes[uz * s.sxy + uy * s.nx + ux] == c)
                unite(parent, n, node_of<XY>(s, ux, uy, uz));
        }
    }
}

/* Every node points at its root; flags[n] := 1 for roots. */
__global__ void compress_kernel(uint32_t *parent, uint32_t *flags, uint64_t nodes)
{
    for (uint64_t n = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; n < nodes; n += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t p = parent[n];
        if (p != kNoNode && p != n)
            parent[n] = find_root(parent, p);
        flags[n] = p == n;
    }
}

/* labels := rank of the root + 1 (0 for background); sizes += 1 per voxel, aggregated over the lanes of
 * a warp that hold one label; a root writes its component's class. All lanes of a warp share y and z
 * and stay in the loop, so the warp votes are over full warps. */
template <typename T, bool XY>
__global__ void write_kernel(const T *__restrict__ classes, const uint32_t *__restrict__ parent,
                             const uint32_t *__restrict__ rank, uint32_t *labels, unsigned long long *sizes,
                             uint32_t *component_class, Shape s)
{
    const int64_t x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (y >= s.ny)
        return;
    const bool inside = x < s.nx;
    for (int64_t z = blockIdx.z; z < s.nz; z += gridDim.z) {
        uint32_t label = 0;
        if (inside) {
            const int64_t v = z * s.sxy + y * s.nx + x;
            const T c = classes[v];
            if (c) {
                const uint32_t n = node_of<XY>(s, x, y, z), root = parent[n];
                label = rank[root] + 1;
                if (root == n)
                    component_class[label - 1] = c;
            }
            labels[v] = label;
        }
        const unsigned peers = __match_any_sync(0xFFFFFFFFu, label);
        if (label && (threadIdx.x & 31) == (unsigned)(__ffs(peers) - 1))
            atomicAdd(sizes + label - 1, (unsigned long long)__popc(peers));
    }
}

/* Size orders: labels through the key-order -> size-order table, classes moved to match. */
__global__ void remap_kernel(uint32_t *labels, const uint32_t *new_label, uint64_t voxels)
{
    for (uint64_t v = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; v < voxels; v += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t label = labels[v];
        if (label)
            labels[v] = new_label[label - 1];
    }
}

__global__ void permute_classes_kernel(const uint32_t *in, uint32_t *out, const uint32_t *new_label, uint32_t count)
{
    for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x)
        out[new_label[k] - 1] = in[k];
}

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <typename T>
cudaError_t launch_forest(const void *classes, uint32_t *parent, const Shape &s, bool xy, int connectivity,
                          cudaStream_t stream)
{
    const T *c = static_cast<const T *>(classes);
    const dim3 grid = voxel_grid(s), block(32, 8);
    if (xy) {
        init_kernel<T, true><<<grid, block, 0, stream>>>(c, parent, s);
        merge_kernel<T, true><<<grid, block, 0, stream>>>(c, parent, s, connectivity);
    } else {
        init_kernel<T, false><<<grid, block, 0, stream>>>(c, parent, s);
        merge_kernel<T, false><<<grid, block, 0, stream>>>(c, parent, s, connectivity);
    }
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_write(const void *classes, const uint32_t *parent, const uint32_t *rank, uint32_t *labels,
                         unsigned long long *sizes, uint32_t *component_class, const Shape &s, bool xy,
                         cudaStream_t stream)
{
    const T *c = static_cast<const T *>(classes);
    const dim3 grid = voxel_grid(s), block(32, 8);
    if (xy)
        write_kernel<T, true><<<grid, block, 0, stream>>>(c, parent, rank, labels, sizes, component_class, s);
    else
        write_kernel<T, false><<<grid, block, 0, stream>>>(c, parent, rank, labels, sizes, component_class, s);
    return cudaGetLastError();
}

} // namespace

extern "C" int vl_gpu_multilabel_shape_ok(int64_t nx, int64_t ny, int64_t nz)
{
    if (nx < 1 || ny < 1 || nz < 1 || ny > kMaxRows || nx > 0x7FFFFFFF || nz > 0x7FFFFFFF)
        return 0;
    return (uint64_t)nx * (uint64_t)ny * (uint64_t)nz < kNoNode;
}

extern "C" vl_status vl_gpu_multilabel_device(const void *classes, vl_dtype dtype, uint32_t *labels, int64_t nx,
                                              int64_t ny, int64_t nz, int connectivity, vl_label_order order,
                                              void *stream_handle, int timed, vl_gpu_multilabel_run *run)
{
    memset(run, 0, sizeof *run);
    if (!vl_connectivity_is_valid(connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "gpu: connectivity %d is not one of 4, 8, 6, 18, 26", connectivity);
    if (dtype != VL_U8 && dtype != VL_U16 && dtype != VL_I16 && dtype != VL_U32)
        return vl_fail(VL_ERR_ARGUMENT, "gpu: a class map must be u8, u16 or u32, not %s", vl_dtype_name(dtype));
    if (!vl_gpu_multilabel_shape_ok(nx, ny, nz))
        return vl_fail(VL_ERR_DEVICE, "gpu: a %lldx%lldx%lld class map is beyond the GPU multilabel labeller's limits",
                       (long long)nx, (long long)ny, (long long)nz);
    const Shape s{nx, ny, nz, nx * ny};
    const uint64_t nodes = (uint64_t)nx * ny * nz;
    const bool xy = vl_label_order_is_raster(order) != 0;
    cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
    cudaEvent_t events[3] = {nullptr, nullptr, nullptr};
    void *forest_block = nullptr, *component_block = nullptr;
    uint32_t *parent = nullptr, *rank = nullptr, *flags = labels;
    unsigned long long *sizes = nullptr;
    uint32_t *component_class = nullptr, *moved_class = nullptr;
    void *cub_temp = nullptr, *order_temp = nullptr;
    size_t scan_bytes = 0, scratch_bytes = 0;
    uint32_t last_rank = 0, last_flag = 0, count = 0;
    const uint32_t *new_label = nullptr;
    vl_status status = VL_OK;
    cudaError_t error = cudaSuccess;

#define CUDA_TRY_OR_DONE(call, what)                \
    do {                                            \
        error = (call);                             \
        if (error != cudaSuccess) {                 \
            status = vl_cuda_failure(error, what);  \
            goto done;                              \
        }                                           \
    } while (0)

    if (timed)
        for (int i = 0; i < 3; i++)
            CUDA_TRY_OR_DONE(cudaEventCreate(&events[i]), "creating timing events");
    CUDA_TRY_OR_DONE(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                                   (int64_t)nodes, stream),
                     "sizing the root scan");
    {
        const size_t node_bytes = round_up(nodes * sizeof(uint32_t));
        scratch_bytes = 2 * node_bytes + scan_bytes;
        CUDA_TRY_OR_DONE(cudaMallocAsync(&forest_block, scratch_bytes, stream), "allocating the multilabel forest");
        parent = static_cast<uint32_t *>(forest_block);
        rank = reinterpret_cast<uint32_t *>(static_cast<char *>(forest_block) + node_bytes);
        cub_temp = static_cast<char *>(forest_block) + 2 * node_bytes;
    }
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[0], stream), "recording an event");
    switch (dtype) {
    case VL_U8: error = launch_forest<uint8_t>(classes, parent, s, xy, connectivity, stream); break;
    case VL_U32: error = launch_forest<uint32_t>(classes, parent, s, xy, connectivity, stream); break;
    default: error = launch_forest<uint16_t>(classes, parent, s, xy, connectivity, stream); break;
    }
    CUDA_TRY_OR_DONE(error, "multilabel union-find");
    compress_kernel<<<node_grid(nodes), 256, 0, stream>>>(parent, flags, nodes);
    CUDA_TRY_OR_DONE(cudaGetLastError(), "flattening the multilabel forest");
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[1], stream), "recording an event");
    CUDA_TRY_OR_DONE(cub::DeviceScan::ExclusiveSum(cub_temp, scan_bytes, flags, rank, (int64_t)nodes, stream),
                     "scanning the roots");
    CUDA_TRY_OR_DONE(cudaMemcpyAsync(&last_rank, rank + nodes - 1, sizeof last_rank, cudaMemcpyDeviceToHost, stream),
                     "reading the component count");
    CUDA_TRY_OR_DONE(cudaMemcpyAsync(&last_flag, flags + nodes - 1, sizeof last_flag, cudaMemcpyDeviceToHost, stream),
                     "reading the component count");
    CUDA_TRY_OR_DONE(cudaStreamSynchronize(stream), "multilabel union-find");
    count = last_rank + last_flag;
    {
        const size_t sizes_bytes = round_up((size_t)count * sizeof(unsigned long long));
        const size_t class_bytes = round_up((size_t)count * sizeof(uint32_t));
        const size_t order_bytes = vl_label_order_by_size(order) ? vlccl::size_order_scratch_bytes(count, (int64_t)nodes) : 0;
        CUDA_TRY_OR_DONE(cudaMallocAsync(&component_block, sizes_bytes + 2 * class_bytes + order_bytes + 1, stream),
                         "allocating component sizes");
        scratch_bytes += sizes_bytes + 2 * class_bytes + order_bytes;
        sizes = static_cast<unsigned long long *>(component_block);
        component_class = reinterpret_cast<uint32_t *>(static_cast<char *>(component_block) + sizes_bytes);
        moved_class = reinterpret_cast<uint32_t *>(static_cast<char *>(component_block) + sizes_bytes + class_bytes);
        order_temp = static_cast<char *>(component_block) + sizes_bytes + 2 * class_bytes;
    }
    CUDA_TRY_OR_DONE(cudaMemsetAsync(sizes, 0, (size_t)count * sizeof(unsigned long long), stream), "clearing sizes");
    switch (dtype) {
    case VL_U8: error = launch_write<uint8_t>(classes, parent, rank, labels, sizes, component_class, s, xy, stream); break;
    case VL_U32: error = launch_write<uint32_t>(classes, parent, rank, labels, sizes, component_class, s, xy, stream); break;
    default: error = launch_write<uint16_t>(classes, parent, rank, labels, sizes, component_class, s, xy, stream); break;
    }
    CUDA_TRY_OR_DONE(error, "writing the labels");
    if (vl_label_order_by_size(order) && count > 0) {
        CUDA_TRY_OR_DONE(vlccl::order_by_size(sizes, count, (int64_t)nodes, order_temp, &new_label, stream),
                         "ordering by size");
        remap_kernel<<<node_grid(nodes), 256, 0, stream>>>(labels, new_label, nodes);
        permute_classes_kernel<<<node_grid(count), 256, 0, stream>>>(component_class, moved_class, new_label, count);
        CUDA_TRY_OR_DONE(cudaGetLastError(), "renumbering by size");
        uint32_t *t = component_class;
        component_class = moved_class;
        moved_class = t;
    }
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[2], stream), "recording an event");
    CUDA_TRY_OR_DONE(cudaStreamSynchronize(stream), "multilabel labelling");
    if (timed) {
        CUDA_TRY_OR_DONE(cudaEventElapsedTime(&run->union_ms, events[0], events[1]), "reading timings");
        CUDA_TRY_OR_DONE(cudaEventElapsedTime(&run->total_ms, events[0], events[2]), "reading timings");
    }
    /* The component block (sizes first) stays with the caller: vl_gpu_multilabel_run_free releases it. */
    run->count = count;
    run->sizes = sizes;
    run->classes = component_class;
    run->scratch_bytes = scratch_bytes;
    component_block = nullptr;

done:
    if (forest_block)
        cudaFreeAsync(forest_block, stream);
    if (component_block)
        cudaFreeAsync(component_block, stream);
    for (int i = 0; i < 3; i++)
        if (events[i])
            cudaEventDestroy(events[i]);
    cudaStreamSynchronize(stream);
    return status;
#undef CUDA_TRY_OR_DONE
}

extern "C" void vl_gpu_multilabel_run_free(vl_gpu_multilabel_run *run)
{
    if (run && run->sizes)
        cudaFree(run->sizes); /* the start of the component block */
    if (run) {
        run->sizes = nullptr;
        run->classes = nullptr;
    }
}

namespace {

/* One GPU's slab buffers (class map, labels), reused from slab to slab; released on VL_ERR_MEMORY so
 * that the driver's retry at half the depth allocates them anew. */
struct ClassSlabs {
    int gpu_index;
    int connectivity;
    int64_t depth;
    void *classes;
    uint32_t *labels;
    void release()
    {
        cudaFree(classes);
        cudaFree(labels);
        classes = nullptr;
        labels = nullptr;
        depth = 0;
    }
    vl_status reserve(const vl_volume *slab)
    {
        if (slab->nz <= depth)
            return VL_OK;
        release();
        const int64_t voxels = vl_volume_voxels(slab);
        cudaError_t error = cudaMalloc(&classes, (size_t)voxels * vl_dtype_size(slab->dtype));
        if (error == cudaSuccess)
            error = cudaMalloc(&labels, (size_t)voxels * sizeof(uint32_t));
        if (error == cudaSuccess) {
            depth = slab->nz;
            return VL_OK;
        }
        cudaGetLastError();
        release();
        size_t free_bytes = 0, total_bytes = 0;
        cudaMemGetInfo(&free_bytes, &total_bytes);
        return vl_fail(error == cudaErrorMemoryAllocation ? VL_ERR_MEMORY : VL_ERR_DEVICE,
                       "gpu:%d: %lld slice%s of a %lldx%lld class map need %.1f MiB of device memory, %.1f MiB free: %s",
                       gpu_index, (long long)slab->nz, slab->nz == 1 ? "" : "s", (long long)slab->nx,
                       (long long)slab->ny,
                       (double)vl_gpu_multilabel_bytes_per_voxel(slab->dtype) * (double)voxels / (1 << 20),
                       (double)free_bytes / (1 << 20), cudaGetErrorString(error));
    }
};

/* vl_slab_labeller on the GPU for class maps: upload, label, download labels, sizes and classes. */
vl_status label_class_slab(void *context, const vl_volume *slab, uint32_t *slab_labels, vl_label_order order,
                           uint32_t *count, uint64_t **sizes, uint32_t **classes)
{
    ClassSlabs *device = static_cast<ClassSlabs *>(context);
    const int64_t voxels = vl_volume_voxels(slab);
    vl_gpu_multilabel_run run;
    memset(&run, 0, sizeof run);
    cudaError_t error = cudaSuccess;
    vl_status status = device->reserve(slab);
    if (status == VL_OK &&
        (error = vl_gpu_upload(device->classes, slab->data, (size_t)voxels * vl_dtype_size(slab->dtype))) != cudaSuccess)
        status = vl_cuda_failure(error, "uploading the class map");
    if (status == VL_OK)
        status = vl_gpu_multilabel_device(device->classes, slab->dtype, device->labels, slab->nx, slab->ny, slab->nz,
                                          device->connectivity, order, nullptr, 0, &run);
    if (status == VL_OK &&
        (error = vl_gpu_download(slab_labels, device->labels, (size_t)voxels * sizeof(uint32_t))) != cudaSuccess)
        status = vl_cuda_failure(error, "downloading the labels");
    uint64_t *host_sizes = nullptr;
    uint32_t *host_classes = nullptr;
    if (status == VL_OK) {
        host_sizes = static_cast<uint64_t *>(malloc(((size_t)run.count + 1) * sizeof(uint64_t)));
        host_classes = static_cast<uint32_t *>(malloc(((size_t)run.count + 1) * sizeof(uint32_t)));
        if (!host_sizes || !host_classes)
            status = vl_fail(VL_ERR_MEMORY, "label: no memory for %u component sizes", run.count);
    }
    if (status == VL_OK && run.count > 0 &&
        ((error = vl_gpu_download(host_sizes, run.sizes, (size_t)run.count * sizeof(uint64_t))) != cudaSuccess ||
         (error = vl_gpu_download(host_classes, run.classes, (size_t)run.count * sizeof(uint32_t))) != cudaSuccess))
        status = vl_cuda_failure(error, "downloading the sizes and classes");
    vl_gpu_multilabel_run_free(&run);
    if (status != VL_OK) {
        free(host_sizes);
        free(host_classes);
        if (status == VL_ERR_MEMORY)
            device->release();
        return status;
    }
    *count = run.count;
    *sizes = host_sizes;
    *classes = host_classes;
    return VL_OK;
}

} // namespace

extern "C" vl_status vl_label_multilabel_gpu(const vl_volume *classes, vl_volume *labels,
                                             const vl_label_options *options, vl_label_result *result)
{
    memset(result, 0, sizeof *result);
    memset(labels, 0, sizeof *labels);
    vl_status status = vl_class_map_check(classes);
    if (status != VL_OK)
        return status;
    if (!vl_connectivity_is_valid(options->connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "--conn: %d is not one of 6, 18, 26, 4, 8", options->connectivity);
    if (classes->ny > kMaxRows)
        return vl_fail(VL_ERR_DEVICE, "gpu: %lldx%lld slices are beyond the GPU labeller's limits (ny <= %lld)",
                       (long long)classes->nx, (long long)classes->ny, (long long)kMaxRows);
    cudaError_t error = cudaSetDevice(options->device.gpu_index);
    if (error != cudaSuccess)
        return vl_cuda_failure(error, "selecting the device");
    size_t free_bytes = 0, total_bytes = 0;
    if ((error = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
        return vl_cuda_failure(error, "reading the free device memory");
    /* As the binary labeller: an eighth of what is free stays for CUB and the O(N) arrays. */
    uint64_t budget = free_bytes - free_bytes / 8;
    if (options->device.gpu_memory && options->device.gpu_memory < budget)
        budget = options->device.gpu_memory;
    const uint64_t slice_bytes = (uint64_t)classes->nx * (uint64_t)classes->ny *
                                 vl_gpu_multilabel_bytes_per_voxel(classes->dtype);
    int64_t depth = (int64_t)(budget / slice_bytes);
    depth = depth < 1 ? 1 : depth > classes->nz ? classes->nz : depth;
    const int64_t node_limit = (int64_t)((kNoNode - 1) / ((uint64_t)classes->nx * (uint64_t)classes->ny));
    if (node_limit < 1)
        return vl_fail(VL_ERR_DEVICE, "gpu: %lldx%lld slices are beyond the GPU multilabel labeller's limits",
                       (long long)classes->nx, (long long)classes->ny);
    depth = depth < node_limit ? depth : node_limit;

    vl_progress_report(&options->progress, "labelling classes (gpu)", 0.0);
    ClassSlabs device{options->device.gpu_index, options->connectivity, 0, nullptr, nullptr};
    status = vl_label_in_slabs(classes, 1, labels, options, depth, label_class_slab, &device, result, &result->slabs);
    device.release();
    if (status != VL_OK)
        return status;
    result->outcome.used = VL_DEVICE_GPU;
    char name[96];
    vl_device_gpu_name(options->device.gpu_index, name, sizeof name);
    if (result->slabs > 1)
        snprintf(result->device_name, sizeof result->device_name, "%s, %lld z-slabs", name, (long long)result->slabs);
    else
        snprintf(result->device_name, sizeof result->device_name, "%s", name);
    vl_progress_report(&options->progress, "labelling classes (gpu)", 1.0);
    return VL_OK;
}
