/* Relabel phase of the CUDA labeller, on the blocks of ccl_block_grid.cuh (2x2x2 voxels under 26, 2x2
 * otherwise; under 6 and 4 a split block holds two pieces). Two launches:
 *   flatten  every piece's representative := its root (a walk that only reads, then one write of the
 *            thread's own cell); roots set their bit in a node bitmask and count in their segment;
 *   write    every voxel := its component's label, and the sizes (or, for the `size` order, the sizes
 *            in one pass, over the listed blocks alone on sparse volumes, and the voxels through the
 *            size-order table in another).
 *            A root's label is 1 + (roots before it in node order) = its segment's offset (the scan of
 *            the per-segment root counts) + the roots before it in its segment (popcount over the
 *            bitmask), so no pass has to store labels anywhere before the voxels get them. Each thread
 *            reads only its own unit's cells before overwriting them, so nothing it writes is read by
 *            another thread. */
#include "ccl_kernels.cuh"
#include "ccl_union_find.cuh"

namespace vlccl {
namespace {

constexpr int kSizeCache = 64;

/* Representative rep := its root, or if it is one: its bit set and its segment's root count + 1. The
 * final roots are counted here, once each, rather than the roots after link in compress less the links
 * made in merge, which keeps those passes to their union-find work (chosen by measurement on the bench,
 * bench/gpu_bench.c). */
template <int CONN, bool XY>
__device__ __forceinline__ void flatten_piece(uint32_t *labels, uint32_t *root_bits, uint32_t *segment_roots,
                                              const Grid &g, Representative rep)
{
    const uint32_t parent = __ldcg(labels + rep.slot);
    if (parent == rep.node) {
        atomicOr(root_bits + rep.node / 32, 1u << (rep.node % 32));
        const NodeAt c = node_coords<XY>(g, rep.node);
        atomicAdd(&segment_roots[segment_of(g, c.b, c.i1, c.z)], 1u);
    } else {
        const uint32_t root = find_root_readonly<CONN, XY>(labels, g, parent);
        if (root != parent)
            labels[rep.slot] = root;
    }
}

/* The pieces of block k (bits f != 0). */
template <int CONN, bool XY>
__device__ __forceinline__ void flatten_unit(uint32_t *labels, uint32_t *root_bits, uint32_t *segment_roots,
                                             const Grid &g, BlockAt k, uint32_t f)
{
    flatten_piece<CONN, XY>(labels, root_bits, segment_roots, g, representative<CONN, XY>(g, k, f));
    if (is_split<CONN>(f))
        flatten_piece<CONN, XY>(labels, root_bits, segment_roots, g, second_piece<CONN, XY>(g, k));
}

template <int CONN, bool XY>
__global__ void __launch_bounds__(256) flatten_kernel(const uint8_t *__restrict__ mask, uint32_t *__restrict__ labels,
                                                      uint32_t *__restrict__ root_bits,
                                                      uint32_t *__restrict__ segment_roots, Grid g)
{
    for (uint32_t d = blockIdx.z; d < z_blocks<CONN>(g); d += gridDim.z) {
        BlockAt k;
        if (!block_of_thread<CONN, XY>(g, d, k))
            continue;
        const uint32_t f = block_bits<CONN, XY>(mask, labels, g, k);
        if (f)
            flatten_unit<CONN, XY>(labels, root_bits, segment_roots, g, k, f);
    }
}

/* The same over the blocks that phase 1 listed (all the foreground ones). */
template <int CONN, bool XY>
__global__ void __launch_bounds__(256) flatten_listed_kernel(const uint8_t *__restrict__ mask,
                                                             uint32_t *__restrict__ labels,
                                                             uint32_t *__restrict__ root_bits,
                                                             uint32_t *__restrict__ segment_roots, BlockList list,
                                                             Grid g, FastDiv div_nc)
{
    for (uint64_t i = launch_thread(); i < list.listed; i += launch_threads()) {
        const BlockAt k = block_at_number<CONN>(g, list.entries[i], div_nc);
        flatten_unit<CONN, XY>(labels, root_bits, segment_roots, g, k, block_bits<CONN, XY>(mask, labels, g, k));
    }
}

/* 1 + the number of roots before `root` in node order. */
template <bool XY>
__device__ __forceinline__ uint32_t root_label(const uint32_t *__restrict__ root_bits,
                                               const uint32_t *__restrict__ segment_offset, const Grid &g,
                                               uint32_t root)
{
    const NodeAt c = node_coords<XY>(g, root);
    const uint32_t first = root - c.b % kSegment;
    uint32_t before = 0;
    for (uint32_t w = first / 32; w <= root / 32; w++) {
        uint32_t word = root_bits[w];
        if (w == first / 32)
            word &= ~0u << (first % 32);
        if (w == root / 32)
            word &= (1u << (root % 32)) - 1;
        before += __popc(word);
    }
    return segment_offset[segment_of(g, c.b, c.i1, c.z)] + before + 1;
}

/* Adds `count` voxels to label L, through a per-block cache so that a giant component costs one
 * global atomic per thread block instead of one per warp. */
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

/* Warp aggregation of the sizes: lanes with the same label add their counts (up to 8, four bits) once.
 * All lanes call it; count 0 for lanes without a unit. */
__device__ __forceinline__ void add_unit_sizes(uint32_t *cache_label, unsigned long long *cache_count,
                                               unsigned long long *sizes, uint32_t label, uint32_t count)
{
    unsigned count_bits[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        count_bits[i] = __ballot_sync(0xFFFFFFFFu, count >> i & 1u);
    const unsigned active = __ballot_sync(0xFFFFFFFFu, count != 0);
    if (count) {
        const unsigned peers = __match_any_sync(active, label);
        if (threadIdx.x == (unsigned)(__ffs(peers) - 1)) {
            unsigned long long total = 0;
#pragma unroll
            for (int i = 0; i < 4; i++)
                total += (unsigned long long)__popc(peers & count_bits[i]) << i;
            add_size(cache_label, cache_count, sizes, label, total);
        }
    }
}

/* Block k's pieces (bits f): the main piece's label and voxel count, a split block's second piece's
 * (else 0 and 0). */
struct UnitLabels {
    uint32_t label, count, second_label, second_count;
};

template <int CONN, bool XY>
__device__ __forceinline__ UnitLabels unit_labels(const uint32_t *__restrict__ labels,
                                                  const uint32_t *__restrict__ root_bits,
                                                  const uint32_t *__restrict__ segment_offset, const Grid &g,
                                                  BlockAt k, uint32_t f)
{
    UnitLabels u{0, 0, 0, 0};
    if (f) {
        u.label = root_label<XY>(root_bits, segment_offset, g, labels[representative<CONN, XY>(g, k, f).slot]);
        u.count = __popc(main_bits<CONN>(f));
        if (is_split<CONN>(f)) {
            u.second_label = root_label<XY>(root_bits, segment_offset, g, labels[second_piece<CONN, XY>(g, k).slot]);
            u.second_count = 1; /* one voxel in each node */
        }
    }
    return u;
}

/* The per-thread-block size cache: cleared at the start, flushed to `sizes` at the end. */
__device__ __forceinline__ void clear_size_cache(uint32_t *cache_label, unsigned long long *cache_count, int t)
{
    if (t < kSizeCache) {
        cache_label[t] = 0;
        cache_count[t] = 0;
    }
    __syncthreads();
}

__device__ __forceinline__ void flush_size_cache(const uint32_t *cache_label, const unsigned long long *cache_count,
                                                 unsigned long long *sizes, int t)
{
    __syncthreads();
    if (t < kSizeCache && cache_label[t])
        atomicAdd(sizes + cache_label[t] - 1, cache_count[t]);
}

/* A unit's pieces into the sizes (all lanes call it). */
template <int CONN>
__device__ __forceinline__ void add_unit_labels(uint32_t *cache_label, unsigned long long *cache_count,
                                                unsigned long long *sizes, const UnitLabels &u)
{
    add_unit_sizes(cache_label, cache_count, sizes, u.label, u.count);
    if constexpr (kSplits<CONN>)
        add_unit_sizes(cache_label, cache_count, sizes, u.second_label, u.second_count);
}

/* COUNT: add the units' voxels to the sizes; STORE: write the voxels (through new_label when it is not
 * null). */
template <int CONN, bool XY, bool COUNT, bool STORE>
__global__ void __launch_bounds__(256) write_kernel(const uint8_t *__restrict__ mask, uint32_t *__restrict__ labels,
                                                    const uint32_t *__restrict__ root_bits,
                                                    const uint32_t *__restrict__ segment_offset,
                                                    unsigned long long *__restrict__ sizes,
                                                    const uint32_t *__restrict__ new_label, Grid g)
{
    __shared__ uint32_t cache_label[kSizeCache];
    __shared__ unsigned long long cache_count[kSizeCache];
    const int t = threadIdx.y * 32 + threadIdx.x;
    if constexpr (COUNT)
        clear_size_cache(cache_label, cache_count, t);
    for (uint32_t d = blockIdx.z; d < z_blocks<CONN>(g); d += gridDim.z) {
        BlockAt k;
        UnitLabels u{0, 0, 0, 0};
        if (block_of_thread<CONN, XY>(g, d, k)) {
            const uint32_t f = block_bits<CONN, XY>(mask, labels, g, k);
            u = unit_labels<CONN, XY>(labels, root_bits, segment_offset, g, k, f);
            if constexpr (STORE) {
                const uint32_t stored = new_label && u.label ? new_label[u.label - 1] : u.label;
                const uint32_t second_stored =
                    new_label && u.second_label ? new_label[u.second_label - 1] : u.second_label;
                const uint32_t second = second_bits<CONN>(f);
                for_each_block_voxel<CONN, XY>(g, k, [&](int bit, int64_t v) {
                    labels[v] = second >> bit & 1u ? second_stored : f >> bit & 1u ? stored : 0;
                });
            }
        }
        if constexpr (COUNT)
            add_unit_labels<CONN>(cache_label, cache_count, sizes, u);
    }
    if constexpr (COUNT)
        flush_size_cache(cache_label, cache_count, sizes, t);
}

/* The sizes alone, over the blocks that phase 1 listed (sparse volumes), for the `size` order's first
 * pass: the write pass over the whole grid reads every block's cells. Lanes step through the list
 * together, as the warp aggregation needs. */
template <int CONN, bool XY>
__global__ void __launch_bounds__(256) count_listed_kernel(const uint8_t *__restrict__ mask,
                                                           const uint32_t *__restrict__ labels,
                                                           const uint32_t *__restrict__ root_bits,
                                                           const uint32_t *__restrict__ segment_offset,
                                                           unsigned long long *__restrict__ sizes, BlockList list,
                                                           Grid g, FastDiv div_nc)
{
    __shared__ uint32_t cache_label[kSizeCache];
    __shared__ unsigned long long cache_count[kSizeCache];
    const int t = threadIdx.y * 32 + threadIdx.x;
    clear_size_cache(cache_label, cache_count, t);
    for (uint64_t first = (uint64_t)blockIdx.x * 256; first < list.listed; first += (uint64_t)gridDim.x * 256) {
        UnitLabels u{0, 0, 0, 0};
        if (first + t < list.listed) {
            const BlockAt k = block_at_number<CONN>(g, list.entries[first + t], div_nc);
            u = unit_labels<CONN, XY>(labels, root_bits, segment_offset, g, k, block_bits<CONN, XY>(mask, labels, g, k));
        }
        add_unit_labels<CONN>(cache_label, cache_count, sizes, u);
    }
    flush_size_cache(cache_label, cache_count, sizes, t);
}

template <int CONN, bool XY>
struct Unit {
    static constexpr int conn = CONN;
    static constexpr bool xy = XY;
};

/* Calls launch(Unit<C, XY>{}) with one C per block shape: 26, 18 (also 8), 6 (also 4: the same blocks,
 * which split where their nodes meet only at a corner). */
template <typename Launch>
cudaError_t for_unit_shape(int connectivity, bool xy, Launch launch)
{
    if (connectivity == 26)
        xy ? launch(Unit<26, true>{}) : launch(Unit<26, false>{});
    else if (connectivity == 18 || connectivity == 8)
        xy ? launch(Unit<18, true>{}) : launch(Unit<18, false>{});
    else
        xy ? launch(Unit<6, true>{}) : launch(Unit<6, false>{});
    return cudaGetLastError();
}

/* write_kernel's launch grid: fewer, longer-lived thread blocks for the sizes, each flushing its cache once. */
template <int CONN, bool XY>
dim3 write_launch_grid(const Grid &g)
{
    const dim3 plane = block_launch_grid<CONN, XY>(g, 1);
    return block_launch_grid<CONN, XY>(g, (1u << 16) / (plane.x * plane.y) + 1);
}

} // namespace

cudaError_t flatten_roots(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, uint32_t *root_bits,
                          uint32_t *segment_roots, const BlockList &list, const Grid &g, cudaStream_t stream)
{
    return for_unit_shape(connectivity, xy, [&](auto unit) {
        using U = decltype(unit);
        if (list.listed == kEmpty) {
            flatten_kernel<U::conn, U::xy><<<block_launch_grid<U::conn, U::xy>(g, 65535), dim3(32, 8), 0, stream>>>(
                mask, labels, root_bits, segment_roots, g);
        } else if (list.listed > 0) {
            const FastDiv div_nc = make_fastdiv((g.n1 + kBlock1 - 1) / kBlock1);
            flatten_listed_kernel<U::conn, U::xy><<<(list.listed + 255) / 256, dim3(32, 8), 0, stream>>>(
                mask, labels, root_bits, segment_roots, list, g, div_nc);
        }
    });
}

cudaError_t write_labels(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, const uint32_t *root_bits,
                         const uint32_t *segment_offset, unsigned long long *sizes, const uint32_t *new_label,
                         const Grid &g, cudaStream_t stream)
{
    return for_unit_shape(connectivity, xy, [&](auto unit) {
        using U = decltype(unit);
        const dim3 grid = write_launch_grid<U::conn, U::xy>(g);
        const auto kernel = sizes ? write_kernel<U::conn, U::xy, true, true> : write_kernel<U::conn, U::xy, false, true>;
        kernel<<<grid, dim3(32, 8), 0, stream>>>(mask, labels, root_bits, segment_offset, sizes, new_label, g);
    });
}

cudaError_t count_sizes(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, const uint32_t *root_bits,
                        const uint32_t *segment_offset, unsigned long long *sizes, const BlockList &list,
                        const Grid &g, cudaStream_t stream)
{
    return for_unit_shape(connectivity, xy, [&](auto unit) {
        using U = decltype(unit);
        if (list.listed == kEmpty) {
            write_kernel<U::conn, U::xy, true, false><<<write_launch_grid<U::conn, U::xy>(g), dim3(32, 8), 0, stream>>>(
                mask, labels, root_bits, segment_offset, sizes, nullptr, g);
        } else if (list.listed > 0) {
            const FastDiv div_nc = make_fastdiv((g.n1 + kBlock1 - 1) / kBlock1);
            const uint32_t blocks = (list.listed + 255) / 256;
            count_listed_kernel<U::conn, U::xy><<<blocks < 1024 ? blocks : 1024, dim3(32, 8), 0, stream>>>(
                mask, labels, root_bits, segment_offset, sizes, list, g, div_nc);
        }
    });
}

} // namespace vlccl
