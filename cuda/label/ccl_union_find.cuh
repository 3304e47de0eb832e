/* Union-find in global memory on the blocks' parent cells in the labels buffer (ccl_block_grid.cuh):
 * the forest of the block union-find (ccl_blocks.cu) and its flattening (ccl_relabel.cu). */
#ifndef VL_CCL_UNION_FIND_CUH
#define VL_CCL_UNION_FIND_CUH

#include "ccl_block_grid.cuh"

namespace vlccl {

/* Parents only ever decrease, so a stale read is still a valid ancestor and the loops below converge. */
template <int CONN, bool XY>
__device__ __forceinline__ uint32_t find_root_global(uint32_t *labels, const Grid &g, uint32_t n)
{
    /* Path halving: point n at its grandparent on the way up. The plain store may race with an
     * atomicMin on the same cell, but both values are ancestors in n's component, and union_global
     * re-unites whatever a lost update leaves apart. */
    for (;;) {
        const int64_t slot = parent_cell_of<CONN, XY>(g, n);
        const uint32_t p = __ldcg(labels + slot);
        if (p == n)
            return n;
        const uint32_t gp = __ldcg(labels + parent_cell_of<CONN, XY>(g, p));
        if (gp == p)
            return p;
        __stcg(labels + slot, gp);
        n = gp;
    }
}

/* The root above n, by a walk that only reads (each read from L2: other threads may be linking). */
template <int CONN, bool XY>
__device__ __forceinline__ uint32_t find_root_readonly(const uint32_t *labels, const Grid &g, uint32_t n)
{
    for (uint32_t p = __ldcg(labels + parent_cell_of<CONN, XY>(g, n)); p != n; p = __ldcg(labels + parent_cell_of<CONN, XY>(g, n)))
        n = p;
    return n;
}

/* The roots above a and b (in place), by two walks that only read, a step of each per iteration so that
 * their loads overlap: a block's two pieces under 6 and 4, where a split block's second walk after the
 * first would hold its whole warp. */
template <int CONN, bool XY>
__device__ __forceinline__ void find_roots_readonly(const uint32_t *labels, const Grid &g, uint32_t &a, uint32_t &b)
{
    uint32_t pa = __ldcg(labels + parent_cell_of<CONN, XY>(g, a)), pb = __ldcg(labels + parent_cell_of<CONN, XY>(g, b));
    while (pa != a || pb != b) {
        a = pa;
        b = pb;
        pa = __ldcg(labels + parent_cell_of<CONN, XY>(g, a));
        pb = __ldcg(labels + parent_cell_of<CONN, XY>(g, b));
    }
}

/* Joins the trees of a and b, linking the larger root under the smaller. */
template <int CONN, bool XY>
__device__ void union_global(uint32_t *labels, const Grid &g, uint32_t a, uint32_t b)
{
    for (;;) {
        a = find_root_global<CONN, XY>(labels, g, a);
        b = find_root_global<CONN, XY>(labels, g, b);
        if (a == b)
            return;
        if (a > b) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        uint32_t old = atomicMin(labels + parent_cell_of<CONN, XY>(g, b), a);
        if (old == b)
            return;
        b = old;
    }
}

/* Joins the trees of a and b (a != b) by linking the larger under the smaller, without finding the roots
 * first: the caller passes roots it has just found, so one atomicMin usually settles it. A root is the
 * smallest node of its tree, so when the larger one is still a root the smaller cannot be in its tree
 * and the link makes no cycle; when it no longer is a root, the parent it had (old) and the smaller
 * one are joined the long way. */
template <int CONN, bool XY>
__device__ void union_roots(uint32_t *labels, const Grid &g, uint32_t a, uint32_t b)
{
    const uint32_t low = min(a, b), high = max(a, b);
    const uint32_t old = atomicMin(labels + parent_cell_of<CONN, XY>(g, high), low);
    if (old != high)
        union_global<CONN, XY>(labels, g, old, low);
}

} // namespace vlccl

#endif
