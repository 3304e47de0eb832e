/* The CUDA half of the multilabel labeller (src/label/ccl_cpu.c is its reference): one launch sequence
 * labels every class of a class map at once.
 *
 * Keys. A voxel's node number is its order's key: z*nx*ny + x*ny + y for `matlab` and `size`,
 * z*nx*ny + y*nx + x for `matlab-xy` and `size-raster`. Write a0 for the key's fastest axis (y, or x) and
 * i1 for the other in-plane axis, so key = (z*n1 + i1)*n0 + a0. "Link the larger root under the smaller"
 * leaves every component rooted at its minimum-key voxel, and a root's rank among all roots in key order
 * is its label minus one: the same minimum-key numbering as the CPU and the binary labeller.
 *
 * Blocks. The volume is cut into 2x2x2-voxel blocks (a0, i1, z). Voxel i of a block (0..7) sits at
 * (a0, i1, z) + (i & 1, i >> 1 & 1, i >> 2), so block voxels in index order are in key order. A block's
 * *pieces* are the components of its voxels alone (same class, adjacent under the connectivity); a piece's
 * representative is its first voxel, hence its minimum-key voxel. Under 26 every voxel of a block touches
 * every other, so a block has one piece per class it holds; under 18 and 6 a class may split, under 4 and 8
 * its two slices always do. A block is *uniform* when its 8 voxels are inside the volume, hold one class
 * and are one piece (never under 4 and 8); most blocks of a segmentation are uniform or empty.
 *
 * Storage. Per block a class word (0 empty, the class of a uniform block, kMixed otherwise) and, for mixed
 * blocks only, a pieces word (4 bits per voxel: its representative's index, kNoPiece for background); the
 * list of mixed blocks. Union-find runs on representatives only: the forest is a u32 array indexed by key,
 * touched at representatives (and roots) only. Indices are 32-bit: the map has fewer than 2^32 voxels.
 *
 * Phases (threads: lanes along a0 blocks, so that per-block arrays and 64-key counting segments of a line
 * are a warp's; under `matlab` the class map and the labels pass through a shared tile, see init_kernel):
 *   init      class and pieces words, parent[r] := r for the representatives, the list of mixed blocks; a
 *             uniform block in a run of uniform blocks of its class along the warp points at the run's
 *             target: the target of the block above the run's first block (previous warp) or else of the
 *             block below it (previous slab of the thread block) when that one is uniform of its class, else
 *             the run's first block
 *   merge     every uniform block unites with the uniform blocks of its class among its 13 backward
 *             neighbours, less the unions that others make (see merge_kernel)
 *   mixed     every mixed block's pieces unite with the pieces they touch in its 26 neighbours, one warp
 *             per listed block and one lane per neighbour (merge_mixed_kernel)
 *   compress  every representative points at its root; roots are counted per segment (64 keys of a
 *             line) and marked in a 64-bit word per segment
 *   scan      CUB exclusive sum of the segment counts
 *   write     labels := 1 + rank of the root (segment base + roots before it in its segment's word)
 *             through each voxel's representative; sizes (warp-aggregated); each root's class
 *   The size orders run the write pass for the sizes and classes alone, then the CUB sort of
 *   ccl_size_order.cu, then the write pass for the labels alone, through the sort's table.
 * The O(components) arrays are allocated before the launches with room for one component per block, so
 * that the `matlab` orders read nothing back before the end; a map with more components (noise under 6
 * or 4) gets its sizes and classes from one more write pass, into arrays of their own size.
 * Device memory: the class map, the labels, the forest (u32 per voxel), 12 bytes per block (class and pieces
 * words, the mixed list), 16 bytes per segment, 12 bytes per block for the sizes and classes
 * (vl_gpu_multilabel_bytes). */
#include <cub/device/device_scan.cuh>

#include <stdlib.h>
#include <string.h>
#include <type_traits>
#include <utility>

#include "ccl_call_device.cuh"
#include "ccl_common.cuh"
#include "ccl_size_order.cuh"
#include "core/cuda_check.h"
#include "core/gpu_transfer.h"
#include "label/ccl_multilabel_gpu.h"
#include "label/label_gpu.h"
#include "label/label_slabs.h"
#include "voxlabel/error.h"

using vlccl::backward_offset;
using vlccl::FastDiv;
using vlccl::fdiv;
using vlccl::make_fastdiv;
using vlccl::voxel_step_ok;

namespace {

constexpr uint32_t kNoNode = 0xFFFFFFFFu;
/* Class words: no foreground, several classes or pieces, else the one class of a uniform block (a class
 * value equal to kMixed is simply described as mixed). */
constexpr uint32_t kEmpty = 0;
constexpr uint32_t kMixed = 0xFFFFFFFFu;
/* Pieces words: 4 bits per block voxel, its representative's index, kNoPiece for background. */
constexpr uint32_t kNoPiece = 8;
/* Keys per counting segment: a warp's 32 blocks along a0. */
constexpr int kSegmentKeys = 64;

/* The map's shape, in 32 bits: every voxel index is below 2^32 (vl_gpu_multilabel_shape_ok). */
struct Shape {
    uint32_t nx, ny, nz, sxy;
    uint32_t n0, n1;          /* voxels along a0 and i1 */
    uint32_t b0, b1, bz;      /* blocks along a0, i1, z */
    uint32_t seg_per_line;    /* ceil(n0 / kSegmentKeys) */
    FastDiv div_n0, div_b0, div_b1;
};

Shape make_shape(int64_t nx, int64_t ny, int64_t nz, bool xy)
{
    Shape s;
    s.nx = (uint32_t)nx;
    s.ny = (uint32_t)ny;
    s.nz = (uint32_t)nz;
    s.sxy = (uint32_t)(nx * ny);
    s.n0 = (uint32_t)(xy ? nx : ny);
    s.n1 = (uint32_t)(xy ? ny : nx);
    s.b0 = (s.n0 + 1) / 2;
    s.b1 = (s.n1 + 1) / 2;
    s.bz = (s.nz + 1) / 2;
    s.seg_per_line = (s.n0 + kSegmentKeys - 1) / kSegmentKeys;
    s.div_n0 = make_fastdiv(s.n0);
    s.div_b0 = make_fastdiv(s.b0);
    s.div_b1 = make_fastdiv(s.b1);
    return s;
}

/* Blocks and counting segments of an nx x ny x nz map in one order's layout, in 64 bits: the memory plan
 * is asked about any shape. */
struct Counts {
    uint64_t blocks, segments;
};

Counts layout_counts(int64_t nx, int64_t ny, int64_t nz, bool xy)
{
    const uint64_t n0 = (uint64_t)(xy ? nx : ny), n1 = (uint64_t)(xy ? ny : nx);
    return Counts{(n0 + 1) / 2 * ((n1 + 1) / 2) * (((uint64_t)nz + 1) / 2),
                  (uint64_t)nz * n1 * ((n0 + kSegmentKeys - 1) / kSegmentKeys)};
}

/* Bit 8*i + j: voxel i of a block and voxel j of its backward neighbour k (the 13 backward offsets of
 * ccl_common.cuh, axis 0 = a0, 1 = i1, 2 = z) are adjacent. */
template <int CONN>
__host__ __device__ constexpr uint64_t neighbour_pairs(int k)
{
    uint64_t pairs = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (voxel_step_ok<CONN>(2 * backward_offset(k, 0) + (j & 1) - (i & 1),
                                    2 * backward_offset(k, 1) + (j >> 1 & 1) - (i >> 1 & 1),
                                    2 * backward_offset(k, 2) + (j >> 2) - (i >> 2)))
                pairs |= 1ull << (8 * i + j);
    return pairs;
}

/* Bit j: voxels i and j of one block are adjacent. */
template <int CONN>
__host__ __device__ constexpr uint32_t block_neighbours(int i)
{
    uint32_t near = 0;
    for (int j = 0; j < 8; j++)
        if (j != i && voxel_step_ok<CONN>((j & 1) - (i & 1), (j >> 1 & 1) - (i >> 1 & 1), (j >> 2) - (i >> 2)))
            near |= 1u << j;
    return near;
}

/* Calls f(std::integral_constant<int, K>) for K in order, so that each call sees K at compile time. */
template <typename F, int... K>
__device__ __forceinline__ void for_each_offset(F f, std::integer_sequence<int, K...>)
{
    (f(std::integral_constant<int, K>{}), ...);
}

/* Block coordinates (ab, ib, zb) along a0, i1 and z; voxel indices, keys and block numbers are below 2^32. */
__device__ __forceinline__ uint32_t key_of(const Shape &s, uint32_t ab, uint32_t ib, uint32_t zb, int i)
{
    const uint32_t a0 = 2 * ab + (i & 1), i1 = 2 * ib + (i >> 1 & 1), z = 2 * zb + (i >> 2);
    return (z * s.n1 + i1) * s.n0 + a0;
}

template <bool XY>
__device__ __forceinline__ uint32_t voxel_of(const Shape &s, uint32_t ab, uint32_t ib, uint32_t zb, int i)
{
    const uint32_t a0 = 2 * ab + (i & 1), i1 = 2 * ib + (i >> 1 & 1), z = 2 * zb + (i >> 2);
    return XY ? z * s.sxy + i1 * s.nx + a0 : z * s.sxy + a0 * s.nx + i1;
}

__device__ __forceinline__ bool voxel_inside(const Shape &s, uint32_t ab, uint32_t ib, uint32_t zb, int i)
{
    return 2 * ab + (i & 1) < s.n0 && 2 * ib + (i >> 1 & 1) < s.n1 && 2 * zb + (i >> 2) < s.nz;
}

__device__ __forceinline__ uint32_t block_index(const Shape &s, uint32_t ab, uint32_t ib, uint32_t zb)
{
    return (zb * s.b1 + ib) * s.b0 + ab;
}

__device__ __forceinline__ uint32_t piece_of(uint32_t pieces, int i) { return pieces >> (4 * i) & 0xFu; }

/* Bit i: voxel i of the block is a representative (its own piece). */
__device__ __forceinline__ uint32_t representatives(uint32_t pieces)
{
    uint32_t reps = 0;
#pragma unroll
    for (int i = 0; i < 8; i++)
        reps |= (uint32_t)(piece_of(pieces, i) == (uint32_t)i) << i;
    return reps;
}

/* The pieces word of a block's classes: each voxel's piece grown through adjacent voxels of its class. */
template <int CONN>
__device__ __forceinline__ uint32_t block_pieces(const uint32_t (&c)[8])
{
    uint32_t pieces = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint32_t same = 0;
#pragma unroll
        for (int j = 0; j < 8; j++)
            same |= (uint32_t)(c[j] == c[i]) << j;
        uint32_t piece = same;
        if (CONN != 26) {
            piece = 1u << i;
            for (;;) {
                uint32_t grown = piece;
#pragma unroll
                for (int j = 0; j < 8; j++)
                    if (piece >> j & 1u)
                        grown |= block_neighbours<CONN>(j);
                grown &= same;
                if (grown == piece)
                    break;
                piece = grown;
            }
        }
        pieces |= (c[i] ? (uint32_t)(__ffs(piece) - 1) : kNoPiece) << (4 * i);
    }
    return pieces;
}

