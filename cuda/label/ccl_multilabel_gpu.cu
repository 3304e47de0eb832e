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
 * its two slices always do. Union-find runs on representatives only: the parent array is indexed by key
 * and touched nowhere else.
 *
 * Phases (threads: lanes along a0 blocks, so that key-indexed arrays are read in whole sectors; under
 * `matlab` the class map and the labels pass through a shared tile, see init_kernel):
 *   init      each block's word (BlockWord) and parent[r] := r for its representatives (a uniform block
 *             in a run of uniform blocks of its class along the warp: the run's first block)
 *   merge     every piece unites with the pieces of its 13 backward neighbour blocks that it touches,
 *             less the unions that a left neighbour makes
 *   compress  every representative points at its root (first those not linked in init, with path
 *             halving); roots counted per segment (64 keys of a line)
 *   scan      CUB exclusive sum of the segment counts
 *   rank      rank[root] := segment base + roots before it in its segment; each root's class
 *   write     labels := rank[root] + 1 through each voxel's representative; sizes (warp-aggregated)
 *   and for the size orders the CUB sort of ccl_size_order.cu and one remap pass.
 * Device memory: the class map, the labels, the parent and rank arrays (u32 per voxel each, used only at
 * representatives and roots), a BlockWord per block, two u32 per segment, and O(components). */
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
/* BlockWord.kind: no foreground, several classes or pieces, else the one class of a full block that is
 * one piece (a class value equal to kMixed is simply described as mixed). */
constexpr uint32_t kEmpty = 0;
constexpr uint32_t kMixed = 0xFFFFFFFFu;
/* BlockWord.pieces: 4 bits per block voxel, its representative's index, kNoPiece for background. */
constexpr uint32_t kNoPiece = 8;
constexpr uint32_t kNoPieces = 0x88888888u;
/* Keys per counting segment: a warp's 32 blocks along a0. */
constexpr int kSegmentKeys = 64;

struct BlockWord {
    uint32_t kind, pieces;
};

struct Shape {
    int64_t nx, ny, nz, sxy;
    int64_t n0, n1;           /* voxels along a0 and i1 */
    uint32_t b0, b1, bz;      /* blocks along a0, i1, z */
    uint32_t seg_per_line;    /* ceil(n0 / kSegmentKeys) */
};

Shape make_shape(int64_t nx, int64_t ny, int64_t nz, bool xy)
{
    Shape s;
    s.nx = nx;
    s.ny = ny;
    s.nz = nz;
    s.sxy = nx * ny;
    s.n0 = xy ? nx : ny;
    s.n1 = xy ? ny : nx;
    s.b0 = (uint32_t)((s.n0 + 1) / 2);
    s.b1 = (uint32_t)((s.n1 + 1) / 2);
    s.bz = (uint32_t)((nz + 1) / 2);
    s.seg_per_line = (uint32_t)((s.n0 + kSegmentKeys - 1) / kSegmentKeys);
    return s;
}

uint64_t segment_count(const Shape &s) { return (uint64_t)s.nz * (uint64_t)s.n1 * s.seg_per_line; }

__host__ __device__ constexpr int connectivity_index(int connectivity)
{
    return connectivity == 4 ? 0 : connectivity == 8 ? 1 : connectivity == 6 ? 2 : connectivity == 18 ? 3 : 4;
}

/* Are voxels (d0, d1, dz) apart neighbours under the connectivity? */
__host__ __device__ constexpr bool voxels_adjacent(int connectivity, int d0, int d1, int dz)
{
    return (d0 < -1 || d0 > 1 || d1 < -1 || d1 > 1 || dz < -1 || dz > 1) ? false
         : ((connectivity == 4 || connectivity == 8) && dz != 0) ? false
         : (d0 != 0) + (d1 != 0) + (dz != 0) <=
               ((connectivity == 6 || connectivity == 4) ? 1 : (connectivity == 18 || connectivity == 8) ? 2 : 3);
}

/* The 13 backward block offsets (those before (0,0,0) in key order), axis 0 = a0, 1 = i1, 2 = z:
 * k 0..8: dz = -1, (d1, d0) over {-1,0,1}^2; k 9..11: dz = 0, d1 = -1; k 12: (-1, 0, 0), the left block. */
__host__ __device__ constexpr int backward_offset(int k, int axis)
{
    return k < 9 ? (axis == 2 ? -1 : axis == 1 ? k / 3 - 1 : k % 3 - 1)
         : k < 12 ? (axis == 2 ? 0 : axis == 1 ? -1 : k - 10)
         : (axis == 0 ? -1 : 0);
}

