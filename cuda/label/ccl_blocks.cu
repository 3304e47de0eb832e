/* Union-find phase of the CUDA labeller, on blocks of nodes in global memory, for every connectivity.
 * (Blocks rather than tiles labelled in shared memory, for 4 and 6 as for 26 and 18: chosen by
 * measurement on the bench, bench/gpu_bench.c; docs/gpu.md lists what is not supported.)
 *
 * Blocks (ccl_block_grid.cuh) are 2x2x2 voxels under 26 and a 2x2 square of one slice otherwise. Under
 * 26, 18 and 8 every foreground voxel of a block is connected to every other one; under 6 and 4 a block
 * whose two nodes meet only at a corner holds two pieces. So union-find runs on pieces of blocks: about a
 * quarter (26) or half (18, 8, 6, 4) of the nodes, each with at most 13 backward neighbours (3 under 6).
 * Under 6 and 4 too, 2x2 blocks rather than single nodes: half the units to walk, at the price of split
 * blocks (chosen by measurement on the bench, bench/gpu_bench.c).
 *
 * A piece's representative is its first foreground node in node order (= key order), so linking toward
 * the smaller representative still leaves each component rooted at its minimum-key node. A block keeps
 * its representative's parent in its parent cell (under 6 and 4 a representative node 1 in its own first
 * voxel) and its bits (and from link on its kept connections) in the bits cell (ccl_block_grid.cuh).
 *
 * Four launches (after Allegretti, Bolelli and Grana's BKE, TPDS 2020):
 *   init      every block's parent cell := its representative, its bits cell := its bits, in whole
 *             sectors; the foreground blocks are listed, and when the list holds them all (sparse
 *             volumes) the next three kernels and the relabel's flatten run one thread per listed block;
 *   link      each representative points at a smaller node of its component, found over the block's
 *             connected neighbours, its run of lanes and its tile (see link_blocks_kernel): a forest
 *             without atomics; the connected neighbours go to the bits cell;
 *   compress  every representative := its root;
 *   merge     connected neighbours whose roots still differ are united (atomicMin union-find).
 * Neighbours are addressed by grid steps from the block (Neighbourhood): link and merge are bound by
 * instruction issue on dense volumes, so a neighbour must cost a few adds, not a 64-bit index computation. */
#include "ccl_kernels.cuh"
#include "ccl_union_find.cuh"

