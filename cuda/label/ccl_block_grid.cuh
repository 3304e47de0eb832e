/* Node blocks: the units of the block union-find (ccl_blocks.cu) and of the relabel (ccl_relabel.cu).
 *
 * A block is 1 x 2 x BZ nodes (b, i1, z) of the node grid (ccl_common.cuh): 2x2x2 voxels under 26, a
 * 2x2 square of one slice under 18, 8, 6 and 4. Under 26, 18 and 8 every foreground voxel of a block
 * touches every other one, so the block is one *piece*. Under 6 and 4 its two nodes touch unless they
 * meet only at a corner (bits 0b1001 or 0b0110): such a *split* block holds two pieces, its nodes.
 *
 * Block bits: bit 2p + t is voxel a0 = 2b + t of the block's node p = jz*2 + j1, which is node
 * (b, 2c + j1, BZ*d + jz). Nodes p are numbered in node order, so a piece's first foreground node (its
 * representative) is its minimum-key node. A block's *main* piece holds its first foreground node; a
 * split block's second piece is its node 1.
 *
 * Storage during union-find, in the labels buffer: under 8, 18 and 26 a block's parent (that of its
 * representative) lives at its first cell (voxel t = 0 of node 0) and its bits in the next cell along
 * memory x (node 0's second voxel under matlab-xy, node 1's first under matlab), when the block has
 * one there. So a block's union-find state is 8 adjacent bytes, and the blocks of a row of lanes fill
 * whole sectors: the passes touch a quarter (26) or half (18, 8) of the labels buffer's sectors. Under 6
 * and 4 a representative's parent lives at its own first voxel (a split block has two), and the bits at
 * node 0's second voxel, so the passes read both of the block's lines, twice the sectors of 18. That
 * keeps the bits beside the parents, so merge need not test the neighbours again (as it would with both
 * parents in 8 adjacent bytes and the bits read from the mask); and fewer bytes would not help compress
 * and flatten, which wait on their root walks, not on bytes. Chosen by measurement on the bench
 * (bench/gpu_bench.c). */
#ifndef VL_CCL_BLOCK_GRID_CUH
#define VL_CCL_BLOCK_GRID_CUH

#include <cuda_runtime.h>

#include "ccl_common.cuh"