template <typename T, bool XY>
__device__ __forceinline__ uint32_t class_at(const T *__restrict__ classes, const Shape &s, uint32_t ab, uint32_t ib,
                                             uint32_t zb, int i)
{
    return voxel_inside(s, ab, ib, zb, i) ? (uint32_t)classes[voxel_of<XY>(s, ab, ib, zb, i)] : 0u;
}

/* Parents only ever decrease, so a stale read is still an ancestor and the walks converge. */
__device__ __forceinline__ uint32_t find_root(const uint32_t *forest, uint32_t n)
{
    for (uint32_t p = __ldcg(forest + n); p != n; p = __ldcg(forest + n))
        n = p;
    return n;
}

/* The same walk with path halving (n points at its grandparent on the way up). The plain store may race
 * with an atomicMin on the same cell; both values are ancestors of n in its component, and unite()
 * re-unites whatever a lost update leaves apart, as in the binary labeller (ccl_union_find.cuh). */
__device__ __forceinline__ uint32_t find_root_halving(uint32_t *forest, uint32_t n)
{
    for (;;) {
        uint32_t *cell = forest + n;
        const uint32_t p = __ldcg(cell);
        if (p == n)
            return n;
        const uint32_t grandparent = __ldcg(forest + p);
        if (grandparent == p)
            return p;
        __stcg(cell, grandparent);
        n = grandparent;
    }
}

__device__ void unite(uint32_t *forest, uint32_t a, uint32_t b)
{
    /* Most pairs are in one tree already (init's runs and stacks, earlier unions): equal parents, or one the
     * other's parent, settle them without a walk. */
    const uint32_t pa = __ldcg(forest + a), pb = __ldcg(forest + b);
    if (pa == pb || pa == b || pb == a)
        return;
    for (;;) {
        a = find_root_halving(forest, a);
        b = find_root_halving(forest, b);
        if (a == b)
            return;
        if (a > b) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        const uint32_t old = atomicMin(forest + b, a);
        if (old == b)
            return;
        b = old;
    }
}

/* Threads: 32 lanes along a0 blocks, 8 warps along i1 blocks; grid y and z stride over i1 and z blocks.
 * All lanes of a warp share (ib, zb) and run the loops together, so warp votes are over full warps. */
dim3 block_grid(const Shape &s)
{
    const uint32_t gy = (s.b1 + 7) / 8;
    return dim3((s.b0 + 31) / 32, gy < 65535 ? gy : 65535, s.bz < 65535 ? s.bz : 65535);
}

#define VL_FOR_EACH_BLOCK(s)                                                                                \
    const uint32_t ab = blockIdx.x * 32 + threadIdx.x;                                                        \
    for (uint32_t ib = blockIdx.y * 8 + threadIdx.y; ib < (s).b1; ib += gridDim.y * 8)                        \
        for (uint32_t zb = blockIdx.z; zb < (s).bz; zb += gridDim.z)

/* Under `matlab` lanes run along y, so a lane's voxels lie in rows that no other lane of its warp reads: a
 * thread block's voxels, 64 (a0 = y) x 16 (i1 = x) x 2 (z), pass through a shared tile that is filled and
 * emptied along x (16 values a row; the row pitch 17 spreads a warp's lanes, 2 rows apart, over the
 * banks). Its cell of block voxel i of lane `lane`, warp `w`: */
constexpr int kTilePitch = 17;
constexpr int kTileCells = 2 * 64 * kTilePitch;

__device__ __forceinline__ int tile_cell(unsigned lane, unsigned w, int i)
{
    return ((i >> 2) * 64 + 2 * (int)lane + (i & 1)) * kTilePitch + 2 * (int)w + (i >> 1 & 1);
}

/* Visits the tile of the thread block's voxels at (i1 blocks from ib0, z block zb) in memory order, 8
 * cells per thread, e = 0..7: visit(e, cell, voxel index) for the voxels inside the volume, else
 * outside(e, cell). */
template <typename Visit, typename Outside>
__device__ __forceinline__ void for_each_tile_voxel(const Shape &s, uint32_t ib0, uint32_t zb, Visit visit,
                                                    Outside outside)
{
    /* Thread t takes the cells of x = 2*ib0 + t % 16, y = 64*blockIdx.x + t / 16 + 16*(e % 4), z = 2*zb + e / 4. */
    const int thread = threadIdx.y * 32 + threadIdx.x;
    const uint32_t x = 2 * ib0 + thread % 16, y = blockIdx.x * 64 + thread / 16, z = 2 * zb;
    const uint32_t first = z * s.sxy + y * s.nx + x;
    const int cell = thread / 16 * kTilePitch + thread % 16;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const int at = cell + (e % 4 * 16 + e / 4 * 64) * kTilePitch;
        if (x < s.nx && y + e % 4 * 16 < s.ny && z + e / 4 < s.nz)
            visit(e, at, first + (e % 4) * 16 * s.nx + (e / 4) * s.sxy);
        else
            outside(e, at);
    }
}