/* Bit 8*i + j: voxel i of a block and voxel j of its backward neighbour k are adjacent. */
__host__ __device__ constexpr uint64_t neighbour_pairs(int connectivity, int k)
{
    uint64_t pairs = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (voxels_adjacent(connectivity, 2 * backward_offset(k, 0) + (j & 1) - (i & 1),
                                2 * backward_offset(k, 1) + (j >> 1 & 1) - (i >> 1 & 1),
                                2 * backward_offset(k, 2) + (j >> 2) - (i >> 2)))
                pairs |= 1ull << (8 * i + j);
    return pairs;
}

/* Bit j: voxels i and j of one block are adjacent. */
__host__ __device__ constexpr uint32_t block_neighbours(int connectivity, int i)
{
    uint32_t near = 0;
    for (int j = 0; j < 8; j++)
        if (j != i && voxels_adjacent(connectivity, (j & 1) - (i & 1), (j >> 1 & 1) - (i >> 1 & 1), (j >> 2) - (i >> 2)))
            near |= 1u << j;
    return near;
}

#define VL_PAIRS(c)                                                                                         \
    {neighbour_pairs(c, 0), neighbour_pairs(c, 1), neighbour_pairs(c, 2), neighbour_pairs(c, 3),              \
     neighbour_pairs(c, 4), neighbour_pairs(c, 5), neighbour_pairs(c, 6), neighbour_pairs(c, 7),              \
     neighbour_pairs(c, 8), neighbour_pairs(c, 9), neighbour_pairs(c, 10), neighbour_pairs(c, 11),            \
     neighbour_pairs(c, 12)}
#define VL_NEAR(c)                                                                                          \
    {block_neighbours(c, 0), block_neighbours(c, 1), block_neighbours(c, 2), block_neighbours(c, 3),          \
     block_neighbours(c, 4), block_neighbours(c, 5), block_neighbours(c, 6), block_neighbours(c, 7)}
/* Indexed by connectivity_index. */
__constant__ uint64_t kNeighbourPairs[5][13] = {VL_PAIRS(4), VL_PAIRS(8), VL_PAIRS(6), VL_PAIRS(18), VL_PAIRS(26)};
__constant__ uint32_t kBlockNeighbours[5][8] = {VL_NEAR(4), VL_NEAR(8), VL_NEAR(6), VL_NEAR(18), VL_NEAR(26)};
#undef VL_PAIRS
#undef VL_NEAR

__device__ __forceinline__ uint32_t key_of(const Shape &s, int64_t ab, int64_t ib, int64_t zb, int i)
{
    const int64_t a0 = 2 * ab + (i & 1), i1 = 2 * ib + (i >> 1 & 1), z = 2 * zb + (i >> 2);
    return (uint32_t)((z * s.n1 + i1) * s.n0 + a0);
}

template <bool XY>
__device__ __forceinline__ int64_t voxel_of(const Shape &s, int64_t ab, int64_t ib, int64_t zb, int i)
{
    const int64_t a0 = 2 * ab + (i & 1), i1 = 2 * ib + (i >> 1 & 1), z = 2 * zb + (i >> 2);
    return XY ? z * s.sxy + i1 * s.nx + a0 : z * s.sxy + a0 * s.nx + i1;
}

__device__ __forceinline__ bool voxel_inside(const Shape &s, int64_t ab, int64_t ib, int64_t zb, int i)
{
    return 2 * ab + (i & 1) < s.n0 && 2 * ib + (i >> 1 & 1) < s.n1 && 2 * zb + (i >> 2) < s.nz;
}

__device__ __forceinline__ uint64_t block_index(const Shape &s, int64_t ab, int64_t ib, int64_t zb)
{
    return ((uint64_t)zb * s.b1 + (uint64_t)ib) * s.b0 + (uint64_t)ab;
}

__device__ __forceinline__ uint32_t piece_of(uint32_t pieces, int i) { return pieces >> (4 * i) & 0xFu; }

/* The block's classes (0 outside the volume); returns whether all 8 voxels are inside. */
template <typename T, bool XY>
__device__ __forceinline__ bool load_block(const T *__restrict__ classes, const Shape &s, int64_t ab, int64_t ib,
                                           int64_t zb, uint32_t (&c)[8])
{
    bool full = true;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const bool inside = voxel_inside(s, ab, ib, zb, i);
        c[i] = inside ? (uint32_t)classes[voxel_of<XY>(s, ab, ib, zb, i)] : 0u;
        full = full && inside;
    }
    return full;
}

