/* Shared pieces of the CUDA labeller: the node grid and its neighbourhoods.
 *
 * Nodes. Voxels are paired along the FASTEST axis of the order's key (y for `matlab`, x for
 * `matlab-xy`): node (b, i1, z) holds the voxels with a0 = 2b and 2b+1 (a0 = key-fastest axis, i1 =
 * the other in-plane axis). Two voxels adjacent along an axis are connected under every
 * connectivity, so a node's foreground is always one piece and union-find can work on nodes: half the
 * elements, and node numbers n = (z*n1 + i1)*h0 + b stay below 2^32 up to 2^33 voxels.
 *
 * Order. Node numbers sort exactly like the order's key of every voxel they hold (the pair lies on the
 * key's fastest axis), so "link toward the smaller node" leaves every component rooted at its
 * minimum-key node, and the rank of a root among all roots in node order is its label minus one.
 *
 * Storage. During union-find the labels buffer holds each block's parent and foreground bits
 * (ccl_block_grid.cuh). Beyond the mask and the labels, the labeller needs O(components), the
 * per-segment root counts, one bit per node and the block list (ccl_gpu.cu). */
#ifndef VL_CCL_COMMON_CUH
#define VL_CCL_COMMON_CUH

#include <cstdint>

namespace vlccl {

/* No node: an empty entry of the labeller's tables. */
constexpr uint32_t kEmpty = 0xFFFFFFFFu;
/* Nodes per counting segment of a line: roots are counted per segment, then ranked inside it. */
constexpr uint32_t kSegment = 128;

/* Unsigned 32-bit division by a run-time constant (Granlund & Montgomery 1994, fig. 4.1); a power of
 * two (m == 1, as for 512-voxel lines) takes one shift. */
struct FastDiv {
    uint32_t d, m, sh1, sh2, log2;
};

inline FastDiv make_fastdiv(uint32_t d)
{
    uint32_t l = 0;
    while (l < 32 && (1ull << l) < d)
        l++;
    FastDiv f;
    f.d = d;
    f.m = (uint32_t)((((1ull << l) - d) << 32) / d + 1);
    f.sh1 = l < 1 ? l : 1;
    f.sh2 = l > 1 ? l - 1 : 0;
    f.log2 = l;
    return f;
}

__device__ __forceinline__ uint32_t fdiv(uint32_t n, FastDiv f)
{
    if (f.m == 1)
        return n >> f.log2;
    uint32_t t = __umulhi(f.m, n);
    return (t + ((n - t) >> f.sh1)) >> f.sh2;
}

/* The volume seen as a node grid. XY = true: nodes pair voxels along x (orders matlab-xy
 * and size-raster); false: along y (orders matlab and size). */
struct Grid {
    int64_t nx, ny, nz;
    int64_t sxy;          /* nx*ny */
    uint32_t n0;          /* voxels along the paired axis */
    uint32_t h0;          /* nodes along it: ceil(n0/2) */
    uint32_t n1;          /* voxels along the other in-plane axis */
    uint32_t nseg;        /* counting segments per line: ceil(h0/kSegment) */
    uint32_t nodes;       /* h0*n1*nz < 2^32 */
    FastDiv div_h0, div_n1;
};

struct NodeAt {
    uint32_t b, i1, z;
};

template <bool XY>
__device__ __forceinline__ NodeAt node_coords(const Grid &g, uint32_t n)
{
    uint32_t line = fdiv(n, g.div_h0);
    uint32_t z = fdiv(line, g.div_n1);
    return NodeAt{n - line * g.h0, line - z * g.n1, z};
}

/* Voxel index of voxel t (0 or 1) of node (b, i1, z). */
template <bool XY>
__device__ __forceinline__ int64_t voxel_index(const Grid &g, uint32_t b, uint32_t i1, uint32_t z, uint32_t t)
{
    int64_t a0 = 2 * (int64_t)b + t;
    return XY ? (int64_t)z * g.sxy + (int64_t)i1 * g.nx + a0
              : (int64_t)z * g.sxy + a0 * g.nx + (int64_t)i1;
}

__device__ __forceinline__ uint32_t node_number(const Grid &g, uint32_t b, uint32_t i1, uint32_t z)
{
    return (z * g.n1 + i1) * g.h0 + b;
}

/* Counting segment of a node: segments are numbered in node order. */
__device__ __forceinline__ uint32_t segment_of(const Grid &g, uint32_t b, uint32_t i1, uint32_t z)
{
    return (z * g.n1 + i1) * g.nseg + b / kSegment;
}

/* Are two voxels (d0, d1, dz) apart neighbours under CONN (d0 along the paired axis)? */
template <int CONN>
__host__ __device__ constexpr bool voxel_step_ok(int d0, int d1, int dz)
{
    return (d0 < -1 || d0 > 1 || d1 < -1 || d1 > 1 || dz < -1 || dz > 1) ? false
         : ((CONN == 4 || CONN == 8) && dz != 0) ? false
         : ((d0 != 0) + (d1 != 0) + (dz != 0)) <= ((CONN == 6 || CONN == 4) ? 1 : (CONN == 18 || CONN == 8) ? 2 : 3);
}

/* The 13 backward node offsets (db, d1, dz): those that precede (0,0,0) in node order. */
__host__ __device__ constexpr int backward_offset(int k, int axis)
{
    /* k 0..8: dz = -1, (d1, db) over {-1,0,1}^2; k 9..11: dz = 0, d1 = -1; k 12: (-1, 0, 0). */
    return k < 9 ? (axis == 2 ? -1 : axis == 1 ? k / 3 - 1 : k % 3 - 1)
         : k < 12 ? (axis == 2 ? 0 : axis == 1 ? -1 : (k - 9) - 1)
         : (axis == 0 ? -1 : 0);
}

} // namespace vlccl

#endif