/* The classes of the thread's 8 cells of the tile at (ib0, zb) (for_each_tile_voxel), 0 outside the volume. */
template <typename T>
__device__ __forceinline__ void load_tile(const T *__restrict__ classes, const Shape &s, uint32_t ib0, uint32_t zb,
                                          uint32_t (&cells)[8])
{
    for_each_tile_voxel(
        s, ib0, zb, [&](int e, int, uint32_t v) { cells[e] = (uint32_t)classes[v]; },
        [&](int e, int) { cells[e] = 0u; });
}

/* A block that is neither empty nor uniform (classes c): its pieces word, and parent[r] := r for its
 * representatives beyond voxels 0 and 1 (write_first_cells writes those). */
template <int CONN>
__device__ __forceinline__ void init_mixed(const uint32_t (&c)[8], uint32_t *pieces, uint32_t *forest, const Shape &s,
                                        uint32_t ab, uint32_t ib, uint32_t zb)
{
    const uint32_t word = block_pieces<CONN>(c);
    pieces[block_index(s, ab, ib, zb)] = word;
#pragma unroll 1
    for (uint32_t reps = representatives(word) & ~3u; reps; reps &= reps - 1) {
        const uint32_t key = key_of(s, ab, ib, zb, __ffs(reps) - 1);
        forest[key] = key;
    }
}

/* The parent cells of a block's voxels 0 and 1 (keys key and key + 1): voxel 0's := parent0, voxel 1's := its
 * own key, for every block, so that a warp's blocks write whole sectors (a sector written in part costs a
 * DRAM read to fill the rest). Voxel 1's cell matters only where it is a representative, of a mixed block,
 * and voxel 0's only where voxel 0 is one. */
__device__ __forceinline__ void write_first_cells(uint32_t *forest, const Shape &s, uint32_t ab, uint32_t key,
                                                  uint32_t parent0)
{
    const bool pair = 2 * ab + 1 < s.n0;
    if (pair && key % 2 == 0) {
        *reinterpret_cast<uint2 *>(forest + key) = make_uint2(parent0, key + 1);
    } else {
        forest[key] = parent0;
        if (pair)
            forest[key + 1] = key + 1;
    }
}

/* Slabs (z blocks) one thread block of init labels in turn, each run taking targets from the slab below. */
constexpr uint32_t kInitSlabs = 8;

/* Each block's words, and parent[r] := r for its representatives; except for uniform blocks in runs. A run
 * is a maximal row of lanes whose blocks are uniform of one class, each joining its left lane's (found by
 * ballot). Its first block points at the target of the run through the block above it (previous warp, same
 * lane) when that block is uniform of its class, else at the target of the block below it (same thread,
 * previous slab of the thread block's kInitSlabs) when that one is uniform of its class, else at itself; the
 * warps take their turns, so a target is the first block of the first run of a connected stack of such runs
 * in the thread block. Every block of the run points at the run's target: a smaller key of its component,
 * one step away, so that merge's unions find most pairs joined already and its walks are short. The loops
 * over i1 and z step whole thread blocks, so that every thread reaches the barriers. Under `matlab` a slab's
 * classes are loaded into registers while the slab before is labelled. */
template <int CONN, typename T, bool XY>
__global__ void __launch_bounds__(256, 5) init_kernel(const T *__restrict__ classes, uint32_t *__restrict__ kinds,
                                                      uint32_t *__restrict__ pieces, uint32_t *forest,
                                                      uint32_t *__restrict__ mixed, Shape s)
{
    __shared__ uint32_t tile[XY ? 1 : kTileCells];
    __shared__ uint32_t run_kind[8][32];
    __shared__ unsigned run_first[8][32];
    __shared__ uint32_t run_target[8][32];
    const unsigned lane = threadIdx.x, warp = threadIdx.y;
    const uint32_t ab = blockIdx.x * 32 + threadIdx.x;
    for (uint32_t ib0 = blockIdx.y * 8; ib0 < s.b1; ib0 += gridDim.y * 8)
        for (uint32_t group = blockIdx.z * kInitSlabs; group < s.bz; group += gridDim.z * kInitSlabs) {
            /* The block below this thread's block (the same thread's previous slab): its class word and target. */
            uint32_t below_kind = kEmpty, below_target = 0;
            /* Under `matlab` the thread's 8 tile cells of the next slab, loaded while this one is labelled. */
            uint32_t staged[8];
            const uint32_t end = group + kInitSlabs < s.bz ? group + kInitSlabs : s.bz;
            if (!XY)
                load_tile(classes, s, ib0, group, staged);
            for (uint32_t zb = group; zb < end; zb++) {
                const uint32_t ib = ib0 + threadIdx.y;
                if (!XY) {
                    for_each_tile_voxel(
                        s, ib0, zb, [&](int e, int cell, uint32_t) { tile[cell] = staged[e]; },
                        [&](int e, int cell) { tile[cell] = staged[e]; });
                    __syncthreads();
                    if (zb + 1 < end)
                        load_tile(classes, s, ib0, zb + 1, staged);
                }
                uint32_t kind = kEmpty;
                if (ab < s.b0 && ib < s.b1) {
                    uint32_t c[8];
                    bool full = true;
#pragma unroll
                    for (int i = 0; i < 8; i++) {
                        const bool inside = voxel_inside(s, ab, ib, zb, i);
                        if (XY)
                            c[i] = inside ? (uint32_t)classes[voxel_of<XY>(s, ab, ib, zb, i)] : 0u;
                        else
                            c[i] = tile[tile_cell(lane, warp, i)];
                        full = full && inside;
                    }
                    bool any = false, uniform = full && c[0] != kEmpty && c[0] != kMixed && CONN != 4 && CONN != 8;
#pragma unroll
                    for (int i = 0; i < 8; i++) {
                        any = any || c[i] != 0;
                        uniform = uniform && c[i] == c[0];
                    }
                    if (uniform) {
                        kind = c[0];
                    } else if (any) {
                        kind = kMixed;
                        init_mixed<CONN>(c, pieces, forest, s, ab, ib, zb);
                    }
                    kinds[block_index(s, ab, ib, zb)] = kind;
                }
                /* The warp's mixed blocks join the list, with one atomic. */
                const unsigned mixed_lanes = __ballot_sync(0xFFFFFFFFu, kind == kMixed);
                if (mixed_lanes) {
                    const unsigned leader = __ffs(mixed_lanes) - 1;
                    uint32_t base = 0;
                    if (lane == leader)
                        base = atomicAdd(mixed, (uint32_t)__popc(mixed_lanes));
                    base = __shfl_sync(0xFFFFFFFFu, base, leader);
                    if (kind == kMixed)
                        mixed[1 + base + __popc(mixed_lanes & ((1u << lane) - 1))] = block_index(s, ab, ib, zb);
                }
                const bool uniform = kind != kEmpty && kind != kMixed;
                const uint32_t left_kind = __shfl_up_sync(0xFFFFFFFFu, kind, 1);
                const bool joined = lane > 0 && uniform && left_kind == kind;
                const unsigned starts = ~__ballot_sync(0xFFFFFFFFu, joined);
                const unsigned start = 31 - __clz(starts & (0xFFFFFFFFu >> (31 - lane)));
                run_kind[warp][lane] = kind;
                run_first[warp][lane] = start;
                __syncthreads();
                for (unsigned w = 0; w < 8; w++) {
                    if (warp == w && uniform && !joined)
                        run_target[w][lane] = w > 0 && run_kind[w - 1][lane] == kind
                                                  ? run_target[w - 1][run_first[w - 1][lane]]
                                              : below_kind == kind ? below_target
                                                                   : key_of(s, ab, ib, zb, 0);
                    __syncthreads();
                }
                below_kind = kind;
                if (uniform)
                    below_target = run_target[warp][start];
                if (ab < s.b0 && ib < s.b1) {
                    const uint32_t key = key_of(s, ab, ib, zb, 0);
                    write_first_cells(forest, s, ab, key, uniform ? below_target : key);
                }
                __syncthreads(); /* before the next slab overwrites the tile and the runs */
            }
        }
}