/* The pieces word of a block's classes (see BlockWord). */
__device__ __forceinline__ uint32_t block_pieces(const uint32_t (&c)[8], int ci)
{
    uint32_t pieces = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint32_t same = 0;
#pragma unroll
        for (int j = 0; j < 8; j++)
            same |= (uint32_t)(c[j] == c[i]) << j;
        uint32_t piece = same;
        if (ci != connectivity_index(26)) {
            /* Grow {i} through adjacent voxels of its class until it stops growing. */
            piece = 1u << i;
            for (;;) {
                uint32_t grown = piece;
#pragma unroll
                for (int j = 0; j < 8; j++)
                    if (piece >> j & 1u)
                        grown |= kBlockNeighbours[ci][j];
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

/* The classes of a block from its word: a uniform block's without reading the map. */
template <typename T, bool XY>
__device__ __forceinline__ void block_classes(const T *__restrict__ classes, const Shape &s, BlockWord w, int64_t ab,
                                              int64_t ib, int64_t zb, uint32_t (&c)[8])
{
    if (w.kind != kMixed) {
#pragma unroll
        for (int i = 0; i < 8; i++)
            c[i] = w.kind;
    } else {
        load_block<T, XY>(classes, s, ab, ib, zb, c);
    }
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

/* Threads: 32 lanes along a0 blocks, 8 warps along i1 blocks; grid y and z stride over i1 and z blocks.
 * All lanes of a warp share (ib, zb) and run the loops together, so warp votes are over full warps. */
dim3 block_grid(const Shape &s)
{
    const uint32_t gy = (s.b1 + 7) / 8;
    return dim3((s.b0 + 31) / 32, gy < 65535 ? gy : 65535, s.bz < 65535 ? s.bz : 65535);
}

#define VL_FOR_EACH_BLOCK(s)                                                                                \
    const int64_t ab = (int64_t)blockIdx.x * 32 + threadIdx.x;                                                \
    for (int64_t ib = (int64_t)blockIdx.y * 8 + threadIdx.y; ib < (s).b1; ib += (int64_t)gridDim.y * 8)       \
        for (int64_t zb = blockIdx.z; zb < (s).bz; zb += gridDim.z)

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
 * cells per thread: visit(cell, voxel index) for the voxels inside the volume, else outside(cell). */
template <typename Visit, typename Outside>
__device__ __forceinline__ void for_each_tile_voxel(const Shape &s, int64_t ib0, int64_t zb, Visit visit,
                                                    Outside outside)
{
    const int64_t y0 = (int64_t)blockIdx.x * 64, x0 = 2 * ib0, z0 = 2 * zb;
    const int thread = threadIdx.y * 32 + threadIdx.x;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const int cell = e * 256 + thread, dx = cell % 16, row = cell / 16, dy = row % 64, dz = row / 64;
        const int64_t x = x0 + dx, y = y0 + dy, z = z0 + dz;
        if (x < s.nx && y < s.ny && z < s.nz)
            visit(row * kTilePitch + dx, z * s.sxy + y * s.nx + x);
        else
            outside(row * kTilePitch + dx);
    }
}

/* Each block's word, and parent[r] := r for its representatives; except that a uniform block whose left
 * lane's block is uniform of its class points at the first block of that run of lanes (a smaller key of
 * its component, found by ballot), and the first block of a run whose block above (previous warp, same
 * lane) is uniform of its class points at the first block of that block's run (through shared memory), so
 * that merge leaves those unions out. The loop over i1 steps whole thread blocks, so that every thread
 * reaches the barriers. */
template <typename T, bool XY>
__global__ void __launch_bounds__(256) init_kernel(const T *__restrict__ classes, BlockWord *blocks, uint32_t *parent,
                                                   Shape s, int ci)
{
    __shared__ uint32_t tile[XY ? 1 : kTileCells];
    __shared__ uint32_t run_kind[8][32];
    __shared__ unsigned run_first[8][32];
    const unsigned lane = threadIdx.x, warp = threadIdx.y;
    const int64_t ab = (int64_t)blockIdx.x * 32 + threadIdx.x;
    for (int64_t ib0 = (int64_t)blockIdx.y * 8; ib0 < s.b1; ib0 += (int64_t)gridDim.y * 8)
        for (int64_t zb = blockIdx.z; zb < s.bz; zb += gridDim.z) {
            const int64_t ib = ib0 + threadIdx.y;
            if (!XY) {
                for_each_tile_voxel(
                    s, ib0, zb, [&](int cell, int64_t v) { tile[cell] = (uint32_t)classes[v]; },
                    [&](int cell) { tile[cell] = 0u; });
                __syncthreads();
            }
            BlockWord w{kEmpty, kNoPieces};
            if (ab < s.b0 && ib < s.b1) {
                uint32_t c[8];
                bool full = true;
                if (XY) {
                    full = load_block<T, XY>(classes, s, ab, ib, zb, c);
                } else {
#pragma unroll
                    for (int i = 0; i < 8; i++) {
                        c[i] = tile[tile_cell(lane, threadIdx.y, i)];
                        full = full && voxel_inside(s, ab, ib, zb, i);
                    }
                }
                bool any = false, uniform = full && c[0] != 0 && c[0] != kMixed && ci >= connectivity_index(6);
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    any = any || c[i] != 0;
                    uniform = uniform && c[i] == c[0];
                }
                if (uniform)
                    w = BlockWord{c[0], 0u};
                else if (any)
                    w = BlockWord{kMixed, block_pieces(c, ci)};
                blocks[block_index(s, ab, ib, zb)] = w;
            }
            const bool uniform = w.kind != kEmpty && w.kind != kMixed;
            const uint32_t left_kind = __shfl_up_sync(0xFFFFFFFFu, w.kind, 1);
            const bool joined = lane > 0 && uniform && left_kind == w.kind;
            const unsigned starts = ~__ballot_sync(0xFFFFFFFFu, joined);
            const unsigned start = 31 - __clz(starts & (0xFFFFFFFFu >> (31 - lane)));
            run_kind[warp][lane] = w.kind;
            run_first[warp][lane] = start;
            __syncthreads();
            if (joined) {
                parent[key_of(s, ab, ib, zb, 0)] = key_of(s, ab - (lane - start), ib, zb, 0);
            } else if (uniform && warp > 0 && run_kind[warp - 1][lane] == w.kind) {
                parent[key_of(s, ab, ib, zb, 0)] = key_of(s, ab - (lane - run_first[warp - 1][lane]), ib - 1, zb, 0);
            } else {
#pragma unroll
                for (int i = 0; i < 8; i++)
                    if (piece_of(w.pieces, i) == (uint32_t)i) {
                        const uint32_t key = key_of(s, ab, ib, zb, i);
                        parent[key] = key;
                    }
            }
            __syncthreads(); /* before the next iteration overwrites the tile and the runs */
        }
}

/* Every piece unites with each piece of a backward neighbour block that one of its voxels touches (same
 * class, adjacent). Between uniform blocks B and N of one class (offset d), most unions are left to others,
 * by induction over (B's a0, d's a0 step):
 *   - B's left neighbour L: united in init when it is the left lane's block, else here;
 *   - the block above, B + (0,-1,0), for the first block of a run: linked in init when it is in the thread
 *     block's previous warp (ib % 8 != 0), else here;
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
 * block, with the same partition. */
template <typename T, bool XY>
__global__ void __launch_bounds__(256, 4) merge_kernel(const T *__restrict__ classes, const BlockWord *__restrict__ blocks, uint32_t *parent,
                             Shape s, int ci)
{
    VL_FOR_EACH_BLOCK(s)
    {
        if (ab >= s.b0)
            continue;
        const BlockWord me = blocks[block_index(s, ab, ib, zb)];
        if (me.kind == kEmpty)
            continue;
        uint32_t c[8];
        bool have_classes = false, left_same = false;
        const bool up_same = ci == connectivity_index(26) && me.kind != kMixed && ib >= 1 &&
                             blocks[block_index(s, ab, ib - 1, zb)].kind == me.kind;
        for (int q = 0; q < 13; q++) {
            const int k = q == 0 ? 12 : q - 1;
            const int d0 = backward_offset(k, 0), d1 = backward_offset(k, 1), dz = backward_offset(k, 2);
            const int64_t na = ab + d0, ni = ib + d1, nzb = zb + dz;
            if (na < 0 || na >= s.b0 || ni < 0 || ni >= s.b1 || nzb < 0)
                continue;
            const uint64_t pairs = kNeighbourPairs[ci][k];
            if (!pairs)
                continue;
            const BlockWord nb = blocks[block_index(s, na, ni, nzb)];
            if (nb.kind == kEmpty)
                continue;
            if (me.kind != kMixed && nb.kind != kMixed) {
                /* Two uniform blocks: one piece each, touching wherever the offset has pairs. */
                if (me.kind != nb.kind)
                    continue;
                if (q == 0) {
                    left_same = true;
                    if (threadIdx.x > 0)
                        continue;
                } else if (k == 10 && !(left_same && threadIdx.x > 0) && (ib & 7) != 0) {
                    continue; /* the block above: linked in init (the first block of a run, not the first warp) */
                } else if (left_same && d0 <= 0 && ci == connectivity_index(26)) {
                    continue;
                } else if (up_same && dz < 0 && d1 <= 0) {
                    continue;
                } else if (d0 >= 0 && na >= 1 && kNeighbourPairs[ci][k - 1] &&
                           blocks[block_index(s, na - 1, ni, nzb)].kind == me.kind) {
                    continue;
                }
                unite(parent, key_of(s, ab, ib, zb, 0), key_of(s, na, ni, nzb, 0));
                continue;
            }
            if (!have_classes) {
                block_classes<T, XY>(classes, s, me, ab, ib, zb, c);
                have_classes = true;
            }
            uint32_t n[8];
            block_classes<T, XY>(classes, s, nb, na, ni, nzb, n);
            /* Bit 8*p + r: piece p here touches piece r there. */
            uint64_t links = 0;
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    if ((pairs >> (8 * i + j) & 1u) && c[i] != 0 && c[i] == n[j])
                        links |= 1ull << (8 * piece_of(me.pieces, i) + piece_of(nb.pieces, j));
            while (links) {
                const int bit = __ffsll((long long)links) - 1;
                links &= links - 1;
                unite(parent, key_of(s, ab, ib, zb, bit >> 3), key_of(s, na, ni, nzb, bit & 7));
            }
        }
    }
}

/* Bit i: voxel i of the block is a root. With `compress`, every representative is first pointed at its
 * root (other threads' walks see the old parent or the root, both ancestors). */
template <bool Compress>
__device__ __forceinline__ uint32_t block_roots(const Shape &s, uint32_t *parent, uint32_t pieces, int64_t ab,
                                                int64_t ib, int64_t zb)
{
    uint32_t roots = 0;
#pragma unroll
    for (int i = 0; i < 8; i++)
        if (piece_of(pieces, i) == (uint32_t)i) {
            const uint32_t key = key_of(s, ab, ib, zb, i);
            if (Compress) {
                const uint32_t root = find_root(parent, key);
                if (root != key)
                    parent[key] = root;
                else
                    roots |= 1u << i;
            } else if (__ldcg(parent + key) == key) {
                roots |= 1u << i;
            }
        }
    return roots;
}

/* A warp's 32 blocks cover one segment (64 keys) of each of the 4 lines (sub-row r = 2*jz + j1) through
 * them; *segment := that segment's number when the line is inside the volume. */
__device__ __forceinline__ bool segment_of_row(const Shape &s, int64_t ib, int64_t zb, int r, uint64_t *segment)
{
    const int64_t i1 = 2 * ib + (r & 1), z = 2 * zb + (r >> 1);
    *segment = ((uint64_t)z * (uint64_t)s.n1 + (uint64_t)i1) * s.seg_per_line + blockIdx.x;
    return i1 < s.n1 && z < s.nz;
}

/* The representatives that init did not link to their run's first block (runs' first blocks, mixed blocks)
 * point at their roots, with path halving on the way (merge is over: every store is an ancestor, and
 * parents stay below their nodes). The blocks linked in init then reach their root in two steps in
 * compress_kernel, instead of each walking its run's first block's path again. */
__global__ void __launch_bounds__(256) compress_runs_kernel(const BlockWord *__restrict__ blocks, uint32_t *parent,
                                                            Shape s)
{
    const unsigned lane = threadIdx.x;
    VL_FOR_EACH_BLOCK(s)
    {
        const BlockWord w = ab < s.b0 ? blocks[block_index(s, ab, ib, zb)] : BlockWord{kEmpty, kNoPieces};
        const uint32_t left_kind = __shfl_up_sync(0xFFFFFFFFu, w.kind, 1);
        if (lane > 0 && w.kind != kEmpty && w.kind != kMixed && left_kind == w.kind)
            continue; /* linked in init */
#pragma unroll
        for (int i = 0; i < 8; i++)
            if (piece_of(w.pieces, i) == (uint32_t)i) {
                const uint32_t key = key_of(s, ab, ib, zb, i);
                const uint32_t root = find_root_halving(parent, key);
                if (root != key)
                    parent[key] = root;
            }
    }
}

__global__ void __launch_bounds__(256) compress_kernel(const BlockWord *__restrict__ blocks, uint32_t *parent,
                                                       uint32_t *segment_roots, Shape s)
{
    VL_FOR_EACH_BLOCK(s)
    {
        const uint32_t pieces = ab < s.b0 ? blocks[block_index(s, ab, ib, zb)].pieces : kNoPieces;
        const uint32_t roots = block_roots<true>(s, parent, pieces, ab, ib, zb);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const unsigned first = __ballot_sync(0xFFFFFFFFu, roots >> (2 * r) & 1u);
            const unsigned second = __ballot_sync(0xFFFFFFFFu, roots >> (2 * r + 1) & 1u);
            uint64_t segment;
            if (segment_of_row(s, ib, zb, r, &segment) && threadIdx.x == 0)
                segment_roots[segment] = __popc(first) + __popc(second);
        }
    }
}

/* rank[root] := its rank among all roots in key order; component_class[rank] := its class. */
template <typename T, bool XY>
__global__ void rank_kernel(const T *__restrict__ classes, const BlockWord *__restrict__ blocks,
                            uint32_t *parent, const uint32_t *__restrict__ segment_base, uint32_t *rank,
                            uint32_t *component_class, Shape s)
{
    const unsigned below = (1u << threadIdx.x) - 1u;
    VL_FOR_EACH_BLOCK(s)
    {
        const BlockWord w = ab < s.b0 ? blocks[block_index(s, ab, ib, zb)] : BlockWord{kEmpty, kNoPieces};
        const uint32_t roots = block_roots<false>(s, parent, w.pieces, ab, ib, zb);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const unsigned first = __ballot_sync(0xFFFFFFFFu, roots >> (2 * r) & 1u);
            const unsigned second = __ballot_sync(0xFFFFFFFFu, roots >> (2 * r + 1) & 1u);
            uint64_t segment;
            if (!segment_of_row(s, ib, zb, r, &segment))
                continue;
            /* Keys along the segment: lane by lane, the block's first voxel before its second. */
            const uint32_t before = segment_base[segment] + __popc(first & below) + __popc(second & below);
#pragma unroll
            for (int t = 0; t < 2; t++) {
                const int i = 2 * r + t;
                if (roots >> i & 1u) {
                    const uint32_t at = before + (t ? (first >> threadIdx.x & 1u) : 0u);
                    rank[key_of(s, ab, ib, zb, i)] = at;
                    component_class[at] = w.kind != kMixed ? w.kind : (uint32_t)classes[voxel_of<XY>(s, ab, ib, zb, i)];
                }
            }
        }
    }
}