namespace vlccl {
namespace {

/* Can some voxel of a block touch some voxel of the block at backward offset o under CONN, given the
 * voxels present (bit masks fa, fb; all of them when fa = fb = ~0)? Brute force, evaluated at compile time. */
template <int CONN>
constexpr bool blocks_touch(int o, uint32_t fa, uint32_t fb)
{
    constexpr int voxels = 2 * kBlock1 * kBlockZ<CONN>;
    for (int va = 0; va < voxels; va++)
        for (int vb = 0; vb < voxels; vb++) {
            const int pa = va / 2, pb = vb / 2;
            const int d0 = 2 * backward_offset(o, 0) + vb % 2 - va % 2;
            const int d1 = kBlock1 * backward_offset(o, 1) + pb % kBlock1 - pa % kBlock1;
            const int dz = kBlockZ<CONN> * backward_offset(o, 2) + pb / kBlock1 - pa / kBlock1;
            if ((fa >> va & 1u) && (fb >> vb & 1u) && voxel_step_ok<CONN>(d0, d1, dz))
                return true;
        }
    return false;
}

/* For 18, 8, 6 and 4: the voxels of the block at backward offset o (a bit mask, in that block's bit
 * numbering) that voxel v of this block touches. Constant once the loops over o and v are unrolled, so
 * a connection test is a few ORs. A 16x16-bit table per offset in constant memory, indexed by both
 * blocks' bits, would serialise: the lanes of a warp read different words of it. */
template <int CONN>
__host__ __device__ constexpr uint32_t touched_by_voxel(int o, int v)
{
    uint32_t reach = 0;
    for (int w = 0; w < 2 * kBlock1 * kBlockZ<CONN>; w++)
        if (blocks_touch<CONN>(o, 1u << v, 1u << w))
            reach |= 1u << w;
    return reach;
}

/* Bits of the side of a 2x2x2 block that faces offset d (-1, 0, +1) along the b, i1 and z axes. */
__device__ __forceinline__ uint32_t facing(int d, uint32_t low, uint32_t high)
{
    return d < 0 ? low : d > 0 ? high : low | high;
}

template <int CONN>
__device__ __forceinline__ bool blocks_connected(int o, uint32_t fa, uint32_t fb)
{
    if (CONN == 26) {
        const int db = backward_offset(o, 0), d1 = backward_offset(o, 1), dz = backward_offset(o, 2);
        const uint32_t a = facing(db, 0x55, 0xAA) & facing(d1, 0x33, 0xCC) & facing(dz, 0x0F, 0xF0);
        const uint32_t b = facing(-db, 0x55, 0xAA) & facing(-d1, 0x33, 0xCC) & facing(-dz, 0x0F, 0xF0);
        return (fa & a) && (fb & b);
    }
    uint32_t reach = 0;
#pragma unroll
    for (int v = 0; v < 2 * kBlock1 * kBlockZ<CONN>; v++)
        if (fa >> v & 1u)
            reach |= touched_by_voxel<CONN>(o, v);
    return reach & fb;
}

/* Offsets that can never connect under CONN are skipped at compile time. */
template <int CONN>
__host__ __device__ constexpr bool offset_used(int o)
{
    return blocks_touch<CONN>(o, ~0u, ~0u);
}

/* Calls body(k, f, kept) for every block k with foreground (bits f and kept connections, read from its
 * bits cell after init, else from the mask with kept = 0): LISTED, from the
 * `listed` entries of the list (sparse volumes: every lane gets a foreground block), else from the
 * whole grid. Two instantiations, chosen by the host: one kernel with both paths needs the registers of
 * both, which dense volumes pay for in occupancy. */
template <int CONN, bool XY, bool LISTED, typename Body>
__device__ __forceinline__ void for_each_foreground_block(const uint8_t *__restrict__ mask, const uint32_t *labels,
                                                          const BlockList &list, uint32_t listed, const Grid &g,
                                                          FastDiv div_nc, Body body)
{
    if constexpr (LISTED) {
        for (uint64_t i = launch_thread(); i < listed; i += launch_threads()) {
            const BlockAt k = block_at_number<CONN>(g, list.entries[i], div_nc);
            const uint32_t word = block_word<CONN, XY>(mask, labels, g, k);
            body(k, word & kBitsMask, word >> kConnectedShift);
        }
    } else {
        for (uint32_t d = blockIdx.z; d < z_blocks<CONN>(g); d += gridDim.z) {
            BlockAt k;
            if (!block_of_thread<CONN, XY>(g, d, k))
                continue;
            const uint32_t word = block_word<CONN, XY>(mask, labels, g, k);
            if (word & kBitsMask)
                body(k, word & kBitsMask, word >> kConnectedShift);
        }
    }
}

/* Foreground blocks a thread block of init gathers in shared memory before it appends them to the list
 * with one global atomic, so that init on sparse volumes does not pay one global atomic per step of
 * every thread block. */
constexpr uint32_t kStaged = 2048;

/* Init's writes for block k (bits f): its parent cell := its representative and its bits cell := f, for
 * every block of the grid (neighbours read the bits of empty blocks too), so that the lanes of a row
 * fill whole sectors: a sector written in part costs a DRAM read to fill the rest. Under 6 and 4 both
 * nodes' first voxels (either may hold a parent) and the block's fourth cell too, so both of the
 * block's rows are written whole. */
template <int CONN, bool XY>
__device__ __forceinline__ void write_init_cells(uint32_t *labels, const Grid &g, BlockAt k, uint32_t f)
{
    const int64_t cell = parent_cell<CONN, XY>(g, k);
    const bool bits_cell = has_bits_cell<CONN, XY>(g, k);
    if (bits_cell)
        labels[cell + bits_step<CONN, XY>(g)] = f;
    if constexpr (kSplits<CONN>) {
        const uint32_t node0 = node_number(g, k.b, kBlock1 * k.c, k.d);
        labels[cell] = f & 0x3u ? node0 : kEmpty;
        if (kBlock1 * k.c + 1 < g.n1) {
            const int64_t cell1 = cell + node1_step<XY>(g);
            labels[cell1] = f & 0xCu ? node0 + g.h0 : kEmpty;
            if (bits_cell)
                labels[cell1 + bits_step<CONN, XY>(g)] = kEmpty;
        }
    } else {
        labels[cell] = f ? representative<CONN, XY>(g, k, f).node : kEmpty;
    }
}

template <int CONN, bool XY>
__global__ void __launch_bounds__(256) init_blocks_kernel(const uint8_t *__restrict__ mask,
                                                          uint32_t *__restrict__ labels, BlockList list, Grid g)
{
    __shared__ uint32_t staged[kStaged];
    __shared__ uint32_t staged_count, staged_base;
    const int t = threadIdx.y * 32 + threadIdx.x;
    if (t == 0)
        staged_count = 0;
    __syncthreads();
    uint32_t count = 0; /* = staged_count, kept by every thread: read from shared memory it could race */
    for (uint32_t d = blockIdx.z; d < z_blocks<CONN>(g); d += gridDim.z) {
        BlockAt k;
        const bool inside = block_of_thread<CONN, XY>(g, d, k);
        const uint32_t f = inside ? block_bits_from_mask<CONN, XY>(mask, g, k) : 0;
        if (inside)
            write_init_cells<CONN, XY>(labels, g, k, f);
        /* Stage this step's foreground blocks (a warp's stay together), and append the stage to the list
         * when the next step might not fit, or at the last step. */
        const unsigned found = __ballot_sync(0xFFFFFFFFu, f != 0);
        uint32_t warp_offset = 0;
        if (found && threadIdx.x == 0)
            warp_offset = atomicAdd(&staged_count, (uint32_t)__popc(found));
        warp_offset = __shfl_sync(0xFFFFFFFFu, warp_offset, 0);
        if (f)
            staged[warp_offset + __popc(found & ((1u << threadIdx.x) - 1))] = block_number<CONN>(g, k);
        count += __syncthreads_count(f != 0);
        if (count > kStaged - 256 || d + gridDim.z >= z_blocks<CONN>(g)) {
            if (t == 0)
                staged_base = count ? atomicAdd(list.count, count) : 0;
            __syncthreads();
            for (uint32_t i = t; i < count && staged_base + i < list.capacity; i += 256)
                list.entries[staged_base + i] = staged[i];
            __syncthreads();
            if (t == 0)
                staged_count = 0;
            count = 0;
            __syncthreads();
        }
    }
}

/* Block k's 13 backward neighbours, addressed from k by steps of the grid, so that a neighbour costs a
 * few adds instead of a 64-bit index computation: link and merge are bound by instruction issue on
 * dense volumes, not by DRAM. */
template <int CONN, bool XY>
struct Neighbourhood {
    BlockAt k;
    int64_t cell;   /* block k's parent cell (ccl_block_grid.cuh) */
    uint32_t node;  /* node number of block k's node 0 */
    uint32_t edges; /* kFirstB ... kNextSingle */