/* Voxel pairs of every backward offset under CONN (neighbour_pairs), for the rolled loops of merge_mixed. */
template <int CONN>
struct PairTable {
    uint64_t pairs[13];
};

template <int CONN>
__host__ __device__ constexpr PairTable<CONN> pair_table()
{
    PairTable<CONN> t{};
    for (int k = 0; k < 13; k++)
        t.pairs[k] = neighbour_pairs<CONN>(k);
    return t;
}

__device__ const PairTable<4> kPairs4 = pair_table<4>();
__device__ const PairTable<8> kPairs8 = pair_table<8>();
__device__ const PairTable<6> kPairs6 = pair_table<6>();
__device__ const PairTable<18> kPairs18 = pair_table<18>();
__device__ const PairTable<26> kPairs26 = pair_table<26>();

template <int CONN>
__device__ __forceinline__ uint64_t offset_pairs(int k)
{
    const uint64_t *table = CONN == 4 ? kPairs4.pairs : CONN == 8 ? kPairs8.pairs : CONN == 6 ? kPairs6.pairs
                          : CONN == 18 ? kPairs18.pairs : kPairs26.pairs;
    return table[k];
}

/* The classes of a block's 8 voxels (0 outside the volume): read from the map for a mixed block, else
 * its class word. */
template <typename T, bool XY>
__device__ __forceinline__ void block_classes(const T *__restrict__ classes, const Shape &s, uint32_t ab, uint32_t ib,
                                              uint32_t zb, uint32_t kind, uint32_t (&c)[8])
{
#pragma unroll
    for (int i = 0; i < 8; i++)
        c[i] = kind == kMixed ? class_at<T, XY>(classes, s, ab, ib, zb, i) : kind;
}

/* Block B = (ab, ib, zb) (classes here, pieces word bp) against its backward neighbour N at offset k (classes
 * there, pieces word np; 0 for a uniform block): every piece of B unites with every piece of N that one of its
 * voxels touches with its class. The voxel pairs of equal classes are one 64-bit mask (bit 8*i + j), cut down
 * to the touching pairs of the offset (neighbour_pairs). */
template <int CONN>
__device__ __forceinline__ void unite_touching(uint32_t *forest, const Shape &s, uint32_t ab, uint32_t ib, uint32_t zb,
                                               const uint32_t (&here)[8], uint32_t bp, int k,
                                               const uint32_t (&there)[8], uint32_t np)
{
    uint64_t same = 0;
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            same |= (uint64_t)(here[i] != 0 && here[i] == there[j]) << (8 * i + j);
    /* Bit 8*p + r: piece p of B touches piece r of N. */
    uint64_t links = 0;
#pragma unroll 1
    for (uint64_t todo = same & offset_pairs<CONN>(k); todo; todo &= todo - 1) {
        const int bit = __ffsll((long long)todo) - 1;
        links |= 1ull << (8 * piece_of(bp, bit >> 3) + piece_of(np, bit & 7));
    }
    const uint32_t na = ab + backward_offset(k, 0), ni = ib + backward_offset(k, 1), nzb = zb + backward_offset(k, 2);
#pragma unroll 1
    for (; links; links &= links - 1) {
        const int bit = __ffsll((long long)links) - 1;
        unite(forest, key_of(s, ab, ib, zb, bit >> 3), key_of(s, na, ni, nzb, bit & 7));
    }
}

/* The pairs of blocks with a mixed side, one warp per mixed block M (listed by init), one lane per offset k:
 * lane k < 13 takes M's backward neighbour M + d_k when it is not empty, lane 13 + k its forward neighbour
 * M - d_k when it is uniform (a mixed one takes M as its own backward neighbour), so that every such pair is
 * visited once and a block's 26 neighbours are visited together. Mixed blocks are few and scattered: a kernel
 * of their own keeps them from holding the warps of merge_kernel. */
template <int CONN, typename T, bool XY>
__global__ void __launch_bounds__(256) merge_mixed_kernel(const T *__restrict__ classes,
                                                          const uint32_t *__restrict__ kinds,
                                                          const uint32_t *__restrict__ pieces, uint32_t *forest,
                                                          const uint32_t *__restrict__ mixed, Shape s)
{
    const uint32_t count = mixed[0];
    const int lane = threadIdx.x % 32, k = lane % 13;
    const bool forward = lane >= 13;
    if (lane >= 26 || offset_pairs<CONN>(k) == 0)
        return;
    const int d0 = backward_offset(k, 0), d1 = backward_offset(k, 1), dz = backward_offset(k, 2);
    const uint32_t warps = gridDim.x * (blockDim.x / 32);
    for (uint32_t m = (blockIdx.x * blockDim.x + threadIdx.x) / 32; m < count; m += warps) {
        const uint32_t block = mixed[1 + m], line = fdiv(block, s.div_b0), zb = fdiv(line, s.div_b1);
        const uint32_t ab = block - line * s.b0, ib = line - zb * s.b1;
        if (!forward) {
            /* Backward neighbour N = M + d. */
            if ((d0 < 0 && ab == 0) || (d0 > 0 && ab + 1 >= s.b0) || (d1 < 0 && ib == 0) ||
                (d1 > 0 && ib + 1 >= s.b1) || (dz < 0 && zb == 0))
                continue;
            const uint32_t na = ab + d0, ni = ib + d1, nzb = zb + dz;
            const uint32_t n_block = block_index(s, na, ni, nzb), nk = kinds[n_block];
            if (nk == kEmpty)
                continue;
            uint32_t mc[8], nc[8];
            block_classes<T, XY>(classes, s, ab, ib, zb, kMixed, mc);
            block_classes<T, XY>(classes, s, na, ni, nzb, nk, nc);
            unite_touching<CONN>(forest, s, ab, ib, zb, mc, pieces[block], k, nc, nk == kMixed ? pieces[n_block] : 0u);
        } else {
            /* Forward neighbour F = M - d, whose backward neighbour at offset k is M. */
            if ((d0 > 0 && ab == 0) || (d0 < 0 && ab + 1 >= s.b0) || (d1 > 0 && ib == 0) ||
                (d1 < 0 && ib + 1 >= s.b1) || (dz < 0 && zb + 1 >= s.bz))
                continue;
            const uint32_t fa = ab - d0, fi = ib - d1, fzb = zb - dz;
            const uint32_t fk = kinds[block_index(s, fa, fi, fzb)];
            if (fk == kEmpty || fk == kMixed)
                continue;
            uint32_t fc[8], mc[8];
            block_classes<T, XY>(classes, s, fa, fi, fzb, fk, fc);
            block_classes<T, XY>(classes, s, ab, ib, zb, kMixed, mc);
            unite_touching<CONN>(forest, s, fa, fi, fzb, fc, 0u, k, mc, pieces[block]);
        }
    }
}

/* Every piece unites with each piece of a backward neighbour block that one of its voxels touches (same
 * class, adjacent). Between uniform blocks B and N of one class (offset d), most unions are left to others,
 * by induction over (B's a0, d's a0 step):
 *   - B's left neighbour L: in B's tree since init when it is the left lane's block, else united here;
 *   - the block above, B + (0,-1,0), for the first block of a run: in B's tree since init when it is in the
 *     thread block's previous warp (ib % 8 != 0), else united here;
 *   - d0 >= 0: skipped when N's left neighbour N_L = B + d - (1,0,0) is uniform of the class and touches B
 *     (its offset is the previous one, k - 1): B reaches N_L (by this rule at d - (1,0,0)), and N unites
 *     with its left neighbour N_L (first point above);
 *   - d0 <= 0 under 26: skipped when L is uniform of the class: L reaches N (at offset d + (1,0,0), a
 *     backward offset of L, every offset touching under 26), and B unites with L;
 *   - dz = -1 and d1 <= 0 under 26: skipped when the block above, U = B + (0,-1,0), is uniform of the class:
 *     U reaches N (at offset d + (0,1,0), a backward offset of U), and B reaches U (offset (0,-1,0), an
 *     offset of the slice itself, which these rules never make depend on a dz = -1 one).
 * The induction runs over B in key order and, for one B, over the offsets of its slice before those of the
 * slice below, each by d0. That leaves about 2 unions per run of uniform blocks along a0 instead of 13 per
 * block, with the same partition. Two uniform blocks compare their class words only; the pairs with a mixed
 * side are merge_mixed_kernel's. */
