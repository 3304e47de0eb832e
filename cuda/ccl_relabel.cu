/* Relabel phase of the CUDA labeller: flatten the node forest, number the roots 1..N in node order
 * (= key order, see ccl_common.cuh) from per-segment root counts, write every voxel's label and count
 * the component sizes, all in place in the labels buffer. */
#include "ccl_common.cuh"
#include "ccl_kernels.cuh"

namespace vlccl {
namespace {

constexpr int kThreads = 256;
constexpr int kSizeCache = 64;

/* Find without compression through the L1 (the forest no longer changes shape here, and a stale
 * parent is still an ancestor). */
template <bool XY>
__device__ __forceinline__ uint32_t find_root_cached(const uint32_t *labels, const Grid &g, uint32_t n)
{
    uint32_t p = labels[slot0_of<XY>(g, n)];
    while (p != n) {
        n = p;
        p = labels[slot0_of<XY>(g, n)];
    }
    return n;
}

/* Compresses node n's parent p (kEmpty: nothing) to its root; returns whether n is a root. */
template <bool XY>
__device__ __forceinline__ bool flatten_node(uint32_t *labels, const Grid &g, uint32_t n, uint32_t p, int64_t s0)
{
    if (p == n)
        return true;
    if (p != kEmpty) {
        uint32_t r = find_root_cached<XY>(labels, g, p);
        if (r != p)
            labels[s0] = r;
    }
    return false;
}

/* A root's label lives in its slot1, or in tail_label[line] when its line ends in a single voxel. */
template <bool XY>
__device__ __forceinline__ void store_root_label(const uint8_t *mask, uint32_t *labels, uint32_t *tail_label,
                                                 uint32_t *zero_nodes, uint32_t *zero_count, const Grid &g,
                                                 uint32_t n, uint32_t b, uint32_t line, int64_t s0, uint32_t label)
{
    if (2 * b + 1 < g.n0) {
        int64_t s1 = s0 + (XY ? 1 : g.nx);
        labels[s1] = label;
        if (!mask[s1])
            zero_nodes[atomicAdd(zero_count, 1u)] = n;
    } else {
        tail_label[line] = label;
    }
}

/* matlab-xy: a segment is 128 consecutive nodes of one x-row; one warp walks it 32 nodes at a time. */
__global__ void __launch_bounds__(kThreads) rank_roots_xy_kernel(const uint8_t *__restrict__ mask,
                                                                 uint32_t *__restrict__ labels,
                                                                 const uint32_t *__restrict__ segment_offset,
                                                                 uint32_t *__restrict__ tail_label,
                                                                 uint32_t *__restrict__ zero_nodes,
                                                                 uint32_t *__restrict__ zero_count, Grid g,
                                                                 uint32_t segments)
{
    const uint32_t segment = (uint32_t)(((uint64_t)blockIdx.x * kThreads + threadIdx.x) / 32);
    const uint32_t lane = threadIdx.x & 31;
    if (segment >= segments)
        return;
    const uint32_t line = segment / g.nseg, first = (segment - line * g.nseg) * kSegment;
    const uint32_t z = line / g.n1, i1 = line - z * g.n1;
    const uint32_t end = min(first + kSegment, g.h0);
    uint32_t running = segment_offset[segment];
    for (uint32_t base = first; base < end; base += 32) {
        const uint32_t b = base + lane;
        const uint32_t n = node_number(g, b, i1, z);
        const int64_t s0 = voxel_index<true>(g, b, i1, z, 0);
        const uint32_t p = b < end ? labels[s0] : kEmpty;
        const bool root = flatten_node<true>(labels, g, n, p, s0);
        const unsigned roots = __ballot_sync(0xFFFFFFFFu, root);
        if (root)
            store_root_label<true>(mask, labels, tail_label, zero_nodes, zero_count, g, n, b, line, s0,
                                   running + __popc(roots & ((1u << lane) - 1)) + 1);
        running += __popc(roots);
    }
}

/* matlab / size: lines run along y, so lanes take 32 neighbouring lines (x) and each warp 16
 * consecutive nodes of its lines; the 8 warps of a block cover one 128-node segment. */
constexpr int kNodesPerThread = kSegment / (kThreads / 32);

__global__ void __launch_bounds__(kThreads) rank_roots_yx_kernel(const uint8_t *__restrict__ mask,
                                                                 uint32_t *__restrict__ labels,
                                                                 const uint32_t *__restrict__ segment_offset,
                                                                 uint32_t *__restrict__ tail_label,
                                                                 uint32_t *__restrict__ zero_nodes,
                                                                 uint32_t *__restrict__ zero_count, Grid g)
{
    __shared__ uint32_t warp_roots[kThreads / 32][32];
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const uint32_t x = blockIdx.x * 32 + lane;
    const uint32_t first = blockIdx.y * kSegment + warp * kNodesPerThread;
    for (uint32_t z = blockIdx.z; z < (uint32_t)g.nz; z += gridDim.z) {
        const bool inside = x < g.n1;
        uint32_t p[kNodesPerThread];
#pragma unroll
        for (int j = 0; j < kNodesPerThread; j++) {
            const uint32_t b = first + j;
            p[j] = inside && b < g.h0 ? labels[voxel_index<false>(g, b, x, z, 0)] : kEmpty;
        }
        uint32_t root_bits = 0;
#pragma unroll
        for (int j = 0; j < kNodesPerThread; j++) {
            const uint32_t b = first + j;
            if (flatten_node<false>(labels, g, node_number(g, b, x, z), p[j], voxel_index<false>(g, b, x, z, 0)))
                root_bits |= 1u << j;
        }
        warp_roots[warp][lane] = __popc(root_bits);
        __syncthreads();
        uint32_t running = 0;
        for (uint32_t w = 0; w < warp; w++)
            running += warp_roots[w][lane];
        __syncthreads();
        if (root_bits) {
            const uint32_t line = z * g.n1 + x;
            running += segment_offset[line * g.nseg + blockIdx.y];
#pragma unroll
            for (int j = 0; j < kNodesPerThread; j++)
                if (root_bits >> j & 1u) {
                    const uint32_t b = first + j;
                    store_root_label<false>(mask, labels, tail_label, zero_nodes, zero_count, g,
                                            node_number(g, b, x, z), b, line, voxel_index<false>(g, b, x, z, 0),
                                            ++running);
                }
        }
    }
}

/* Adds `count` voxels to label L, through a per-block cache so that a giant component costs one
 * global atomic per block instead of one per warp. */
__device__ __forceinline__ void add_size(uint32_t *cache_label, unsigned long long *cache_count,
                                         unsigned long long *sizes, uint32_t label, unsigned long long count)
{
    const uint32_t slot = label % kSizeCache;
    const uint32_t held = atomicCAS(cache_label + slot, 0u, label);
    if (held == 0 || held == label)
        atomicAdd(cache_count + slot, count);
    else
        atomicAdd(sizes + label - 1, count);
}

template <bool XY>
__global__ void __launch_bounds__(kThreads) write_labels_kernel(const uint8_t *__restrict__ mask,
                                                                uint32_t *__restrict__ labels,
                                                                const uint32_t *__restrict__ tail_label,
                                                                unsigned long long *__restrict__ sizes, Grid g)
{
    __shared__ uint32_t cache_label[kSizeCache];
    __shared__ unsigned long long cache_count[kSizeCache];
    if (threadIdx.x < kSizeCache) {
        cache_label[threadIdx.x] = 0;
        cache_count[threadIdx.x] = 0;
    }
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31;
    /* Lanes follow memory x: nodes along b for XY, lines (x) otherwise. */
    const uint32_t b = XY ? blockIdx.x * 32 + lane : blockIdx.y * 8 + threadIdx.x / 32;
    const uint32_t i1 = XY ? blockIdx.y * 8 + threadIdx.x / 32 : blockIdx.x * 32 + lane;
    const int64_t step = XY ? 1 : g.nx;
    for (uint32_t z = blockIdx.z; z < (uint32_t)g.nz; z += gridDim.z) {
        uint32_t label = 0, count = 0;
        if (b < g.h0 && i1 < g.n1) {
            const uint32_t n = node_number(g, b, i1, z);
            const int64_t s0 = voxel_index<XY>(g, b, i1, z, 0);
            const bool has1 = 2 * b + 1 < g.n0;
            const uint32_t p = labels[s0];
            const uint32_t f0 = mask[s0] != 0, f1 = has1 && mask[s0 + step] != 0;
            if (p != kEmpty) {
                const uint32_t r = p;
                const NodeAt c = r == n ? NodeAt{b, i1, z} : node_coords<XY>(g, r);
                label = 2 * c.b + 1 < g.n0 ? labels[voxel_index<XY>(g, c.b, c.i1, c.z, 1)]
                                           : tail_label[c.z * g.n1 + c.i1];
                count = f0 + f1;
                labels[s0] = f0 ? label : 0;
                /* A root's slot1 already holds its label, and others still read it: roots whose
                 * second voxel is background are zeroed afterwards (zero_nodes). */
                if (has1 && r != n)
                    labels[s0 + step] = f1 ? label : 0;
            } else {
                labels[s0] = 0;
                if (has1)
                    labels[s0 + step] = 0;
            }
        }
        const unsigned odd = __ballot_sync(0xFFFFFFFFu, count & 1u), two = __ballot_sync(0xFFFFFFFFu, count >> 1);
        const unsigned active = __ballot_sync(0xFFFFFFFFu, count != 0);
        if (count) {
            const unsigned peers = __match_any_sync(active, label);
            if (lane == (uint32_t)(__ffs(peers) - 1))
                add_size(cache_label, cache_count, sizes, label,
                         (unsigned long long)(__popc(peers & odd) + 2 * __popc(peers & two)));
        }
    }
    __syncthreads();
    if (threadIdx.x < kSizeCache && cache_label[threadIdx.x])
        atomicAdd(sizes + cache_label[threadIdx.x] - 1, cache_count[threadIdx.x]);
}

template <bool XY>
__global__ void zero_root_pairs_kernel(uint32_t *__restrict__ labels, const uint32_t *__restrict__ zero_nodes,
                                       const uint32_t *__restrict__ zero_count, Grid g)
{
    const uint32_t count = *zero_count;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const NodeAt c = node_coords<XY>(g, zero_nodes[i]);
        labels[voxel_index<XY>(g, c.b, c.i1, c.z, 1)] = 0;
    }
}

__global__ void remap_kernel(uint32_t *__restrict__ labels, int64_t voxels, const uint32_t *__restrict__ new_label)
{
    const int64_t quads = voxels / 4;
    uint4 *quad = reinterpret_cast<uint4 *>(labels);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < quads; i += (int64_t)gridDim.x * blockDim.x) {
        uint4 v = quad[i];
        v.x = v.x ? new_label[v.x - 1] : 0;
        v.y = v.y ? new_label[v.y - 1] : 0;
        v.z = v.z ? new_label[v.z - 1] : 0;
        v.w = v.w ? new_label[v.w - 1] : 0;
        quad[i] = v;
    }
    const int64_t rest = quads * 4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (rest < voxels && labels[rest])
        labels[rest] = new_label[labels[rest] - 1];
}

