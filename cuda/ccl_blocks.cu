/* Union-find phase of the CUDA labeller, on blocks of nodes, for every connectivity. (Shared-memory
 * tiles, which this replaced under 4 and 6, measured slower on the H200: conn 6 matlab order, 6.67
 * against 5.91 ms on 512^3 noise 0.5, 4.12 against 4.07 on noise 0.2 and 0.66 against 0.62 ms on the
 * CT-like volume; the tiles of blocks tried for 26 and 18 are in docs/gpu.md.)
 *
 * Blocks (ccl_block_grid.cuh) are 2x2x2 voxels under 26, a 2x2 square of one slice under 18 and 8, and
 * one node under 6 and 4. Every foreground voxel of a block is connected to every other one under its
 * connectivity, so union-find can run on blocks: a quarter (26) or half (18, 8) of the nodes, each with
 * at most 13 backward neighbours (3 under 6).
 *
 * A block's representative is its first foreground node in node order (= key order), so linking
 * toward the smaller representative still leaves each component rooted at its minimum-key node. A block
 * keeps its representative's parent in its parent cell and, under 8, 18 and 26, its bits (and from link
 * on its connected backward neighbours) in the bits cell beside it (ccl_block_grid.cuh).
 *
 * Four launches (after Allegretti, Bolelli and Grana's BKE, TPDS 2020):
 *   init      every block's parent cell := its representative, its bits cell := its bits, in whole
 *             sectors; the foreground blocks are listed, and when the list holds them all (sparse
 *             volumes) the next three kernels and the relabel's flatten run one thread per listed block;
 *   link      each representative points at a smaller node of its component, found over the block's
 *             connected neighbours, its run of lanes and its tile (see link_blocks_kernel): a forest
 *             without atomics; the connected neighbours go to the bits cell;
 *   compress  every representative := its root; roots are counted per segment;
 *   merge     connected neighbours whose roots still differ are united (atomicMin union-find).
 * Neighbours are addressed by grid steps from the block (Neighbourhood): link and merge are bound by
 * instruction issue on dense volumes, and this took noise20 conn 18 from 5.79 to 4.68 ms on the H200. */
#include "ccl_kernels.cuh"
#include "ccl_union_find.cuh"