template <int CONN>
__global__ void __launch_bounds__(256, 8) merge_kernel(const uint32_t *__restrict__ kinds, uint32_t *forest, Shape s)
{
    VL_FOR_EACH_BLOCK(s)
    {
        if (ab >= s.b0)
            continue;
        const uint32_t me_block = block_index(s, ab, ib, zb);
        const uint32_t me = kinds[me_block];
        if (me == kEmpty || me == kMixed)
            continue;
        bool left_same = false;
        const bool up_same = CONN == 26 && ib >= 1 && kinds[block_index(s, ab, ib - 1, zb)] == me;
        /* The offsets (bit k) whose uniform neighbour this block's piece unites with: sorted out here with the
         * offsets as constants, then united by the rolled loop below, which keeps the unions out of the
         * unrolled code. */
        uint32_t uniform_unions = 0;
        const auto visit = [&](auto offset) {
            constexpr int k = decltype(offset)::value;
            constexpr uint64_t pairs = neighbour_pairs<CONN>(k);
            if constexpr (pairs != 0) {
                constexpr int d0 = backward_offset(k, 0), d1 = backward_offset(k, 1), dz = backward_offset(k, 2);
                if ((d0 < 0 && ab == 0) || (d0 > 0 && ab + 1 >= s.b0) || (d1 < 0 && ib == 0) ||
                    (d1 > 0 && ib + 1 >= s.b1) || (dz < 0 && zb == 0))
                    return;
                const uint32_t na = ab + (uint32_t)d0, ni = ib + (uint32_t)d1, nzb = zb + (uint32_t)dz;
                const uint32_t n_block = block_index(s, na, ni, nzb);
                /* Two uniform blocks: one piece each, touching wherever the offset has pairs. */
                if (kinds[n_block] != me)
                    return;
                if (k == 12) {
                    left_same = true;
                    if (threadIdx.x > 0)
                        return;
                } else if (k == 10 && !(left_same && threadIdx.x > 0) && (ib & 7) != 0) {
                    return; /* the block above: in this tree since init (a run's first block, not the first warp) */
                } else if (CONN == 26 && left_same && d0 <= 0) {
                    return;
                } else if (up_same && dz < 0 && d1 <= 0) {
                    return;
                } else if (k != 12 && d0 >= 0 && neighbour_pairs<CONN>(k - 1) != 0 && na >= 1 &&
                           kinds[n_block - 1] == me) {
                    return;
                }
                uniform_unions |= 1u << k;
            }
        };
        for_each_offset(visit, std::integer_sequence<int, 12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11>{});
        const uint32_t own = key_of(s, ab, ib, zb, 0);
#pragma unroll 1
        for (uint32_t todo = uniform_unions; todo; todo &= todo - 1) {
            const int k = __ffs(todo) - 1;
            unite(forest, own,
                      key_of(s, ab + backward_offset(k, 0), ib + backward_offset(k, 1), zb + backward_offset(k, 2), 0));
        }
    }
}

/* A warp's 32 blocks cover one segment (64 keys) of each of the 4 lines (sub-row r = 2*jz + j1) through
 * them; *segment := that segment's number when the line is inside the volume. */
__device__ __forceinline__ bool segment_of_row(const Shape &s, uint32_t ib, uint32_t zb, int r, uint32_t *segment)
{
    const uint32_t i1 = 2 * ib + (r & 1), z = 2 * zb + (r >> 1);
    *segment = (z * s.n1 + i1) * s.seg_per_line + blockIdx.x;
    return i1 < s.n1 && z < s.nz;
}

/* A representative (key, parent cell read) := its root: a walk that only reads, then one write of the
 * thread's own cell, so no stale ancestor is written back. Returns whether it is a root. */
__device__ __forceinline__ bool compress_representative(uint32_t *forest, uint32_t key, uint32_t parent)
{
    if (parent == key)
        return true;
    const uint32_t root = find_root(forest, parent);
    if (root != parent)
        forest[key] = root;
    return false;
}

/* Every representative := its root; segment_roots and root_words := the roots of every segment: bit t*32 + lane
 * of a root word is the root at a0 = 2*lane + t of the segment (the block of lane `lane`, its voxel t). A
 * uniform block's one representative is its voxel 0, whose parent cell is read with the class word. */
__global__ void __launch_bounds__(256) compress_kernel(const uint32_t *__restrict__ kinds,
                                                       const uint32_t *__restrict__ pieces, uint32_t *forest,
                                                       uint32_t *__restrict__ segment_roots,
                                                       unsigned long long *__restrict__ root_words, Shape s)
{
    VL_FOR_EACH_BLOCK(s)
    {
        const bool here = ab < s.b0;
        const uint32_t block = here ? block_index(s, ab, ib, zb) : 0;
        const uint32_t key = here ? key_of(s, ab, ib, zb, 0) : 0u;
        const uint32_t kind = here ? kinds[block] : kEmpty;
        const uint32_t first_parent = here ? forest[key] : 0u;
        uint32_t roots = 0; /* bit i: block voxel i is a root */
        if (kind == kMixed) {
#pragma unroll 1
            for (uint32_t reps = representatives(pieces[block]); reps; reps &= reps - 1) {
                const int i = __ffs(reps) - 1;
                const uint32_t rep = key_of(s, ab, ib, zb, i);
                if (compress_representative(forest, rep, i == 0 ? first_parent : __ldcg(forest + rep)))
                    roots |= 1u << i;
            }
        } else if (kind != kEmpty) {
            roots = compress_representative(forest, key, first_parent) ? 1u : 0u;
        }
        /* Voxel i lies on row r = i >> 1 of the 4 lines through the warp's blocks, at t = i & 1. */
        unsigned row_roots[8];
#pragma unroll
        for (int i = 0; i < 8; i++)
            row_roots[i] = __ballot_sync(0xFFFFFFFFu, roots >> i & 1u);
        if (threadIdx.x < 4) {
            const int r = threadIdx.x;
            const unsigned first = r == 0 ? row_roots[0] : r == 1 ? row_roots[2] : r == 2 ? row_roots[4] : row_roots[6];
            const unsigned second = r == 0 ? row_roots[1] : r == 1 ? row_roots[3] : r == 2 ? row_roots[5] : row_roots[7];
            uint32_t segment;
            if (segment_of_row(s, ib, zb, r, &segment)) {
                segment_roots[segment] = __popc(first) + __popc(second);
                root_words[segment] = first | (unsigned long long)second << 32;
            }
        }
    }
}

/* 0-based rank of `root` among all roots in key order. */
__device__ __forceinline__ uint32_t root_rank(const Shape &s, const uint32_t *__restrict__ segment_base,
                                              const unsigned long long *__restrict__ root_words, uint32_t root)
{
    const uint32_t line = fdiv(root, s.div_n0), a0 = root - line * s.n0;
    const uint32_t segment = line * s.seg_per_line + a0 / kSegmentKeys;
    const uint32_t lane = a0 % kSegmentKeys / 2, before = (1u << lane) - 1;
    const unsigned long long word = root_words[segment];
    const uint32_t first = (uint32_t)word, second = (uint32_t)(word >> 32);
    /* The roots of the lanes before, and at its own lane the one at t = 0 when the root is at t = 1. */
    return segment_base[segment] + __popc(first & before) + __popc(second & before) + (a0 & 1 ? first >> lane & 1 : 0);
}

/* The number of components, on the device: the scan's last base and the last segment's roots. */
__device__ __forceinline__ uint32_t component_total(const uint32_t *segment_roots, const uint32_t *segment_base,
                                                    uint64_t segments)
{
    return segment_base[segments - 1] + segment_roots[segments - 1];
}