namespace vlccl {

constexpr int kBlock1 = 2;
template <int CONN>
constexpr int kBlockZ = CONN == 26 ? 2 : 1;

/* Can a block's foreground be two pieces? */
template <int CONN>
constexpr bool kSplits = CONN == 6 || CONN == 4;

template <int CONN>
__device__ __forceinline__ bool is_split(uint32_t f)
{
    return kSplits<CONN> && (f == 0x9u || f == 0x6u);
}

struct BlockAt {
    uint32_t b, c, d;
};

template <int CONN>
__device__ __forceinline__ uint32_t i1_blocks(const Grid &g)
{
    return (g.n1 + kBlock1 - 1) / kBlock1;
}

template <int CONN>
__device__ __forceinline__ uint32_t z_blocks(const Grid &g)
{
    return (uint32_t)((g.nz + kBlockZ<CONN> - 1) / kBlockZ<CONN>);
}

template <int CONN>
__device__ __forceinline__ bool block_inside(const Grid &g, int64_t b, int64_t c, int64_t d)
{
    return b >= 0 && b < g.h0 && c >= 0 && c < i1_blocks<CONN>(g) && d >= 0 && d < z_blocks<CONN>(g);
}

/* Calls visit(t, v) for voxel v (voxel index) of the block holding block bit t, for every voxel of the
 * block inside the volume. */
template <int CONN, bool XY, typename Visit>
__device__ __forceinline__ void for_each_block_voxel(const Grid &g, BlockAt k, Visit visit)
{
#pragma unroll
    for (int jz = 0; jz < kBlockZ<CONN>; jz++)
#pragma unroll
        for (int j1 = 0; j1 < kBlock1; j1++) {
            const uint32_t i1 = kBlock1 * k.c + j1, z = kBlockZ<CONN> * k.d + jz;
            if (i1 >= g.n1 || z >= (uint32_t)g.nz)
                continue;
            const int64_t v = voxel_index<XY>(g, k.b, i1, z, 0);
            const int bit = 2 * (jz * kBlock1 + j1);
            visit(bit, v);
            if (2 * k.b + 1 < g.n0)
                visit(bit + 1, v + (XY ? 1 : g.nx));
        }
}

/* A block's first cell: the parent of its representative during union-find (under 6 and 4, when that
 * is node 0). */
template <int CONN, bool XY>
__device__ __forceinline__ int64_t parent_cell(const Grid &g, BlockAt k)
{
    return voxel_index<XY>(g, k.b, kBlock1 * k.c, kBlockZ<CONN> * k.d, 0);
}

/* Where the parent of representative n lives: its block's first cell, or under 6 and 4 its own first
 * voxel. */
template <int CONN, bool XY>
__device__ __forceinline__ int64_t parent_cell_of(const Grid &g, uint32_t n)
{
    const NodeAt c = node_coords<XY>(g, n);
    if constexpr (kSplits<CONN>)
        return voxel_index<XY>(g, c.b, c.i1, c.z, 0);
    return voxel_index<XY>(g, c.b, c.i1 - c.i1 % kBlock1, c.z - c.z % kBlockZ<CONN>, 0);
}

/* From a block's first cell to node 1's first voxel. */
template <bool XY>
__device__ __forceinline__ int64_t node1_step(const Grid &g)
{
    return XY ? g.nx : 1;
}

/* From a block's first cell to its bits cell: the next cell along memory x, or under 6 and 4 (where
 * node 1's first voxel may hold a parent) node 0's second voxel. */
template <int CONN, bool XY>
__device__ __forceinline__ int64_t bits_step(const Grid &g)
{
    return kSplits<CONN> && !XY ? g.nx : 1;
}

/* Does block k have a bits cell? Not where the line ends at the block's first cell. */
template <int CONN, bool XY>
__device__ __forceinline__ bool has_bits_cell(const Grid &g, BlockAt k)
{
    return XY || kSplits<CONN> ? 2 * k.b + 1 < g.n0 : kBlock1 * k.c + 1 < g.n1;
}

template <int CONN, bool XY>
__device__ __forceinline__ uint32_t block_bits_from_mask(const uint8_t *__restrict__ mask, const Grid &g, BlockAt k)
{
    uint32_t bits = 0;
    for_each_block_voxel<CONN, XY>(g, k, [&](int bit, int64_t v) { bits |= (uint32_t)(mask[v] != 0) << bit; });
    return bits;
}

/* The bits cell holds the block's bits in its low byte (kBitsMask) and, from link on, the backward
 * neighbours it is connected to (bit o of the offsets in ccl_common.cuh) from bit kConnectedShift. */
constexpr uint32_t kBitsMask = 0xFFu;
constexpr int kConnectedShift = 8;

/* A block's bits cell after init (else its bits from the mask): the bits and, from link on, the kept
 * connections; labels from init on, until the write pass overwrites the block. */
template <int CONN, bool XY>
__device__ __forceinline__ uint32_t block_word(const uint8_t *__restrict__ mask, const uint32_t *labels,
                                               const Grid &g, BlockAt k)
{
    return has_bits_cell<CONN, XY>(g, k) ? labels[parent_cell<CONN, XY>(g, k) + bits_step<CONN, XY>(g)]
                                         : block_bits_from_mask<CONN, XY>(mask, g, k);
}

template <int CONN, bool XY>
__device__ __forceinline__ uint32_t block_bits(const uint8_t *__restrict__ mask, const uint32_t *labels,
                                               const Grid &g, BlockAt k)
{
    return block_word<CONN, XY>(mask, labels, g, k) & kBitsMask;
}

/* A piece's representative (its node number) and the cell holding its parent. */
struct Representative {
    uint32_t node;
    int64_t slot;
};

/* Index of the representative among the block's nodes. */
__device__ __forceinline__ uint32_t representative_node(uint32_t f)
{
    return (__ffs((f | f >> 1) & 0x55u) - 1) / 2;
}

/* The representative of block k's main piece (bits f != 0). */
template <int CONN, bool XY>
__device__ __forceinline__ Representative representative(const Grid &g, BlockAt k, uint32_t f)
{
    const uint32_t p = representative_node(f);
    const uint32_t i1 = kBlock1 * k.c + p % kBlock1, z = kBlockZ<CONN> * k.d + p / kBlock1;
    const int64_t cell = parent_cell<CONN, XY>(g, k);
    return Representative{node_number(g, k.b, i1, z), kSplits<CONN> && p ? cell + node1_step<XY>(g) : cell};
}

/* A split block's second piece: its node 1. */
template <int CONN, bool XY>
__device__ __forceinline__ Representative second_piece(const Grid &g, BlockAt k)
{
    return Representative{node_number(g, k.b, kBlock1 * k.c + 1, k.d), parent_cell<CONN, XY>(g, k) + node1_step<XY>(g)};
}

/* Bits of a block's main piece and, for a split block, of its second piece (else 0). */
template <int CONN>
__device__ __forceinline__ uint32_t main_bits(uint32_t f)
{
    return is_split<CONN>(f) ? f & 0x3u : f;
}

template <int CONN>
__device__ __forceinline__ uint32_t second_bits(uint32_t f)
{
    return is_split<CONN>(f) ? f & 0xCu : 0;
}

/* Threads (32 x 8 per thread block) walk memory x: lanes along i1 blocks for `matlab`, along b for
 * `matlab-xy`; blockIdx.z steps through z blocks. */
template <int CONN, bool XY>
__device__ __forceinline__ bool block_of_thread(const Grid &g, uint32_t d, BlockAt &k)
{
    const uint32_t fast = blockIdx.x * 32 + threadIdx.x, slow = blockIdx.y * 8 + threadIdx.y;
    k = XY ? BlockAt{fast, slow, d} : BlockAt{slow, fast, d};
    return block_inside<CONN>(g, k.b, k.c, k.d);
}

/* Linear number of a block, for the block list: (d*nc + c)*h0 + b < nodes < 2^32; div_nc divides by
 * nc = i1_blocks. */
template <int CONN>
__device__ __forceinline__ uint32_t block_number(const Grid &g, BlockAt k)
{
    return (k.d * i1_blocks<CONN>(g) + k.c) * g.h0 + k.b;
}

template <int CONN>
__device__ __forceinline__ BlockAt block_at_number(const Grid &g, uint32_t number, FastDiv div_nc)
{
    const uint32_t line = fdiv(number, g.div_h0), d = fdiv(line, div_nc);
    return BlockAt{number - line * g.h0, line - d * i1_blocks<CONN>(g), d};
}

/* Thread number i of a (32 x 8)-thread launch, and the launch's thread count. */
__device__ __forceinline__ uint64_t launch_thread()
{
    return (((uint64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * 256 + threadIdx.y * 32 +
           threadIdx.x;
}

__device__ __forceinline__ uint64_t launch_threads() { return (uint64_t)gridDim.x * gridDim.y * gridDim.z * 256; }

/* Launch grid for block_of_thread: every block of a z slab once, at most max_z thread blocks deep
 * (kernels loop over the remaining z). */
template <int CONN, bool XY>
inline dim3 block_launch_grid(const Grid &g, uint64_t max_z)
{
    const uint32_t blocks1 = (g.n1 + kBlock1 - 1) / kBlock1;
    const uint32_t fast = XY ? g.h0 : blocks1, slow = XY ? blocks1 : g.h0;
    uint64_t depth = (uint64_t)(g.nz + kBlockZ<CONN> - 1) / kBlockZ<CONN>;
    depth = depth < max_z ? depth : max_z;
    return dim3((fast + 31) / 32, (slow + 7) / 8, (unsigned)(depth < 65535 ? depth : 65535));
}

} // namespace vlccl

#endif