/* Adds each lane's `count` voxels (0..8) to `label`, once per group of lanes holding the same label.
 * All lanes call it. */
__device__ __forceinline__ void add_sizes(unsigned long long *sizes, uint32_t label, uint32_t count)
{
    unsigned count_bits[4];
#pragma unroll
    for (int b = 0; b < 4; b++)
        count_bits[b] = __ballot_sync(0xFFFFFFFFu, count >> b & 1u);
    const unsigned peers = __match_any_sync(0xFFFFFFFFu, count ? label : 0u);
    if (count && threadIdx.x == (unsigned)(__ffs(peers) - 1)) {
        unsigned long long total = 0;
#pragma unroll
        for (int b = 0; b < 4; b++)
            total += (unsigned long long)__popc(peers & count_bits[b]) << b;
        atomicAdd(sizes + label - 1, total);
    }
}


/* labels := rank of the root + 1 (0 for background) through each voxel's representative; sizes.
 * Under `matlab-xy` a lane's voxels lie along memory x and a warp writes whole sectors directly; under
 * `matlab` the labels leave through the shared tile along x (see init_kernel). */
template <bool XY>
__global__ void __launch_bounds__(256, 4) write_kernel(const BlockWord *__restrict__ blocks, const uint32_t *__restrict__ parent,
                             const uint32_t *__restrict__ rank, uint32_t *labels, unsigned long long *sizes, Shape s)
{
    __shared__ uint32_t tile[XY ? 1 : kTileCells];
    const int64_t ab = (int64_t)blockIdx.x * 32 + threadIdx.x;
    for (int64_t ib0 = (int64_t)blockIdx.y * 8; ib0 < s.b1; ib0 += (int64_t)gridDim.y * 8)
        for (int64_t zb = blockIdx.z; zb < s.bz; zb += gridDim.z) {
            const int64_t ib = ib0 + threadIdx.y;
            const bool here = ab < s.b0 && ib < s.b1;
            const uint32_t pieces = here ? blocks[block_index(s, ab, ib, zb)].pieces : kNoPieces;
            uint32_t piece_label[8];
#pragma unroll
            for (int p = 0; p < 8; p++)
                piece_label[p] = piece_of(pieces, p) == (uint32_t)p ? rank[parent[key_of(s, ab, ib, zb, p)]] + 1 : 0u;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                uint32_t label = 0;
#pragma unroll
                for (int p = 0; p <= i; p++)
                    if (piece_of(pieces, i) == (uint32_t)p)
                        label = piece_label[p];
                if (!XY)
                    tile[tile_cell(threadIdx.x, threadIdx.y, i)] = label;
                else if (here && voxel_inside(s, ab, ib, zb, i))
                    labels[voxel_of<XY>(s, ab, ib, zb, i)] = label;
            }
            /* Most blocks are one piece: their voxels all go to piece 0's slot. */
#pragma unroll
            for (int p = 0; p < 8; p++) {
                uint32_t count = 0;
#pragma unroll
                for (int i = p; i < 8; i++)
                    count += piece_of(pieces, i) == (uint32_t)p;
                if (__any_sync(0xFFFFFFFFu, count != 0))
                    add_sizes(sizes, piece_label[p], count);
            }
            if (!XY) {
                __syncthreads();
                for_each_tile_voxel(
                    s, ib0, zb, [&](int cell, int64_t v) { labels[v] = tile[cell]; }, [](int) {});
                __syncthreads();
            }
        }
}