unsigned grid_z(const Grid &g, unsigned blocks_xy)
{
    /* Enough blocks to fill the GPU several times; each loops over the rest of z. */
    uint64_t want = (1u << 16) / (blocks_xy ? blocks_xy : 1) + 1;
    uint64_t z = (uint64_t)g.nz < want ? (uint64_t)g.nz : want;
    return (unsigned)(z > 65535 ? 65535 : z);
}

} // namespace

cudaError_t rank_roots(bool xy, const uint8_t *mask, uint32_t *labels, const uint32_t *segment_offset,
                       uint32_t *tail_label, uint32_t *zero_nodes, uint32_t *zero_count, const Grid &g,
                       cudaStream_t stream)
{
    if (xy) {
        const uint64_t segments = (uint64_t)g.nz * g.n1 * g.nseg;
        const unsigned blocks = (unsigned)((segments * 32 + kThreads - 1) / kThreads);
        rank_roots_xy_kernel<<<blocks, kThreads, 0, stream>>>(mask, labels, segment_offset, tail_label, zero_nodes,
                                                              zero_count, g, (uint32_t)segments);
    } else {
        const unsigned bx = (g.n1 + 31) / 32;
        dim3 grid(bx, g.nseg, grid_z(g, bx * g.nseg));
        rank_roots_yx_kernel<<<grid, kThreads, 0, stream>>>(mask, labels, segment_offset, tail_label, zero_nodes,
                                                            zero_count, g);
    }
    return cudaGetLastError();
}