    static constexpr uint32_t kFirstB = 1, kLastB = 2, kFirstC = 4, kLastC = 8, kFirstD = 16;
    /* The axis along which a block's bits cell follows its first cell (has_bits_cell): b under
     * matlab-xy, 6 and 4, else c. kSingle: block k has no bits cell; kNextSingle: the block after it
     * along that axis has none. */
    static constexpr int kPairAxis = XY || kSplits<CONN> ? 0 : 1;
    static constexpr uint32_t kSingle = 32, kNextSingle = 64;

    __device__ __forceinline__ Neighbourhood(const Grid &g, BlockAt at)
        : k(at), cell(parent_cell<CONN, XY>(g, at)),
          node(node_number(g, at.b, kBlock1 * at.c, kBlockZ<CONN> * at.d))
    {
        const uint32_t last = kPairAxis == 0 ? 2 * at.b + 1 : kBlock1 * at.c + 1;
        const uint32_t end = kPairAxis == 0 ? g.n0 : g.n1, step = kPairAxis == 0 ? 2 : kBlock1;
        edges = (at.b == 0 ? kFirstB : 0) | (at.b + 1 == g.h0 ? kLastB : 0) | (at.c == 0 ? kFirstC : 0) |
                (at.c + 1 == i1_blocks<CONN>(g) ? kLastC : 0) | (at.d == 0 ? kFirstD : 0) |
                (last >= end ? kSingle : 0) | (last + step >= end ? kNextSingle : 0);
    }

    __device__ __forceinline__ static int64_t cell_step(const Grid &g, int o)
    {
        const int db = backward_offset(o, 0), dc = backward_offset(o, 1), dz = backward_offset(o, 2);
        return db * (XY ? 2 : 2 * g.nx) + dc * (XY ? kBlock1 * g.nx : kBlock1) +
               dz * (kBlockZ<CONN> * g.sxy);
    }

    __device__ __forceinline__ static uint32_t node_step(const Grid &g, int o)
    {
        const int db = backward_offset(o, 0), dc = backward_offset(o, 1), dz = backward_offset(o, 2);
        return (uint32_t)db + (uint32_t)dc * (kBlock1 * g.h0) + (uint32_t)dz * (kBlockZ<CONN> * g.n1 * g.h0);
    }

    __device__ __forceinline__ bool inside(int o) const
    {
        const int db = backward_offset(o, 0), dc = backward_offset(o, 1), dz = backward_offset(o, 2);
        const uint32_t faces = (db < 0 ? kFirstB : db > 0 ? kLastB : 0) | (dc < 0 ? kFirstC : dc > 0 ? kLastC : 0) |
                               (dz < 0 ? kFirstD : 0);
        return !(edges & faces);
    }