#undef VL_FOR_EACH_BLOCK

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

dim3 linear_grid(uint64_t items)
{
    const uint64_t blocks = (items + 255) / 256;
    return dim3((unsigned)(blocks < 1 ? 1 : blocks > 65535 * 16 ? 65535 * 16 : blocks));
}

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <typename T>
cudaError_t launch_forest(const void *classes, BlockWord *blocks, uint32_t *parent, const Shape &s, bool xy, int ci,
                          cudaStream_t stream)
{
    const T *c = static_cast<const T *>(classes);
    const dim3 grid = block_grid(s), block(32, 8);
    if (xy) {
        init_kernel<T, true><<<grid, block, 0, stream>>>(c, blocks, parent, s, ci);
        merge_kernel<T, true><<<grid, block, 0, stream>>>(c, blocks, parent, s, ci);
    } else {
        init_kernel<T, false><<<grid, block, 0, stream>>>(c, blocks, parent, s, ci);
        merge_kernel<T, false><<<grid, block, 0, stream>>>(c, blocks, parent, s, ci);
    }
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_rank(const void *classes, const BlockWord *blocks, uint32_t *parent,
                        const uint32_t *segment_base, uint32_t *rank, uint32_t *component_class, const Shape &s,
                        bool xy, cudaStream_t stream)
{
    const T *c = static_cast<const T *>(classes);
    const dim3 grid = block_grid(s), block(32, 8);
    if (xy)
        rank_kernel<T, true><<<grid, block, 0, stream>>>(c, blocks, parent, segment_base, rank, component_class, s);
    else
        rank_kernel<T, false><<<grid, block, 0, stream>>>(c, blocks, parent, segment_base, rank, component_class, s);
    return cudaGetLastError();
}

} // namespace

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
    const int ci = connectivity_index(connectivity);
    const uint64_t nodes = (uint64_t)nx * ny * nz;
    const uint64_t block_count = (uint64_t)s.b0 * s.b1 * s.bz;
    const uint64_t segments = segment_count(s);
    const dim3 grid = block_grid(s), threads(32, 8);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
    cudaEvent_t events[3] = {nullptr, nullptr, nullptr};
    void *forest_block = nullptr, *component_block = nullptr;
    uint32_t *parent = nullptr, *rank = nullptr, *segment_roots = nullptr, *segment_base = nullptr;
    BlockWord *blocks = nullptr;
    unsigned long long *sizes = nullptr;
    uint32_t *component_class = nullptr, *moved_class = nullptr;
    void *cub_temp = nullptr, *order_temp = nullptr;
    size_t scan_bytes = 0, scratch_bytes = 0;
    uint32_t last_base = 0, last_roots = 0, count = 0;
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
                                                   (int64_t)segments, stream),
                     "sizing the root scan");
    {
        const size_t node_bytes = round_up(nodes * sizeof(uint32_t));
        const size_t block_bytes = round_up(block_count * sizeof(BlockWord));
        const size_t segment_bytes = round_up(segments * sizeof(uint32_t));
        scratch_bytes = 2 * node_bytes + block_bytes + 2 * segment_bytes + scan_bytes;
        CUDA_TRY_OR_DONE(cudaMallocAsync(&forest_block, scratch_bytes, stream), "allocating the multilabel forest");
        char *at = static_cast<char *>(forest_block);
        parent = reinterpret_cast<uint32_t *>(at);
        rank = reinterpret_cast<uint32_t *>(at + node_bytes);
        blocks = reinterpret_cast<BlockWord *>(at + 2 * node_bytes);
        segment_roots = reinterpret_cast<uint32_t *>(at + 2 * node_bytes + block_bytes);
        segment_base = reinterpret_cast<uint32_t *>(at + 2 * node_bytes + block_bytes + segment_bytes);
        cub_temp = at + 2 * node_bytes + block_bytes + 2 * segment_bytes;
    }
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[0], stream), "recording an event");
    switch (dtype) {
    case VL_U8: error = launch_forest<uint8_t>(classes, blocks, parent, s, xy, ci, stream); break;
    case VL_U32: error = launch_forest<uint32_t>(classes, blocks, parent, s, xy, ci, stream); break;
    default: error = launch_forest<uint16_t>(classes, blocks, parent, s, xy, ci, stream); break;
    }
    CUDA_TRY_OR_DONE(error, "multilabel union-find");
    compress_runs_kernel<<<grid, threads, 0, stream>>>(blocks, parent, s);
    compress_kernel<<<grid, threads, 0, stream>>>(blocks, parent, segment_roots, s);
    CUDA_TRY_OR_DONE(cudaGetLastError(), "flattening the multilabel forest");
    if (timed)
        CUDA_TRY_OR_DONE(cudaEventRecord(events[1], stream), "recording an event");
    CUDA_TRY_OR_DONE(cub::DeviceScan::ExclusiveSum(cub_temp, scan_bytes, segment_roots, segment_base,
                                                   (int64_t)segments, stream),
                     "scanning the roots");
    CUDA_TRY_OR_DONE(cudaMemcpyAsync(&last_base, segment_base + segments - 1, sizeof last_base,
                                     cudaMemcpyDeviceToHost, stream),
                     "reading the component count");
    CUDA_TRY_OR_DONE(cudaMemcpyAsync(&last_roots, segment_roots + segments - 1, sizeof last_roots,
                                     cudaMemcpyDeviceToHost, stream),
                     "reading the component count");
    CUDA_TRY_OR_DONE(cudaStreamSynchronize(stream), "multilabel union-find");
    count = last_base + last_roots;
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
    case VL_U8: error = launch_rank<uint8_t>(classes, blocks, parent, segment_base, rank, component_class, s, xy, stream); break;
    case VL_U32: error = launch_rank<uint32_t>(classes, blocks, parent, segment_base, rank, component_class, s, xy, stream); break;
    default: error = launch_rank<uint16_t>(classes, blocks, parent, segment_base, rank, component_class, s, xy, stream); break;
    }
    CUDA_TRY_OR_DONE(error, "ranking the roots");
    if (xy)
        write_kernel<true><<<grid, threads, 0, stream>>>(blocks, parent, rank, labels, sizes, s);
    else
        write_kernel<false><<<grid, threads, 0, stream>>>(blocks, parent, rank, labels, sizes, s);
    CUDA_TRY_OR_DONE(cudaGetLastError(), "writing the labels");
    if (vl_label_order_by_size(order) && count > 0) {
        CUDA_TRY_OR_DONE(vlccl::order_by_size(sizes, count, (int64_t)nodes, order_temp, &new_label, stream),
                         "ordering by size");
        remap_kernel<<<linear_grid(nodes), 256, 0, stream>>>(labels, new_label, nodes);
        permute_classes_kernel<<<linear_grid(count), 256, 0, stream>>>(component_class, moved_class, new_label, count);
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