/* sizes[0 .. min(N, capacity)) := 0, N read on the device. */
__global__ void clear_sizes_kernel(unsigned long long *sizes, uint32_t capacity, const uint32_t *segment_roots,
                                   const uint32_t *segment_base, uint64_t segments)
{
    const uint32_t count = min(component_total(segment_roots, segment_base, segments), capacity);
    for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x)
        sizes[k] = 0;
}

/* Adds 8 voxels to `label` for every lane whose uniform block is counted, once per group of lanes holding the
 * same label. All lanes call it. */
__device__ __forceinline__ void add_uniform_sizes(unsigned long long *sizes, uint32_t label, bool counted)
{
    const unsigned peers = __match_any_sync(0xFFFFFFFFu, counted ? label : 0u);
    if (counted && threadIdx.x == (unsigned)(__ffs(peers) - 1))
        atomicAdd(sizes + label - 1, 8ull * (unsigned)__popc(peers));
}

/* Where a block's labels go: under `matlab` into the thread block's shared tile (see init_kernel), under
 * `matlab-xy` straight into the labels (a lane's voxels lie along memory x, so a warp writes whole
 * sectors). */
template <bool XY>
__device__ __forceinline__ void put_label(uint32_t *tile, uint32_t *labels, const Shape &s, uint32_t ab, uint32_t ib,
                                          uint32_t zb, int i, uint32_t label)
{
    if (!XY)
        tile[tile_cell(threadIdx.x, threadIdx.y, i)] = label;
    else if (voxel_inside(s, ab, ib, zb, i))
        labels[voxel_of<XY>(s, ab, ib, zb, i)] = label;
}

/* A mixed block (pieces word `word`): every piece's label through its representative's root; with STORE the
 * labels of its voxels (put_label, through new_label when it is not null), with COUNT its pieces' sizes and,
 * for a root, its class. Mixed blocks are rare, so their sizes are added one piece at a time, without the
 * warp aggregation of the uniform blocks. */
template <typename T, bool XY, bool STORE, bool COUNT>
__device__ __forceinline__ void write_mixed(const T *__restrict__ classes, uint32_t word, const uint32_t *forest,
                                            uint32_t *tile, uint32_t *labels, const uint32_t *segment_base,
                                            const unsigned long long *root_words, const uint32_t *new_label,
                                            unsigned long long *sizes, uint32_t *component_class, uint32_t capacity,
                                            const Shape &s, uint32_t ab, uint32_t ib, uint32_t zb)
{
    uint32_t piece_label[8];
#pragma unroll 1
    for (uint32_t reps = representatives(word); reps; reps &= reps - 1) {
        const int p = __ffs(reps) - 1;
        const uint32_t key = key_of(s, ab, ib, zb, p), root = forest[key];
        const uint32_t label = root_rank(s, segment_base, root_words, root) + 1;
        if (STORE)
            piece_label[p] = new_label ? new_label[label - 1] : label;
        if (!COUNT || label > capacity)
            continue;
        if (root == key)
            component_class[label - 1] = (uint32_t)classes[voxel_of<XY>(s, ab, ib, zb, p)];
        uint32_t count = 0;
#pragma unroll
        for (int i = 0; i < 8; i++)
            count += piece_of(word, i) == (uint32_t)p;
        atomicAdd(sizes + label - 1, (unsigned long long)count);
    }
    if (STORE) {
#pragma unroll 1
        for (int i = 0; i < 8; i++) {
            const uint32_t piece = piece_of(word, i);
            put_label<XY>(tile, labels, s, ab, ib, zb, i, piece == kNoPiece ? 0u : piece_label[piece]);
        }
    }
}

/* Label L of a component: 1 + rank of its root (0 for background). STORE: labels := L (new_label[L - 1] when
 * new_label is not null) through each voxel's representative; COUNT: the sizes and classes of the labels up to
 * `capacity`. A uniform block has one piece, its voxel 0, whose parent cell holds its root after compress: one
 * read, one rank, 8 equal labels and a warp-aggregated size; mixed blocks take write_mixed. Under `matlab` the
 * labels leave through the shared tile along x (see init_kernel). */
template <typename T, bool XY, bool STORE, bool COUNT>
__global__ void __launch_bounds__(256, 8) write_kernel(const T *__restrict__ classes,
                                                       const uint32_t *__restrict__ kinds,
                                                       const uint32_t *__restrict__ pieces,
                                                       const uint32_t *__restrict__ forest, uint32_t *labels,
                                                       const uint32_t *__restrict__ segment_base,
                                                       const unsigned long long *__restrict__ root_words,
                                                       const uint32_t *__restrict__ new_label,
                                                       unsigned long long *sizes, uint32_t *component_class,
                                                       uint32_t capacity, Shape s)
{
    __shared__ uint32_t tile[XY || !STORE ? 1 : kTileCells];
    const uint32_t ab = blockIdx.x * 32 + threadIdx.x;
    for (uint32_t ib0 = blockIdx.y * 8; ib0 < s.b1; ib0 += gridDim.y * 8)
        for (uint32_t zb = blockIdx.z; zb < s.bz; zb += gridDim.z) {
            const uint32_t ib = ib0 + threadIdx.y;
            const bool here = ab < s.b0 && ib < s.b1;
            const uint32_t block = here ? block_index(s, ab, ib, zb) : 0;
            const uint32_t key = here ? key_of(s, ab, ib, zb, 0) : 0u;
            /* Voxel 0's parent cell is read with the class word (meaningless where voxel 0 is no
             * representative). */
            const uint32_t kind = here ? kinds[block] : kEmpty;
            const uint32_t root = here ? forest[key] : 0u;
            uint32_t label = 0;
            bool counted = false;
            if (kind == kMixed) {
                write_mixed<T, XY, STORE, COUNT>(classes, pieces[block], forest, tile, labels, segment_base,
                                                 root_words, new_label, sizes, component_class, capacity, s, ab, ib,
                                                 zb);
            } else {
                if (kind != kEmpty) {
                    label = root_rank(s, segment_base, root_words, root) + 1;
                    if (COUNT && label <= capacity) {
                        counted = true;
                        if (root == key)
                            component_class[label - 1] = kind;
                    }
                }
                if (STORE) {
                    const uint32_t stored = new_label && label ? new_label[label - 1] : label;
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        put_label<XY>(tile, labels, s, ab, ib, zb, i, stored);
                }
            }
            if (COUNT)
                add_uniform_sizes(sizes, label, counted);
            if (STORE && !XY) {
                __syncthreads();
                for_each_tile_voxel(
                    s, ib0, zb, [&](int, int cell, uint32_t v) { labels[v] = tile[cell]; }, [](int, int) {});
                __syncthreads();
            }
        }
}

#undef VL_FOR_EACH_BLOCK

/* Size orders: classes moved to the size order's labels. */
__global__ void permute_classes_kernel(const uint32_t *in, uint32_t *out, const uint32_t *new_label, uint32_t count)
{
    for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x)
        out[new_label[k] - 1] = in[k];
}

dim3 linear_grid(uint64_t items)
{
    const uint64_t blocks = (items + 255) / 256;
    return dim3((unsigned)(blocks < 1 ? 1 : blocks > 65535 * 16 ? 65535 * 16 : blocks));
}

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* Device buffers of one call (see Storage). */
struct Buffers {
    uint32_t *kinds, *pieces, *forest, *segment_roots, *segment_base;
    unsigned long long *root_words;
    unsigned long long *sizes;
    uint32_t *component_class;
    uint32_t capacity;
    uint32_t *mixed; /* the mixed blocks: their count, then their numbers (room for every block) */
};

/* What a write pass does (write_kernel): the labels and the sizes and classes (orders by key), the sizes and
 * classes alone, or the labels alone through the size order's table. */
enum class WritePass { kLabelsAndSizes, kSizes, kLabels };