namespace vlccl {
namespace {

/* Can some voxel of a block touch some voxel of the block at backward offset o under CONN, given the
 * voxels present (bit masks fa, fb; all of them when fa = fb = ~0)? Brute force, evaluated at compile time. */
template <int CONN>
constexpr bool blocks_touch(int o, uint32_t fa, uint32_t fb)
{
    constexpr int voxels = 2 * kBlock1<CONN> * kBlockZ<CONN>;
    for (int va = 0; va < voxels; va++)
        for (int vb = 0; vb < voxels; vb++) {
            const int pa = va / 2, pb = vb / 2;
            const int d0 = 2 * backward_offset(o, 0) + vb % 2 - va % 2;
            const int d1 = kBlock1<CONN> * backward_offset(o, 1) + pb % kBlock1<CONN> - pa % kBlock1<CONN>;
            const int dz = kBlockZ<CONN> * backward_offset(o, 2) + pb / kBlock1<CONN> - pa / kBlock1<CONN>;
            if ((fa >> va & 1u) && (fb >> vb & 1u) && voxel_step_ok<CONN>(d0, d1, dz))
                return true;
        }
    return false;
}

/* For 18, 8, 6 and 4: the voxels of the block at backward offset o (a bit mask, in that block's bit
 * numbering) that voxel v of this block touches. Constant once the loops over o and v are unrolled, so
 * a connection test is a few ORs. A 16x16-bit table per offset in constant memory, indexed by both
 * blocks' bits (lanes of a warp read different words of it), was slower: H200, matlab order, noise50/18
 * 2.92 -> 2.45 ms and noise20/18 3.41 -> 3.00 ms with this. */
template <int CONN>
__host__ __device__ constexpr uint32_t touched_by_voxel(int o, int v)
{
    uint32_t reach = 0;
    for (int w = 0; w < 2 * kBlock1<CONN> * kBlockZ<CONN>; w++)
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
    for (int v = 0; v < 2 * kBlock1<CONN> * kBlockZ<CONN>; v++)
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

/* Calls body(k, f) for every block k with foreground (bits f, read after init): LISTED, from the
 * `listed` entries of the list (sparse volumes: every lane gets a foreground block), else from the
 * whole grid. Two instantiations, chosen by the host: one kernel with both paths needed more
 * registers and ran 13 % slower on dense volumes. */
template <int CONN, bool XY, bool LISTED, typename Body>
__device__ __forceinline__ void for_each_foreground_block(const uint8_t *__restrict__ mask, const uint32_t *labels,
                                                          const BlockList &list, uint32_t listed, const Grid &g,
                                                          FastDiv div_nc, Body body)
{
    if constexpr (LISTED) {
        for (uint64_t i = launch_thread(); i < listed; i += launch_threads()) {
            const BlockAt k = block_at_number<CONN>(g, list.entries[i], div_nc);
            body(k, block_bits<CONN, XY>(mask, labels, g, k));
        }
    } else {
        for (uint32_t d = blockIdx.z; d < z_blocks<CONN>(g); d += gridDim.z) {
            BlockAt k;
            if (!block_of_thread<CONN, XY>(g, d, k))
                continue;
            const uint32_t f = block_bits<CONN, XY>(mask, labels, g, k);
            if (f)
                body(k, f);
        }
    }
}

/* Foreground blocks a thread block of init gathers in shared memory before it appends them to the list
 * with one global atomic: one atomic per step of every thread block was the cost of init on sparse
 * volumes. */
constexpr uint32_t kStaged = 2048;

/* Under 4 and 6 (a block is one node, so a slab has 4 to 8 times more) about 4096 thread blocks walk z
 * and each gathers many steps before appending: on the CT-like volume at conn 6 the labelling took
 * 0.66 ms against 0.74 with a thread block per slab. Under 8, 18 and 26 a thread block per slab
 * measured faster (CT-like conn 26: init 119 against 138 us). */
template <int CONN, bool XY>
inline dim3 init_launch_grid(const Grid &g)
{
    const dim3 plane = block_launch_grid<CONN, XY>(g, 1);
    return block_launch_grid<CONN, XY>(g, kOneNode<CONN> ? 4096 / (plane.x * plane.y) + 1 : 65535);
}

/* Does some lane of this lane's 32-byte sector (`lanes` lanes of it) need its cells written? All lanes
 * call it. */
__device__ __forceinline__ bool sector_needs(bool need, unsigned lanes)
{
    const unsigned needed = __ballot_sync(0xFFFFFFFFu, need);
    return needed >> (threadIdx.x & ~(lanes - 1)) & ((1u << lanes) - 1);
}

/* Init's writes for block k (bits f): its parent cell := its representative, and under 8, 18 and 26 its
 * bits cell := f, for every block of the grid (neighbours read the bits of empty blocks too), so that
 * the lanes of a row fill whole sectors: a sector written in part costs a DRAM read to fill the rest.
 * Under 4 and 6, where only foreground nodes need a parent, every lane of a sector with one writes its
 * node's own number. All lanes call it. */
template <int CONN, bool XY>
__device__ __forceinline__ void write_init_cells(uint32_t *labels, const Grid &g, BlockAt k, bool inside, uint32_t f)
{
    if constexpr (kOneNode<CONN>) {
        /* Matlab order: lanes write neighbouring cells; matlab-xy: every other cell, the one between
         * belonging to the same node. */
        if (!sector_needs(f != 0, XY ? 4 : 8) || !inside)
            return;
        const int64_t cell = parent_cell<CONN, XY>(g, k);
        labels[cell] = node_number(g, k.b, k.c, k.d);
        if (XY && 2 * k.b + 1 < g.n0)
            labels[cell + 1] = f;
    } else if (inside) {
        const int64_t cell = parent_cell<CONN, XY>(g, k);
        labels[cell] = f ? representative<CONN, XY>(g, k, f).node : kEmpty;
        if (has_bits_cell<CONN, XY>(g, k))
            labels[cell + 1] = f;
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
        write_init_cells<CONN, XY>(labels, g, k, inside, f);
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
 * dense volumes (Nsight: 63-68 % SM throughput, DRAM under 20 %). */
template <int CONN, bool XY>
struct Neighbourhood {
    BlockAt k;
    int64_t cell;   /* block k's parent cell (ccl_block_grid.cuh) */
    uint32_t node;  /* node number of block k's node 0 */
    uint32_t edges; /* kFirstB ... kNextSingle */

    static constexpr uint32_t kFirstB = 1, kLastB = 2, kFirstC = 4, kLastC = 8, kFirstD = 16;
    /* The cell after the parent cell along memory x: under 4 and 6 a node's second voxel (along the
     * paired axis b), else the bits cell (along b under matlab-xy, c under matlab). kSingle: block k
     * has none; kNextSingle: the block after it along that axis has none. */
    static constexpr int kPairAxis = XY || kOneNode<CONN> ? 0 : 1;
    static constexpr uint32_t kSingle = 32, kNextSingle = 64;

    __device__ __forceinline__ Neighbourhood(const Grid &g, BlockAt at)
        : k(at), cell(parent_cell<CONN, XY>(g, at)),
          node(node_number(g, at.b, kBlock1<CONN> * at.c, kBlockZ<CONN> * at.d))
    {
        const uint32_t last = kPairAxis == 0 ? 2 * at.b + 1 : kBlock1<CONN> * at.c + 1;
        const uint32_t end = kPairAxis == 0 ? g.n0 : g.n1, step = kPairAxis == 0 ? 2 : kBlock1<CONN>;
        edges = (at.b == 0 ? kFirstB : 0) | (at.b + 1 == g.h0 ? kLastB : 0) | (at.c == 0 ? kFirstC : 0) |
                (at.c + 1 == i1_blocks<CONN>(g) ? kLastC : 0) | (at.d == 0 ? kFirstD : 0) |
                (last >= end ? kSingle : 0) | (last + step >= end ? kNextSingle : 0);
    }

    __device__ __forceinline__ static int64_t cell_step(const Grid &g, int o)
    {
        const int db = backward_offset(o, 0), dc = backward_offset(o, 1), dz = backward_offset(o, 2);
        return db * (XY ? 2 : 2 * g.nx) + dc * (XY ? kBlock1<CONN> * g.nx : kBlock1<CONN>) +
               dz * (kBlockZ<CONN> * g.sxy);
    }

    __device__ __forceinline__ static uint32_t node_step(const Grid &g, int o)
    {
        const int db = backward_offset(o, 0), dc = backward_offset(o, 1), dz = backward_offset(o, 2);
        return (uint32_t)db + (uint32_t)dc * (kBlock1<CONN> * g.h0) + (uint32_t)dz * (kBlockZ<CONN> * g.n1 * g.h0);
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
        if constexpr (kOneNode<CONN>)
            return (mask[at] != 0) | (!single && mask[at + (XY ? 1 : g.nx)] != 0) << 1;
        if (!single)
            return labels[at + 1] & kBitsMask;
        return block_bits_from_mask<CONN, XY>(
            mask, g, BlockAt{k.b + backward_offset(o, 0), k.c + backward_offset(o, 1), k.d + backward_offset(o, 2)});
    }

    __device__ __forceinline__ int64_t cell_of(const Grid &g, int o) const { return cell + cell_step(g, o); }

    /* The representative of neighbour o with bits fn != 0, and the neighbour's parent cell. */
    __device__ __forceinline__ Representative representative(const Grid &g, int o, uint32_t fn) const
    {
        const uint32_t p = representative_node(fn);
        const uint32_t n = node + node_step(g, o) + p % kBlock1<CONN> * g.h0 + p / kBlock1<CONN> * (g.n1 * g.h0);
        return Representative{n, cell_of(g, o)};
    }
};

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

/* Block k (bits f != 0): its representative, the smallest representative among it and its connected
 * backward neighbours, and which of those neighbours are connected (bit o). */
struct LinkCandidate {
    Representative own;
    uint32_t smallest;
    uint32_t connected;
};

template <int CONN, bool XY>
__device__ __forceinline__ LinkCandidate link_candidate(const uint8_t *__restrict__ mask, const uint32_t *labels,
                                                        const Grid &g, BlockAt k, uint32_t f)
{
    const Neighbourhood<CONN, XY> around(g, k);
    LinkCandidate c{representative<CONN, XY>(g, k, f), 0, 0};
    c.smallest = c.own.node;
    for_each_connected_neighbour<CONN, XY>(mask, labels, g, around, f, [&](int o, Representative other) {
        c.smallest = min(c.smallest, other.node);
        c.connected |= 1u << o;
    });
    return c;
}

/* Link stores which backward neighbours block k (with foreground) is connected to beside its bits, so
 * that merge reads them instead of each neighbour's bits (under 4 and 6, or where the block has no bits
 * cell, merge tests the neighbours again). Neighbours reading the bits meanwhile mask them. */
template <int CONN, bool XY>
__device__ __forceinline__ void keep_connected(uint32_t *labels, const Grid &g, BlockAt k, uint32_t f,
                                               const LinkCandidate &c)
{
    if (has_bits_cell<CONN, XY>(g, k))
        labels[c.own.slot + 1] = f | c.connected << kConnectedShift;
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
 * blocks of the slab above in its tile: fewer thread blocks, each a chain of slabs, against fewer trees
 * for merge. H200, matlab order, label+relabel+sizes, with 1 / 4 / 16 slabs (before link kept the
 * connections for merge): noise50/18 3.08 / 2.87 / 2.91 ms, noise20/18 3.46 / 3.37 / 3.33, noise50/6
 * 4.27 / 4.31 / 4.20, noise20/6 3.60 / 3.76 / 3.71; after, under 26 with 1 / 4: noise50/26 1.41-1.43 /
 * 1.45-1.47, noise20/26 1.92-1.95 / 1.88-1.91 (4 kept: noise20 is the closer to its target). */
template <int CONN>
constexpr uint32_t kLinkSlabs = kOneNode<CONN> ? 1 : 4;

/* link's launch grid: every tile of a slab, one thread block per kLinkSlabs<CONN> slabs (at most 65535 deep). */
template <int CONN, bool XY>
inline dim3 link_launch_grid(const Grid &g)
{
    dim3 grid = block_launch_grid<CONN, XY>(g, 1);
    const uint64_t groups = ((uint64_t)(g.nz + kBlockZ<CONN> - 1) / kBlockZ<CONN> + kLinkSlabs<CONN> - 1) / kLinkSlabs<CONN>;
    grid.z = (unsigned)(groups < 65535 ? groups : 65535);
    return grid;
}

/* Each representative points at a smaller node of its component, so the pointers make a forest without
 * atomics. Listed blocks (sparse volumes) point at their smallest connected neighbour. On the grid, a
 * block's target is the smallest node among: itself, its connected neighbours, the final targets of its
 * connected neighbours in the slab below when the thread block labelled that slab too (kLinkSlabs);
 * then the smallest over its run (lanes that each join the previous lane's block); then, in one round
 * of shared-memory atomicMin, also over its connected neighbours in the tile's rows above and below;
 * and again over its run. Every value a block takes is a node of its own component, so the forest stays
 * valid whatever the order of the updates, and the trees that reach merge are pieces of tiles instead
 * of chains. A CPU model of the forest on 256^3 noise 0.5 under 26 counts 24 % of the connected pairs in
 * different trees after compress with the smallest neighbour alone, 13 % with runs and 6 % with the
 * round. H200, noise50/26: 2.60 ms with the smallest neighbour alone, 2.20 with runs, 2.03 with one
 * round and with two (noise20/18: 4.11, 3.95 and 4.15 ms). */
template <int CONN, bool XY, bool LISTED>
__global__ void __launch_bounds__(256) link_blocks_kernel(const uint8_t *__restrict__ mask,
                                                          uint32_t *__restrict__ labels, BlockList list,
                                                          uint32_t listed, Grid g, FastDiv div_nc)
{
    if constexpr (LISTED) {
        for_each_foreground_block<CONN, XY, true>(mask, labels, list, listed, g, div_nc, [&](BlockAt k, uint32_t f) {
            const LinkCandidate c = link_candidate<CONN, XY>(mask, labels, g, k, f);
            if (c.smallest != c.own.node)
                labels[c.own.slot] = c.smallest;
            keep_connected<CONN, XY>(labels, g, k, f, c);
        });
    } else {
        __shared__ uint32_t tile[8][32], previous_slab[8][32];
        const int row = threadIdx.y, lane = threadIdx.x;
        const uint32_t slabs = z_blocks<CONN>(g);
        for (uint32_t first = blockIdx.z * kLinkSlabs<CONN>; first < slabs; first += gridDim.z * kLinkSlabs<CONN>) {
            for (uint32_t d = first; d < first + kLinkSlabs<CONN> && d < slabs; d++) {
                BlockAt k;
                const uint32_t f = block_of_thread<CONN, XY>(g, d, k) ? block_bits<CONN, XY>(mask, labels, g, k) : 0;
                LinkCandidate c{{kEmpty, 0}, kEmpty, 0};
                if (f)
                    c = link_candidate<CONN, XY>(mask, labels, g, k, f);
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

/* Every representative := its root. The walk only reads, and each thread writes only its own cell
 * (with the root), so no write can put back a stale ancestor after another thread's root. */
template <int CONN, bool XY, bool LISTED>
__global__ void __launch_bounds__(256) compress_blocks_kernel(const uint8_t *__restrict__ mask,
                                                              uint32_t *__restrict__ labels,
                                                              uint32_t *__restrict__ segment_roots, BlockList list,
                                                              uint32_t listed, Grid g, FastDiv div_nc)
{
    for_each_foreground_block<CONN, XY, LISTED>(mask, labels, list, listed, g, div_nc, [&](BlockAt k, uint32_t f) {
        const Representative rep = representative<CONN, XY>(g, k, f);
        const uint32_t parent = __ldcg(labels + rep.slot);
        if (parent == rep.node) {
            const NodeAt c = node_coords<XY>(g, rep.node);
            atomicAdd(&segment_roots[segment_of(g, c.b, c.i1, c.z)], 1u);
        } else {
            labels[rep.slot] = find_root_readonly<CONN, XY>(labels, g, parent);
        }
    });
}

/* Unites connected neighbours whose roots still differ. After compress most parents are roots, so a
 * plain (L1) read of both sides settles most pairs: a stale parent is still an ancestor, and equal
 * ancestors prove one tree. The rest walk to their roots (halving the paths on the way) and are linked
 * with one atomicMin (union_roots). */
template <int CONN, bool XY, bool LISTED>
__global__ void __launch_bounds__(256) merge_blocks_kernel(const uint8_t *__restrict__ mask,
                                                           uint32_t *__restrict__ labels,
                                                           uint32_t *__restrict__ segment_roots, BlockList list,
                                                           uint32_t listed, Grid g, FastDiv div_nc)
{
    for_each_foreground_block<CONN, XY, LISTED>(mask, labels, list, listed, g, div_nc, [&](BlockAt k, uint32_t f) {
        const Neighbourhood<CONN, XY> around(g, k);
        uint32_t own_root = labels[around.cell];
        uint32_t connected = 0;
        if (has_bits_cell<CONN, XY>(g, k))
            connected = labels[around.cell + 1] >> kConnectedShift;
        else
            for_each_connected_neighbour<CONN, XY>(mask, labels, g, around, f,
                                                   [&](int o, Representative) { connected |= 1u << o; });
        uint32_t pending = 0;
#pragma unroll
        for (int o = 0; o < 13; o++)
            if (offset_used<CONN>(o) && (connected >> o & 1u) && labels[around.cell_of(g, o)] != own_root)
                pending |= 1u << o;
        /* Most of these pairs were joined meanwhile through another pair of the same two trees: skip
         * parents already joined by this thread, and compare the current roots before paying for a
         * union. */
        uint32_t joined[2] = {kEmpty, kEmpty};
        if (pending)
            own_root = find_root_global<CONN, XY>(labels, g, own_root);
        while (pending) {
            const int o = __ffs(pending) - 1;
            pending &= pending - 1;
            const uint32_t parent = labels[around.cell_of(g, o)];
            if (parent == joined[0] || parent == joined[1])
                continue;
            joined[1] = joined[0];
            joined[0] = parent;
            const uint32_t other_root = find_root_global<CONN, XY>(labels, g, parent);
            if (other_root == own_root)
                continue;
            const uint32_t gone = union_roots<CONN, XY>(labels, g, own_root, other_root);
            if (gone != kEmpty) {
                const NodeAt at = node_coords<XY>(g, gone);
                atomicSub(&segment_roots[segment_of(g, at.b, at.i1, at.z)], 1u);
            }
            /* Both now lie in one tree, whose root is at most the smaller: a member is enough here, since
             * a later pair that finds a different root only pays for one more union. */
            own_root = min(own_root, other_root);
        }
    });
}

template <int CONN, bool XY>
cudaError_t launch_blocks(const uint8_t *mask, uint32_t *labels, uint32_t *segment_roots, BlockList &list,
                          const Grid &g, cudaStream_t stream)
{
    const dim3 grid = block_launch_grid<CONN, XY>(g, 65535), threads(32, 8);
    const FastDiv div_nc = make_fastdiv((g.n1 + kBlock1<CONN> - 1) / kBlock1<CONN>);
    cudaError_t error = cudaMemsetAsync(list.count, 0, sizeof *list.count, stream);
    if (error != cudaSuccess)
        return error;
    init_blocks_kernel<CONN, XY><<<init_launch_grid<CONN, XY>(g), threads, 0, stream>>>(mask, labels, list, g);
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
            <<<list_grid, threads, 0, stream>>>(mask, labels, segment_roots, list, listed, g, div_nc);
        merge_blocks_kernel<CONN, XY, true>
            <<<list_grid, threads, 0, stream>>>(mask, labels, segment_roots, list, listed, g, div_nc);
    } else {
        link_blocks_kernel<CONN, XY, false>
            <<<link_launch_grid<CONN, XY>(g), threads, 0, stream>>>(mask, labels, list, 0, g, div_nc);
        compress_blocks_kernel<CONN, XY, false>
            <<<grid, threads, 0, stream>>>(mask, labels, segment_roots, list, 0, g, div_nc);
        merge_blocks_kernel<CONN, XY, false>
            <<<grid, threads, 0, stream>>>(mask, labels, segment_roots, list, 0, g, div_nc);
    }
    return cudaGetLastError();
}

} // namespace

cudaError_t union_find_blocks(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels,
                              uint32_t *segment_roots, BlockList &list, const Grid &g, cudaStream_t stream)
{
    switch (connectivity * 2 + (xy ? 1 : 0)) {
    case 4 * 2: return launch_blocks<4, false>(mask, labels, segment_roots, list, g, stream);
    case 4 * 2 + 1: return launch_blocks<4, true>(mask, labels, segment_roots, list, g, stream);
    case 6 * 2: return launch_blocks<6, false>(mask, labels, segment_roots, list, g, stream);
    case 6 * 2 + 1: return launch_blocks<6, true>(mask, labels, segment_roots, list, g, stream);
    case 8 * 2: return launch_blocks<8, false>(mask, labels, segment_roots, list, g, stream);
    case 8 * 2 + 1: return launch_blocks<8, true>(mask, labels, segment_roots, list, g, stream);
    case 18 * 2: return launch_blocks<18, false>(mask, labels, segment_roots, list, g, stream);
    case 18 * 2 + 1: return launch_blocks<18, true>(mask, labels, segment_roots, list, g, stream);
    case 26 * 2: return launch_blocks<26, false>(mask, labels, segment_roots, list, g, stream);
    case 26 * 2 + 1: return launch_blocks<26, true>(mask, labels, segment_roots, list, g, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace vlccl