cudaError_t write_labels(bool xy, const uint8_t *mask, uint32_t *labels, const uint32_t *tail_label,
                         const uint32_t *zero_nodes, const uint32_t *zero_count, unsigned long long *sizes,
                         const Grid &g, cudaStream_t stream)
{
    const unsigned bx = xy ? (g.h0 + 31) / 32 : (g.n1 + 31) / 32;
    const unsigned by = xy ? (g.n1 + 7) / 8 : (g.h0 + 7) / 8;
    dim3 grid(bx, by, grid_z(g, bx * by));
    if (xy) {
        write_labels_kernel<true><<<grid, kThreads, 0, stream>>>(mask, labels, tail_label, sizes, g);
        zero_root_pairs_kernel<true><<<264, kThreads, 0, stream>>>(labels, zero_nodes, zero_count, g);
    } else {
        write_labels_kernel<false><<<grid, kThreads, 0, stream>>>(mask, labels, tail_label, sizes, g);
        zero_root_pairs_kernel<false><<<264, kThreads, 0, stream>>>(labels, zero_nodes, zero_count, g);
    }
    return cudaGetLastError();
}

cudaError_t remap_labels(uint32_t *labels, int64_t voxels, const uint32_t *new_label, cudaStream_t stream)
{
    int64_t quads = voxels / 4;
    int64_t blocks = (quads + kThreads - 1) / kThreads;
    if (blocks < 1)
        blocks = 1;
    if (blocks > 4096)
        blocks = 4096;
    remap_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(labels, voxels, new_label);
    return cudaGetLastError();
}

} // namespace vlccl