template <typename T, bool XY>
void launch_write(WritePass pass, const T *classes, uint32_t *labels, const Buffers &b, const uint32_t *new_label,
                  const Shape &s, cudaStream_t stream)
{
    const auto kernel = pass == WritePass::kLabelsAndSizes ? write_kernel<T, XY, true, true>
                      : pass == WritePass::kSizes          ? write_kernel<T, XY, false, true>
                                                           : write_kernel<T, XY, true, false>;
    kernel<<<block_grid(s), dim3(32, 8), 0, stream>>>(classes, b.kinds, b.pieces, b.forest, labels, b.segment_base,
                                                      b.root_words, new_label, b.sizes, b.component_class,
                                                      b.capacity, s);
}

/* Every phase up to the write pass `pass`. */
template <int CONN, typename T, bool XY>
cudaError_t launch_phases(const T *classes, uint32_t *labels, const Buffers &b, const Shape &s, WritePass pass,
                          void *cub_temp, size_t scan_bytes, cudaEvent_t union_done, cudaStream_t stream)
{
    const dim3 grid = block_grid(s), threads(32, 8);
    const uint64_t segments = (uint64_t)s.nz * s.n1 * s.seg_per_line;
    /* merge_mixed_kernel reads the number of mixed blocks on the device: a warp per block at most, 2048 thread
     * blocks (16384 warps) stepping through a longer list. */
    const uint64_t blocks = (uint64_t)s.b0 * s.b1 * s.bz;
    const unsigned mixed_grid = (unsigned)(blocks / 8 + 1 < 2048 ? blocks / 8 + 1 : 2048);
    const cudaError_t error = cudaMemsetAsync(b.mixed, 0, sizeof *b.mixed, stream);
    if (error != cudaSuccess)
        return error;
    const uint32_t groups = (s.bz + kInitSlabs - 1) / kInitSlabs;
    const dim3 init_grid(grid.x, grid.y, groups < 65535 ? groups : 65535);
    init_kernel<CONN, T, XY><<<init_grid, threads, 0, stream>>>(classes, b.kinds, b.pieces, b.forest, b.mixed, s);
    merge_kernel<CONN><<<grid, threads, 0, stream>>>(b.kinds, b.forest, s);
    merge_mixed_kernel<CONN, T, XY><<<mixed_grid, 256, 0, stream>>>(classes, b.kinds, b.pieces, b.forest, b.mixed, s);
    compress_kernel<<<grid, threads, 0, stream>>>(b.kinds, b.pieces, b.forest, b.segment_roots,
                                                  b.root_words, s);
    if (union_done)
        cudaEventRecord(union_done, stream);
    cub::DeviceScan::ExclusiveSum(cub_temp, scan_bytes, b.segment_roots, b.segment_base, (int64_t)segments, stream);
    clear_sizes_kernel<<<b.capacity / 256 + 1 < 1024 ? b.capacity / 256 + 1 : 1024, 256, 0, stream>>>(
        b.sizes, b.capacity, b.segment_roots, b.segment_base, segments);
    launch_write<T, XY>(pass, classes, labels, b, nullptr, s, stream);
    return cudaGetLastError();
}

template <typename T, bool XY>
cudaError_t launch_labelling(int connectivity, const T *classes, uint32_t *labels, const Buffers &b, const Shape &s,
                             WritePass pass, void *cub_temp, size_t scan_bytes, cudaEvent_t union_done,
                             cudaStream_t stream)
{
    switch (connectivity) {
    case 4: return launch_phases<4, T, XY>(classes, labels, b, s, pass, cub_temp, scan_bytes, union_done, stream);
    case 8: return launch_phases<8, T, XY>(classes, labels, b, s, pass, cub_temp, scan_bytes, union_done, stream);
    case 6: return launch_phases<6, T, XY>(classes, labels, b, s, pass, cub_temp, scan_bytes, union_done, stream);
    case 18: return launch_phases<18, T, XY>(classes, labels, b, s, pass, cub_temp, scan_bytes, union_done, stream);
    default: return launch_phases<26, T, XY>(classes, labels, b, s, pass, cub_temp, scan_bytes, union_done, stream);
    }
}

/* Returns launch(T{}, std::integral_constant<bool, XY>{}) for the class map's element type (an i16 map holds
 * no negative class and is read as u16) and the order's node axis (XY: matlab-xy and size-raster). */
template <typename Launch>
cudaError_t for_class_type(vl_dtype dtype, bool xy, Launch launch)
{
    const auto on_axis = [&](auto t) { return xy ? launch(t, std::true_type{}) : launch(t, std::false_type{}); };
    switch (dtype) {
    case VL_U8: return on_axis(uint8_t{});
    case VL_U32: return on_axis(uint32_t{});
    default: return on_axis(uint16_t{});
    }
}

/* Bytes of the per-call scratch (everything but the class map and the labels) for one order's shape. */
uint64_t scratch_bytes_for(int64_t nx, int64_t ny, int64_t nz, bool xy, size_t scan_bytes)
{
    const Counts counts = layout_counts(nx, ny, nz, xy);
    const uint64_t blocks = counts.blocks, segments = counts.segments;
    const uint64_t voxels = (uint64_t)nx * (uint64_t)ny * (uint64_t)nz;
    return 2 * round_up(blocks * sizeof(uint32_t)) + round_up(voxels * sizeof(uint32_t)) +
           2 * round_up(segments * sizeof(uint32_t)) +
           round_up(segments * sizeof(unsigned long long)) + round_up(scan_bytes) +
           round_up((blocks + 1) * sizeof(unsigned long long)) + 2 * round_up((blocks + 1) * sizeof(uint32_t));
}

/* CUB's scan scratch is a few kilobytes; the plan leaves it this much. */
constexpr uint64_t kScanSlack = 1 << 20;

} // namespace

extern "C" uint64_t vl_gpu_multilabel_bytes(int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype)
{
    const uint64_t voxels = (uint64_t)nx * (uint64_t)ny * (uint64_t)nz;
    const uint64_t per_voxel = (dtype == VL_U8 ? 1 : dtype == VL_U32 ? 4 : 2) + sizeof(uint32_t);
    const uint64_t matlab = scratch_bytes_for(nx, ny, nz, false, kScanSlack);
    const uint64_t raster = scratch_bytes_for(nx, ny, nz, true, kScanSlack);
    return voxels * per_voxel + (matlab > raster ? matlab : raster);
}