    /* Neighbour o's bits, after init (o inside the grid). */
    __device__ __forceinline__ uint32_t bits(const uint8_t *__restrict__ mask, const uint32_t *labels, const Grid &g,
                                             int o) const
    {
        const int d = backward_offset(o, kPairAxis);
        const bool single = edges & (d == 0 ? kSingle : d > 0 ? kNextSingle : 0);
        const int64_t at = cell + cell_step(g, o);
        if (!single)
            return labels[at + bits_step<CONN, XY>(g)] & kBitsMask;
        return block_bits_from_mask<CONN, XY>(
            mask, g, BlockAt{k.b + backward_offset(o, 0), k.c + backward_offset(o, 1), k.d + backward_offset(o, 2)});
    }

    __device__ __forceinline__ int64_t cell_of(const Grid &g, int o) const { return cell + cell_step(g, o); }

    /* The representative of neighbour o (bits fn != 0) under 8, 18 and 26, where a block is one piece
     * (under 6 and 4 link_candidate finds the neighbour's pieces itself). */
    __device__ __forceinline__ Representative representative(const Grid &g, int o, uint32_t fn) const
    {
        const uint32_t p = representative_node(fn);
        const uint32_t n = node + node_step(g, o) + p % kBlock1 * g.h0 + p / kBlock1 * (g.n1 * g.h0);
        return Representative{n, cell_of(g, o)};
    }
};

/* Under 6 and 4 a block touches three backward neighbours (two under 4), numbered s = 0, 1, 2. */
__host__ __device__ constexpr int split_offset(int s)
{
    return s == 0 ? 4 : s == 1 ? 10 : 12;
}

/* Kept connections (the bits cell from kConnectedShift). Under 8, 18 and 26 bit o: the block touches
 * backward neighbour o. Under 6 and 4 bit 4s + 2a + p: the block's piece a (0 main, 1 second) touches
 * the piece of neighbour split_offset(s) whose representative is that block's node p. */
template <int CONN>
__host__ __device__ constexpr bool kept_bit_used(int i)
{
    return kSplits<CONN> ? i < 12 && offset_used<CONN>(split_offset(i / 4)) : offset_used<CONN>(i);
}

/* Kept connections of piece a. */
template <int CONN>
__host__ __device__ constexpr uint32_t piece_connections(int a)
{
    return kSplits<CONN> ? (a ? 0xCCCu : 0x333u) : 0x1FFFu;
}

/* The cell holding the parent of the neighbour piece of kept connection i. */
template <int CONN, bool XY>
__device__ __forceinline__ int64_t kept_cell(const Grid &g, const Neighbourhood<CONN, XY> &around, int i)
{
    if constexpr (kSplits<CONN>)
        return around.cell_of(g, split_offset(i / 4)) + (i & 1 ? node1_step<XY>(g) : 0);
    return around.cell_of(g, i);
}

/* Calls body(o, rep) for every backward neighbour block o (representative rep) that CONN connects to
 * block k (bits f). Unrolled so that the 13 neighbours' loads are in flight together. */
template <int CONN, bool XY, typename Body>
__device__ __forceinline__ void for_each_connected_neighbour(const uint8_t *__restrict__ mask, const uint32_t *labels,
                                                             const Grid &g, const Neighbourhood<CONN, XY> &around,
                                                             uint32_t f, Body body)
{
#pragma unroll
    for (int o = 0; o < 13; o++) {
        if (!offset_used<CONN>(o) || !around.inside(o))
            continue;
        const uint32_t fn = around.bits(mask, labels, g, o);
        if (fn && blocks_connected<CONN>(o, f, fn))
            body(o, around.representative(g, o, fn));
    }
}

/* Block k (bits f != 0): its main piece's representative, the smallest representative among it and the
 * backward neighbour pieces it touches, which neighbours' main pieces it touches (bit o), and the kept
 * connections of both pieces; for a split block also its second piece and the smallest representative
 * among it and the neighbour pieces it touches (else kEmpty for both). */
struct LinkCandidate {
    Representative own;
    uint32_t smallest;
    uint32_t connected;
    uint32_t kept;
    Representative second;
    uint32_t second_smallest;
};

template <int CONN, bool XY>
__device__ __forceinline__ LinkCandidate link_candidate(const uint8_t *__restrict__ mask, const uint32_t *labels,
                                                        const Grid &g, BlockAt k, uint32_t f)
{
    const Neighbourhood<CONN, XY> around(g, k);
    LinkCandidate c{representative<CONN, XY>(g, k, f), 0, 0, 0, {kEmpty, 0}, kEmpty};
    c.smallest = c.own.node;
    if constexpr (kSplits<CONN>) {
        const uint32_t piece_bits[2] = {main_bits<CONN>(f), second_bits<CONN>(f)};
        if (piece_bits[1]) {
            c.second = second_piece<CONN, XY>(g, k);
            c.second_smallest = c.second.node;
        }
#pragma unroll
        for (int s = 0; s < 3; s++) {
            const int o = split_offset(s);
            if (!offset_used<CONN>(o) || !around.inside(o))
                continue;
            const uint32_t fn = around.bits(mask, labels, g, o), main_node = representative_node(fn);
#pragma unroll
            for (uint32_t p = 0; p < 2; p++) {
                const uint32_t other = is_split<CONN>(fn) ? fn & (p ? 0xCu : 0x3u) : p == main_node ? fn : 0;
                if (!other)
                    continue;
                const uint32_t node = around.node + around.node_step(g, o) + p * g.h0;
#pragma unroll
                for (int a = 0; a < 2; a++) {
                    if (!blocks_connected<CONN>(o, piece_bits[a], other))
                        continue;
                    c.kept |= 1u << (4 * s + 2 * a + p);
                    if (a == 0) {
                        c.smallest = min(c.smallest, node);
                        c.connected |= (p == main_node ? 1u : 0u) << o;
                    } else {
                        c.second_smallest = min(c.second_smallest, node);
                    }
                }
            }
        }
    } else {
        for_each_connected_neighbour<CONN, XY>(mask, labels, g, around, f, [&](int o, Representative other) {
            c.smallest = min(c.smallest, other.node);
            c.connected |= 1u << o;
        });
        c.kept = c.connected;
    }
    return c;
}

/* A split block's second piece points at the smallest neighbour piece it touches. */
__device__ __forceinline__ void link_second_piece(uint32_t *labels, const LinkCandidate &c)
{
    if (c.second_smallest < c.second.node)
        labels[c.second.slot] = c.second_smallest;
}

/* Link stores block k's kept connections beside its bits, so that merge reads them instead of each
 * neighbour's bits (where the block has no bits cell, merge tests the neighbours again). Neighbours
 * reading the bits meanwhile mask them. */
template <int CONN, bool XY>
__device__ __forceinline__ void keep_connected(uint32_t *labels, const Grid &g, BlockAt k, uint32_t f,
                                               const LinkCandidate &c)
{
    if (has_bits_cell<CONN, XY>(g, k))
        labels[parent_cell<CONN, XY>(g, k) + bits_step<CONN, XY>(g)] = f | c.kept << kConnectedShift;
}

/* A thread block of the grid walks a tile of 32 x 8 blocks of one z slab: lanes along memory x, warps
 * along the other in-plane axis. Backward offset o (9 to 12, in the slab) seen as a step between tile
 * cells: rows (warps) and lanes. */
template <bool XY>
__device__ __forceinline__ int tile_row_step(int o)
{
    return XY ? backward_offset(o, 1) : backward_offset(o, 0);
}

template <bool XY>
__device__ __forceinline__ int tile_lane_step(int o)
{
    return XY ? backward_offset(o, 0) : backward_offset(o, 1);
}

/* The offset of the previous lane's block: (b, c - 1) under matlab order, (b - 1, c) under matlab-xy. */
template <bool XY>
constexpr int kPreviousLane = XY ? 12 : 10;

/* The minimum of v over the lane's run: the lanes before it up to the first that does not join its
 * previous lane, and the lanes after it that join theirs. All lanes call it. */
__device__ __forceinline__ uint32_t run_minimum(uint32_t v, bool joins_previous)
{
    const unsigned lane = threadIdx.x;
    const unsigned joins = __ballot_sync(0xFFFFFFFFu, joins_previous) & ~1u; /* lane 0's previous is in another warp */
    const unsigned first = 31 - __clz(~joins & (0xFFFFFFFFu >> (31 - lane)));
#pragma unroll
    for (unsigned step = 1; step < 32; step *= 2) {
        const uint32_t before = __shfl_up_sync(0xFFFFFFFFu, v, step);
        if (lane >= first + step)
            v = min(v, before);
    }
    const unsigned last = __ffs(~(joins >> 1) & (0xFFFFFFFFu << lane)) - 1;
    return __shfl_sync(0xFFFFFFFFu, v, last);
}

/* Slabs a thread block of link walks in order, passing each block's final target to the connected
 * blocks of the slab above in its tile: more slabs per thread block leave fewer trees for merge, at the
 * price of fewer thread blocks, each a longer chain of slabs. 16 where blocks split (6 and 4), 4
 * otherwise: chosen by measurement on the bench (bench/gpu_bench.c). */
template <int CONN>
constexpr uint32_t kLinkSlabs = kSplits<CONN> ? 16 : 4;

/* link's launch grid: every tile of a slab, one thread block per kLinkSlabs<CONN> slabs (at most 65535 deep). */
template <int CONN, bool XY>
inline dim3 link_launch_grid(const Grid &g)
{
    dim3 grid = block_launch_grid<CONN, XY>(g, 1);
    const uint64_t slabs = (uint64_t)(g.nz + kBlockZ<CONN> - 1) / kBlockZ<CONN>;
    const uint64_t groups = (slabs + kLinkSlabs<CONN> - 1) / kLinkSlabs<CONN>;
    grid.z = (unsigned)(groups < 65535 ? groups : 65535);
    return grid;
}

/* Each representative points at a smaller node of its component, so the pointers make a forest without
 * atomics. Listed blocks (sparse volumes) point at their smallest connected neighbour. On the grid, a
 * block's target is the smallest node among: itself, its connected neighbours, the final targets of its
 * connected neighbours in the slab below when the thread block labelled that slab too (kLinkSlabs<CONN>);
 * then the smallest over its run (lanes that each join the previous lane's block); then, in one round
 * of shared-memory atomicMin, also over its connected neighbours in the tile's rows above and below;
 * and again over its run. Every value a block takes is a node of its own component, so the forest stays
 * valid whatever the order of the updates, and the trees that reach merge are pieces of tiles instead
 * of chains. Each step (runs, the round) leaves fewer connected pairs in different trees for merge; one
 * round, as a second does not pay for itself (chosen by measurement on the bench, bench/gpu_bench.c). */
template <int CONN, bool XY, bool LISTED>
__global__ void __launch_bounds__(256) link_blocks_kernel(const uint8_t *__restrict__ mask,
                                                          uint32_t *__restrict__ labels, BlockList list,
                                                          uint32_t listed, Grid g, FastDiv div_nc)
{
    if constexpr (LISTED) {
        const auto link_listed = [&](BlockAt k, uint32_t f, uint32_t) {
            const LinkCandidate c = link_candidate<CONN, XY>(mask, labels, g, k, f);
            if (c.smallest != c.own.node)
                labels[c.own.slot] = c.smallest;
            link_second_piece(labels, c);
            keep_connected<CONN, XY>(labels, g, k, f, c);
        };
        for_each_foreground_block<CONN, XY, true>(mask, labels, list, listed, g, div_nc, link_listed);
    } else {
        __shared__ uint32_t tile[8][32], previous_slab[8][32];
        const int row = threadIdx.y, lane = threadIdx.x;
        const uint32_t slabs = z_blocks<CONN>(g);
        for (uint32_t first = blockIdx.z * kLinkSlabs<CONN>; first < slabs; first += gridDim.z * kLinkSlabs<CONN>) {
            for (uint32_t d = first; d < first + kLinkSlabs<CONN> && d < slabs; d++) {
                BlockAt k;
                const uint32_t f = block_of_thread<CONN, XY>(g, d, k) ? block_bits<CONN, XY>(mask, labels, g, k) : 0;
                LinkCandidate c{{kEmpty, 0}, kEmpty, 0, 0, {kEmpty, 0}, kEmpty};
                if (f) {
                    c = link_candidate<CONN, XY>(mask, labels, g, k, f);
                    link_second_piece(labels, c);
                }
                /* Connected blocks of the slab below, in this tile: their final targets. */
#pragma unroll
                for (int o = 0; o < 9; o++) {
                    const int r = row + tile_row_step<XY>(o), l = lane + tile_lane_step<XY>(o);
                    if (d > first && (c.connected >> o & 1u) && r >= 0 && r < 8 && l >= 0 && l < 32)
                        c.smallest = min(c.smallest, previous_slab[r][l]);
                }
                const bool joins_previous = c.connected >> kPreviousLane<XY> & 1u;
                uint32_t target = run_minimum(c.smallest, joins_previous);
                tile[row][lane] = target;
                __syncthreads();
#pragma unroll
                for (int o = 9; o < 13; o++) {
                    const int r = row + tile_row_step<XY>(o), l = lane + tile_lane_step<XY>(o);
                    if (o == kPreviousLane<XY> || !(c.connected >> o & 1u) || r < 0 || r > 7 || l < 0 || l > 31)
                        continue;
                    target = min(target, atomicMin(&tile[r][l], target));
                }
                atomicMin(&tile[row][lane], target);
                __syncthreads();
                target = run_minimum(tile[row][lane], joins_previous);
                previous_slab[row][lane] = target;
                __syncthreads();
                if (target < c.own.node)
                    labels[c.own.slot] = target;
                if (f)
                    keep_connected<CONN, XY>(labels, g, k, f, c);
            }
        }
    }
}

/* Representative rep := its root. */
template <int CONN, bool XY>
__device__ __forceinline__ void compress_piece(uint32_t *labels, const Grid &g, Representative rep)
{
    const uint32_t parent = __ldcg(labels + rep.slot);
    if (parent != rep.node)
        labels[rep.slot] = find_root_readonly<CONN, XY>(labels, g, parent);
}

/* Every representative := its root. The walk only reads, and each thread writes only its own cells
 * (with the root), so no write can put back a stale ancestor after another thread's root. */
template <int CONN, bool XY, bool LISTED>
__global__ void __launch_bounds__(256) compress_blocks_kernel(const uint8_t *__restrict__ mask,
                                                              uint32_t *__restrict__ labels, BlockList list,
                                                              uint32_t listed, Grid g, FastDiv div_nc)
{
    const auto compress_block = [&](BlockAt k, uint32_t f, uint32_t) {
        const Representative rep = representative<CONN, XY>(g, k, f);
        if constexpr (kSplits<CONN>) {
            /* Both pieces' walks together (a block without a second piece walks its main piece twice). */
            const bool split = is_split<CONN>(f);
            const Representative second = split ? second_piece<CONN, XY>(g, k) : rep;
            uint32_t root = __ldcg(labels + rep.slot), second_root = __ldcg(labels + second.slot);
            const uint32_t parent = root, second_parent = second_root;
            find_roots_readonly<CONN, XY>(labels, g, root, second_root);
            if (parent != rep.node)
                labels[rep.slot] = root;
            if (split && second_parent != second.node)
                labels[second.slot] = second_root;
        } else {
            compress_piece<CONN, XY>(labels, g, rep);
        }
    };
    for_each_foreground_block<CONN, XY, LISTED>(mask, labels, list, listed, g, div_nc, compress_block);
}

/* Unites piece `own` (its parent cell) with the neighbour pieces of its kept connections whose roots
 * still differ. After compress most parents are roots, so a plain (L1) read of both sides settles most
 * pairs: a stale parent is still an ancestor, and equal ancestors prove one tree. The rest walk to their
 * roots (halving the paths on the way) and are linked with one atomicMin (union_roots). */
template <int CONN, bool XY>
__device__ __forceinline__ void merge_pieces(uint32_t *labels, const Grid &g, const Neighbourhood<CONN, XY> &around,
                                             int64_t own, int64_t second, uint32_t kept)
{
    /* Piece a's root (0 main, 1 second, under 6 and 4: kept bit i belongs to piece (i >> 1) & 1); one
     * loop over both pieces' connections, so that a split block does not hold its warp for a second. */
    uint32_t root0 = labels[own], root1 = kSplits<CONN> ? labels[second] : root0;
    uint32_t pending = 0;
#pragma unroll
    for (int i = 0; i < 13; i++)
        if (kept_bit_used<CONN>(i) && (kept >> i & 1u) &&
            labels[kept_cell(g, around, i)] != (kSplits<CONN> && (i & 2) ? root1 : root0))
            pending |= 1u << i;
    /* Most of these pairs were joined meanwhile through another pair of the same two trees: skip
     * parents already joined by this thread, and compare the current roots before paying for a
     * union. */
    uint32_t joined0 = kEmpty, joined0_before = kEmpty, joined1 = kEmpty, joined1_before = kEmpty;
    if (pending & piece_connections<CONN>(0))
        root0 = find_root_global<CONN, XY>(labels, g, root0);
    if (kSplits<CONN> && (pending & piece_connections<CONN>(1)))
        root1 = find_root_global<CONN, XY>(labels, g, root1);
    while (pending) {
        const int i = __ffs(pending) - 1;
        pending &= pending - 1;
        const bool a = kSplits<CONN> && (i & 2);
        uint32_t own_root = a ? root1 : root0;
        const uint32_t parent = labels[kept_cell(g, around, i)];
        if (parent == (a ? joined1 : joined0) || parent == (a ? joined1_before : joined0_before))
            continue;
        if (a) {
            joined1_before = joined1;
            joined1 = parent;
        } else {
            joined0_before = joined0;
            joined0 = parent;
        }
        const uint32_t other_root = find_root_global<CONN, XY>(labels, g, parent);
        if (other_root == own_root)
            continue;
        union_roots<CONN, XY>(labels, g, own_root, other_root);
        /* Both now lie in one tree, whose root is at most the smaller: a member is enough here, since
         * a later pair that finds a different root only pays for one more union. */
        own_root = min(own_root, other_root);
        (a ? root1 : root0) = own_root;
    }
}

/* Unites the pieces of every kept connection (read from the bits cell; where a block has none, its
 * connections are tested again). */
template <int CONN, bool XY, bool LISTED>
__global__ void __launch_bounds__(256) merge_blocks_kernel(const uint8_t *__restrict__ mask,
                                                           uint32_t *__restrict__ labels, BlockList list,
                                                           uint32_t listed, Grid g, FastDiv div_nc)
{
    for_each_foreground_block<CONN, XY, LISTED>(mask, labels, list, listed, g, div_nc, [&](BlockAt k, uint32_t f,
                                                                                          uint32_t kept) {
        const Neighbourhood<CONN, XY> around(g, k);
        if (!has_bits_cell<CONN, XY>(g, k))
            kept = link_candidate<CONN, XY>(mask, labels, g, k, f).kept;
        const int64_t own = representative<CONN, XY>(g, k, f).slot;
        /* Only a split block has kept bits of a second piece (link_candidate). */
        merge_pieces<CONN, XY>(labels, g, around, own, is_split<CONN>(f) ? second_piece<CONN, XY>(g, k).slot : own,
                               kept);
    });
}

template <int CONN, bool XY>
cudaError_t launch_blocks(const uint8_t *mask, uint32_t *labels, BlockList &list, const Grid &g,
                          cudaStream_t stream)
{
    const dim3 grid = block_launch_grid<CONN, XY>(g, 65535), threads(32, 8);
    const FastDiv div_nc = make_fastdiv((g.n1 + kBlock1 - 1) / kBlock1);
    cudaError_t error = cudaMemsetAsync(list.count, 0, sizeof *list.count, stream);
    if (error != cudaSuccess)
        return error;
    init_blocks_kernel<CONN, XY><<<grid, threads, 0, stream>>>(mask, labels, list, g);
    /* One 4-byte read-back picks the variant: a thread per listed block, or the whole grid. */
    uint32_t listed = 0;
    error = cudaMemcpyAsync(&listed, list.count, sizeof listed, cudaMemcpyDeviceToHost, stream);
    if (error == cudaSuccess)
        error = cudaStreamSynchronize(stream);
    if (error != cudaSuccess)
        return error;
    list.listed = listed <= list.capacity ? listed : kEmpty;
    if (listed == 0)
        return cudaGetLastError();
    if (listed <= list.capacity) {
        const dim3 list_grid((listed + 255) / 256);
        link_blocks_kernel<CONN, XY, true><<<list_grid, threads, 0, stream>>>(mask, labels, list, listed, g, div_nc);
        compress_blocks_kernel<CONN, XY, true>
            <<<list_grid, threads, 0, stream>>>(mask, labels, list, listed, g, div_nc);
        merge_blocks_kernel<CONN, XY, true>
            <<<list_grid, threads, 0, stream>>>(mask, labels, list, listed, g, div_nc);
    } else {
        link_blocks_kernel<CONN, XY, false>
            <<<link_launch_grid<CONN, XY>(g), threads, 0, stream>>>(mask, labels, list, 0, g, div_nc);
        compress_blocks_kernel<CONN, XY, false>
            <<<grid, threads, 0, stream>>>(mask, labels, list, 0, g, div_nc);
        merge_blocks_kernel<CONN, XY, false>
            <<<grid, threads, 0, stream>>>(mask, labels, list, 0, g, div_nc);
    }
    return cudaGetLastError();
}

} // namespace

cudaError_t union_find_blocks(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, BlockList &list,
                              const Grid &g, cudaStream_t stream)
{
    switch (connectivity * 2 + (xy ? 1 : 0)) {
    case 4 * 2: return launch_blocks<4, false>(mask, labels, list, g, stream);
    case 4 * 2 + 1: return launch_blocks<4, true>(mask, labels, list, g, stream);
    case 6 * 2: return launch_blocks<6, false>(mask, labels, list, g, stream);
    case 6 * 2 + 1: return launch_blocks<6, true>(mask, labels, list, g, stream);
    case 8 * 2: return launch_blocks<8, false>(mask, labels, list, g, stream);
    case 8 * 2 + 1: return launch_blocks<8, true>(mask, labels, list, g, stream);
    case 18 * 2: return launch_blocks<18, false>(mask, labels, list, g, stream);
    case 18 * 2 + 1: return launch_blocks<18, true>(mask, labels, list, g, stream);
    case 26 * 2: return launch_blocks<26, false>(mask, labels, list, g, stream);
    case 26 * 2 + 1: return launch_blocks<26, true>(mask, labels, list, g, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace vlccl