extern "C" int vl_gpu_multilabel_shape_ok(int64_t nx, int64_t ny, int64_t nz)
{
    if (nx < 1 || ny < 1 || nz < 1 || nx > 0x7FFFFFFF || ny > 0x7FFFFFFF || nz > 0x7FFFFFFF)
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
    const bool xy = vl_label_order_is_raster(order) != 0;
    const Shape s = make_shape(nx, ny, nz, xy);
    const uint64_t voxels = (uint64_t)nx * ny * nz;
    const Counts counts = layout_counts(nx, ny, nz, xy);
    const uint64_t blocks = counts.blocks, segments = counts.segments;
    cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
    cudaEvent_t events[3] = {nullptr, nullptr, nullptr};
    void *forest_block = nullptr, *component_block = nullptr, *order_block = nullptr;
    Buffers b{};
    b.capacity = (uint32_t)(blocks < kNoNode - 1 ? blocks + 1 : kNoNode - 1);
    uint32_t *moved_class = nullptr;
    void *cub_temp = nullptr;
    size_t scan_bytes = 0, scratch_bytes = 0;
    uint32_t last_base = 0, last_roots = 0, count = 0;
    const uint32_t *new_label = nullptr;
    const bool by_size = vl_label_order_by_size(order) != 0;
    vl_status status = VL_OK;
    cudaError_t error = cudaSuccess;
    /* The size orders write the labels last, through the size order's table, from a sizes-only pass first. */
    const auto launch_all = [&] {
        return for_class_type(dtype, xy, [&](auto t, auto axis) {
            using T = decltype(t);
            return launch_labelling<T, decltype(axis)::value>(
                connectivity, static_cast<const T *>(classes), labels, b, s,
                by_size ? WritePass::kSizes : WritePass::kLabelsAndSizes, cub_temp, scan_bytes, events[1], stream);
        });
    };
    const auto write_pass = [&](WritePass pass, const uint32_t *table) {
        return for_class_type(dtype, xy, [&](auto t, auto axis) {
            using T = decltype(t);
            launch_write<T, decltype(axis)::value>(pass, static_cast<const T *>(classes), labels, b, table, s, stream);
            return cudaGetLastError();
        });
    };

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
                                                   (int64_t)segments, stream),
                     "sizing the root scan");
    {
        const size_t block_bytes = round_up(blocks * sizeof(uint32_t));
        const size_t segment_bytes = round_up(segments * sizeof(uint32_t));
        const size_t word_bytes = round_up(segments * sizeof(unsigned long long));
        const size_t parent_bytes = round_up(voxels * sizeof(uint32_t));
        const size_t mixed_bytes = round_up((blocks + 1) * sizeof(uint32_t));
        const size_t forest_bytes =
            2 * block_bytes + parent_bytes + 2 * segment_bytes + word_bytes + mixed_bytes + round_up(scan_bytes);
        CUDA_TRY_OR_DONE(cudaMallocAsync(&forest_block, forest_bytes, stream), "allocating the multilabel forest");
        char *at = static_cast<char *>(forest_block);
        b.root_words = reinterpret_cast<unsigned long long *>(at);
        b.kinds = reinterpret_cast<uint32_t *>(at += word_bytes);
        b.pieces = reinterpret_cast<uint32_t *>(at += block_bytes);
        b.forest = reinterpret_cast<uint32_t *>(at += block_bytes);
        b.segment_roots = reinterpret_cast<uint32_t *>(at += parent_bytes);
        b.segment_base = reinterpret_cast<uint32_t *>(at += segment_bytes);
        b.mixed = reinterpret_cast<uint32_t *>(at += segment_bytes);
        cub_temp = at + mixed_bytes;
        const size_t sizes_bytes = round_up((size_t)b.capacity * sizeof(unsigned long long));
        const size_t class_bytes = round_up((size_t)b.capacity * sizeof(uint32_t));
        CUDA_TRY_OR_DONE(cudaMallocAsync(&component_block, sizes_bytes + class_bytes, stream),
                         "allocating component sizes");
        b.sizes = static_cast<unsigned long long *>(component_block);
        b.component_class = reinterpret_cast<uint32_t *>(static_cast<char *>(component_block) + sizes_bytes);
        scratch_bytes = forest_bytes + sizes_bytes + class_bytes;
    }
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[0], stream), "recording an event");
    CUDA_TRY_OR_DONE(launch_all(), "multilabel labelling kernels");
    if (timed && !by_size)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[2], stream), "recording an event");
    /* N, read back once everything above is queued. */
    CUDA_TRY_OR_DONE(cudaMemcpyAsync(&last_base, b.segment_base + segments - 1, sizeof last_base,
                                     cudaMemcpyDeviceToHost, stream),
                     "reading the component count");
    CUDA_TRY_OR_DONE(cudaMemcpyAsync(&last_roots, b.segment_roots + segments - 1, sizeof last_roots,
                                     cudaMemcpyDeviceToHost, stream),
                     "reading the component count");
    CUDA_TRY_OR_DONE(cudaStreamSynchronize(stream), "multilabel labelling");
    count = last_base + last_roots;
    if (count > b.capacity) {
        /* More components than blocks: sizes and classes in arrays of their own size, from one more pass. */
        const size_t sizes_bytes = round_up((size_t)count * sizeof(unsigned long long));
        void *exact_block = nullptr;
        CUDA_TRY_OR_DONE(cudaMallocAsync(&exact_block, sizes_bytes + round_up((size_t)count * sizeof(uint32_t)), stream),
                         "allocating component sizes");
        CUDA_TRY_OR_DONE(cudaFreeAsync(component_block, stream), "releasing component sizes");
        component_block = exact_block;
        b.sizes = static_cast<unsigned long long *>(component_block);
        b.component_class = reinterpret_cast<uint32_t *>(static_cast<char *>(component_block) + sizes_bytes);
        b.capacity = count;
        CUDA_TRY_OR_DONE(cudaMemsetAsync(b.sizes, 0, (size_t)count * sizeof(unsigned long long), stream),
                         "clearing sizes");
        CUDA_TRY_OR_DONE(write_pass(WritePass::kSizes, nullptr), "counting component sizes");
    }
    if (by_size && count > 0) {
        const size_t class_bytes = round_up((size_t)count * sizeof(uint32_t));
        const size_t order_bytes = vlccl::size_order_scratch_bytes(count, (int64_t)voxels);
        CUDA_TRY_OR_DONE(cudaMallocAsync(&order_block, class_bytes + order_bytes, stream), "allocating the size order");
        moved_class = static_cast<uint32_t *>(order_block);
        CUDA_TRY_OR_DONE(vlccl::order_by_size(b.sizes, count, (int64_t)voxels, static_cast<char *>(order_block) + class_bytes,
                                              &new_label, stream),
                         "ordering by size");
        CUDA_TRY_OR_DONE(write_pass(WritePass::kLabels, new_label), "writing labels");
        permute_classes_kernel<<<linear_grid(count), 256, 0, stream>>>(b.component_class, moved_class, new_label, count);
        CUDA_TRY_OR_DONE(cudaGetLastError(), "renumbering by size");
        CUDA_TRY_OR_DONE(cudaMemcpyAsync(b.component_class, moved_class, (size_t)count * sizeof(uint32_t),
                                         cudaMemcpyDeviceToDevice, stream),
                         "renumbering by size");
    } else if (by_size) {
        CUDA_TRY_OR_DONE(write_pass(WritePass::kLabels, nullptr), "writing labels");
    }
    if (timed && by_size)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[2], stream), "recording an event");
    CUDA_TRY_OR_DONE(cudaStreamSynchronize(stream), "multilabel labelling");
    if (timed) {
        CUDA_TRY_OR_DONE(cudaEventElapsedTime(&run->union_ms, events[0], events[1]), "reading timings");
        CUDA_TRY_OR_DONE(cudaEventElapsedTime(&run->total_ms, events[0], events[2]), "reading timings");
    }
    /* The component block (sizes first) stays with the caller: vl_gpu_multilabel_run_free releases it. */
    run->count = count;
    run->sizes = b.sizes;
    run->classes = b.component_class;
    run->scratch_bytes = scratch_bytes;
    component_block = nullptr;

done:
    if (forest_block)
        cudaFreeAsync(forest_block, stream);
    if (component_block)
        cudaFreeAsync(component_block, stream);
    if (order_block)
        cudaFreeAsync(order_block, stream);
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
                       (double)vl_gpu_multilabel_bytes(slab->nx, slab->ny, slab->nz, slab->dtype) / (1 << 20),
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
    uint64_t budget = 0;
    if ((status = vlccl::select_device_budget(options->device, &budget)) != VL_OK)
        return status;
    const int64_t node_limit = (int64_t)((kNoNode - 1) / ((uint64_t)classes->nx * (uint64_t)classes->ny));
    if (node_limit < 1)
        return vl_fail(VL_ERR_DEVICE, "gpu: %lldx%lld slices are beyond the GPU multilabel labeller's limits",
                       (long long)classes->nx, (long long)classes->ny);
    /* The deepest slab within the budget (vl_gpu_multilabel_bytes grows with the depth), at least one slice. */
    int64_t depth = 1, beyond = (classes->nz < node_limit ? classes->nz : node_limit) + 1;
    while (beyond - depth > 1) {
        const int64_t mid = depth + (beyond - depth) / 2;
        (vl_gpu_multilabel_bytes(classes->nx, classes->ny, mid, classes->dtype) <= budget ? depth : beyond) = mid;
    }

    vl_progress_report(&options->progress, "labelling classes (gpu)", 0.0);
    ClassSlabs device{options->device.gpu_index, options->connectivity, 0, nullptr, nullptr};
    status = vl_label_in_slabs(classes, 1, labels, options, depth, label_class_slab, &device, result, &result->slabs);
    device.release();
    if (status != VL_OK)
        return status;
    vlccl::name_device_used(result, options->device.gpu_index);
    vl_progress_report(&options->progress, "labelling classes (gpu)", 1.0);
    return VL_OK;
}
