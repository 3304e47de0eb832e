/* Union-find phase of the CUDA labeller for connectivity 4 and 6 on dense volumes: label 32x8x8-voxel
 * tiles in shared memory, then join the tiles across their faces with a lock-free union-find in global
 * memory (see ccl_common.cuh for the node grid and why roots end up at the minimum-key node). Sparse
 * volumes under 4 and 6, and every volume under 8, 18 and 26, go to node blocks (ccl_blocks.cu). */
#include "ccl_common.cuh"
#include "ccl_kernels.cuh"

namespace vlccl {
namespace {

/* Path halving through shared memory; the shortcut goes in with atomicMin so that it never undoes a
 * concurrent link (parents only decrease). */
__device__ __forceinline__ uint32_t find_shared(uint32_t *parent, uint32_t x)
{
    const volatile uint32_t *view = parent;
    for (;;) {
        const uint32_t p = view[x];
        if (p == x)
            return x;
        const uint32_t gp = view[p];
        if (gp == p)
            return p;
        atomicMin(parent + x, gp);
        x = gp;
    }
}

__device__ __forceinline__ void union_shared(uint32_t *parent, uint32_t a, uint32_t b)
{
    for (;;) {
        a = find_shared(parent, a);
        b = find_shared(parent, b);
        if (a == b)
            return;
        if (a > b) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        uint32_t old = atomicMin(parent + b, a);
        if (old == b)
            return;
        b = old;
    }
}

/* The backward offsets that can join two nodes under CONN (3 for 4 and 6), unrolled so that their
 * loads overlap. */
template <int CONN, typename Body>
__device__ __forceinline__ void for_each_offset(Body body)
{
#pragma unroll
    for (int o = 0; o < 13; o++)
        if (offset_possible<CONN>(backward_offset(o, 0), backward_offset(o, 1), backward_offset(o, 2)))
            body(o);
}

/* Pointer jumping in lock step (barriers between the reads and the writes): every parent becomes a
 * root in log2(depth) rounds, without the shared-memory atomics that concurrent path compression
 * would pile onto the few cells near a big component's root. Starts and ends with a barrier. */
template <typename T>
__device__ __forceinline__ void jump_to_roots(uint32_t *parent, int t)
{
    __syncthreads();
    for (;;) {
        uint32_t next[4];
        bool moved = false;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            int lb, l1, lz;
            T::of_thread(t, k, lb, l1, lz);
            const uint32_t p = parent[T::local(lb, l1, lz)];
            next[k] = parent[p];
            moved |= next[k] != p;
        }
        const int any = __syncthreads_or(moved);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            int lb, l1, lz;
            T::of_thread(t, k, lb, l1, lz);
            parent[T::local(lb, l1, lz)] = next[k];
        }
        __syncthreads();
        if (!any)
            return;
    }
}

template <bool XY>
__device__ __forceinline__ uint32_t node_bits_global(const uint8_t *__restrict__ mask, const Grid &g, uint32_t b,
                                                     uint32_t i1, uint32_t z)
{
    int64_t v = voxel_index<XY>(g, b, i1, z, 0);
    uint32_t bits = mask[v] != 0;
    if (2 * b + 1 < g.n0)
        bits |= (uint32_t)(mask[v + (XY ? 1 : g.nx)] != 0) << 1;
    return bits;
}

/* Tile-local components: every node first points at its smallest connected backward neighbour (a
 * forest, no atomics), which is flattened; then the connected pairs are united where their roots still
 * differ. With 3 offsets per node the atomics stay few. Ends with parent = root. */
template <int CONN, typename T>
__device__ __forceinline__ void unite_by_union_find(uint32_t *parent, const uint8_t *bits, const uint32_t *connection,
                                                    int t)
{
#pragma unroll 1
    for (int pass = 0; pass < 2; pass++) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            int lb, l1, lz;
            T::of_thread(t, k, lb, l1, lz);
            const int l = T::local(lb, l1, lz);
            const uint32_t fa = bits[l];
            uint32_t smallest = l;
            if (fa)
                for_each_offset<CONN>([&](int o) {
                    const int nb = lb + backward_offset(o, 0), n1 = l1 + backward_offset(o, 1),
                              nz = lz + backward_offset(o, 2);
                    if (nb < 0 || nb >= T::TB || n1 < 0 || n1 >= T::T1 || nz < 0)
                        return;
                    const int m = T::local(nb, n1, nz);
                    if (!(connection[o] >> (fa * 4 + bits[m]) & 1u))
                        return;
                    if (pass == 0)
                        smallest = min(smallest, (uint32_t)m);
                    else
                        union_shared(parent, l, m);
                });
            if (pass == 0)
                parent[l] = smallest;
        }
        jump_to_roots<T>(parent, t);
    }
}

template <int CONN, bool XY>
__global__ void __launch_bounds__(kTileThreads) tile_local_kernel(const uint8_t *__restrict__ mask,
                                                                  uint32_t *__restrict__ labels,
                                                                  uint32_t *__restrict__ segment_roots, Grid g)
{
    using T = Tile<XY>;
    __shared__ uint8_t voxels[kTileZ][kTileY][kTileX];
    __shared__ uint32_t parent[kTileNodes];
    __shared__ uint8_t bits[kTileNodes];
    __shared__ uint32_t line_roots[T::TZ * T::T1];
    __shared__ uint32_t connection[13];
    const int t = threadIdx.x;
    if (t < 13)
        connection[t] = connection_mask<CONN>(t);
    const int64_t x0 = (int64_t)blockIdx.x * kTileX, y0 = (int64_t)blockIdx.y * kTileY,
                  z0v = (int64_t)blockIdx.z * kTileZ;

    for (int i = t; i < kTileX * kTileY * kTileZ; i += kTileThreads) {
        int lx = i % kTileX, ly = (i / kTileX) % kTileY, lz = i / (kTileX * kTileY);
        int64_t x = x0 + lx, y = y0 + ly, z = z0v + lz;
        uint8_t v = 0;
        if (x < g.nx && y < g.ny && z < g.nz)
            v = mask[z * g.sxy + y * g.nx + x] != 0;
        voxels[lz][ly][lx] = v;
    }
    for (int i = t; i < T::TZ * T::T1; i += kTileThreads)
        line_roots[i] = 0;
    __syncthreads();

#pragma unroll
    for (int k = 0; k < 4; k++) {
        int lb, l1, lz;
        T::of_thread(t, k, lb, l1, lz);
        int l = T::local(lb, l1, lz);
        uint32_t f = XY ? voxels[lz][l1][2 * lb] | voxels[lz][l1][2 * lb + 1] << 1
                        : voxels[lz][2 * lb][l1] | voxels[lz][2 * lb + 1][l1] << 1;
        bits[l] = (uint8_t)f;
        parent[l] = l;
    }
    __syncthreads();

    unite_by_union_find<CONN, T>(parent, bits, connection, t);

    uint32_t b0, i10, z0;
    T::origin(b0, i10, z0);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        int lb, l1, lz;
        T::of_thread(t, k, lb, l1, lz);
        uint32_t b = b0 + lb, i1 = i10 + l1, z = z0 + lz;
        if (b >= g.h0 || i1 >= g.n1 || z >= (uint32_t)g.nz)
            continue;
        int l = T::local(lb, l1, lz);
        int64_t s0 = voxel_index<XY>(g, b, i1, z, 0);
        uint32_t value = kEmpty;
        if (bits[l]) {
            const uint32_t r = parent[l];
            if (r == (uint32_t)l)
                atomicAdd(&line_roots[lz * T::T1 + l1], 1u);
            uint32_t rb = r % T::TB, r1 = (r / T::TB) % T::T1, rz = r / (T::TB * T::T1);
            value = node_number(g, b0 + rb, i10 + r1, z0 + rz);
        }
        labels[s0] = value;
        /* XY: fill the pair so that whole sectors are written. */
        if (XY && 2 * b + 1 < g.n0)
            labels[s0 + 1] = value;
    }
    __syncthreads();

    for (int i = t; i < T::TZ * T::T1; i += kTileThreads)
        if (line_roots[i]) {
            uint32_t z = z0 + i / T::T1, i1 = i10 + i % T::T1;
            atomicAdd(&segment_roots[segment_of(g, b0, i1, z)], line_roots[i]);
        }
}

/* Joins each tile to its neighbours: every node with a backward neighbour outside the tile (on any
 * face: an offset like (db, d1, dz) = (+1, 0, -1) leaves through the forward b face) unions the two
 * tile-local roots. A shared-memory set drops repeated root pairs, so a giant component costs one
 * global union per pair of touching local pieces instead of one per touching voxel pair. */
constexpr int kPairSlots = 2048;

__device__ __forceinline__ bool first_time(unsigned long long *pairs, uint32_t a, uint32_t b)
{
    const unsigned long long key = (unsigned long long)a << 32 | b;
    uint32_t slot = (a * 0x9E3779B1u ^ b * 0x85EBCA77u) % kPairSlots;
    for (int probe = 0; probe < 8; probe++) {
        const unsigned long long held = atomicCAS(pairs + slot, ~0ull, key);
        if (held == ~0ull)
            return true;
        if (held == key)
            return false;
        slot = (slot + 1) % kPairSlots;
    }
    return true;
}

template <int CONN, bool XY>
__global__ void __launch_bounds__(kTileThreads) tile_faces_kernel(const uint8_t *__restrict__ mask,
                                                                  uint32_t *__restrict__ labels,
                                                                  uint32_t *__restrict__ segment_roots, Grid g)
{
    using T = Tile<XY>;
    __shared__ unsigned long long pairs[kPairSlots];
    __shared__ uint32_t connection[13];
    for (int i = threadIdx.x; i < kPairSlots; i += kTileThreads)
        pairs[i] = ~0ull;
    if (threadIdx.x < 13)
        connection[threadIdx.x] = connection_mask<CONN>(threadIdx.x);
    __syncthreads();
    uint32_t b0, i10, z0;
    T::origin(b0, i10, z0);
#pragma unroll 1
    for (int k = 0; k < 4; k++) {
        int lb, l1, lz;
        T::of_thread((int)threadIdx.x, k, lb, l1, lz);
        const bool z_face = lz == 0 && CONN == 6;
        if (!z_face && l1 != 0 && l1 != T::T1 - 1 && lb != 0 && lb != T::TB - 1)
            continue;
        const uint32_t b = b0 + lb, i1 = i10 + l1, z = z0 + lz;
        if (b >= g.h0 || i1 >= g.n1 || z >= (uint32_t)g.nz)
            continue;
        const uint32_t fa = node_bits_global<XY>(mask, g, b, i1, z);
        if (!fa)
            continue;
        uint32_t root_a = kEmpty, last_b = kEmpty;
        for_each_offset<CONN>([&](int o) {
            const int db = backward_offset(o, 0), d1 = backward_offset(o, 1), dz = backward_offset(o, 2);
            if (lb + db >= 0 && lb + db < T::TB && l1 + d1 >= 0 && l1 + d1 < T::T1 && lz + dz >= 0)
                return;
            const int64_t bb = (int64_t)b + db, ii = (int64_t)i1 + d1, zz = (int64_t)z + dz;
            if (bb < 0 || bb >= g.h0 || ii < 0 || ii >= g.n1 || zz < 0)
                return;
            const uint32_t fb = node_bits_global<XY>(mask, g, (uint32_t)bb, (uint32_t)ii, (uint32_t)zz);
            if (!(connection[o] >> (fa * 4 + fb) & 1u))
                return;
            if (root_a == kEmpty)
                root_a = __ldcg(labels + voxel_index<XY>(g, b, i1, z, 0));
            const uint32_t root_b = __ldcg(labels + voxel_index<XY>(g, (uint32_t)bb, (uint32_t)ii, (uint32_t)zz, 0));
            if (root_a == root_b || root_b == last_b || !first_time(pairs, root_a, root_b))
                return;
            last_b = root_b;
            const uint32_t gone = union_global<XY>(labels, g, root_a, root_b);
            if (gone != kEmpty) {
                const NodeAt c = node_coords<XY>(g, gone);
                atomicSub(&segment_roots[segment_of(g, c.b, c.i1, c.z)], 1u);
            }
        });
    }
}

template <int CONN, bool XY>
cudaError_t launch_union_find(const uint8_t *mask, uint32_t *labels, uint32_t *segment_roots, const Grid &g,
                              cudaStream_t stream)
{
    dim3 grid((unsigned)((g.nx + kTileX - 1) / kTileX), (unsigned)((g.ny + kTileY - 1) / kTileY),
              (unsigned)((g.nz + kTileZ - 1) / kTileZ));
    tile_local_kernel<CONN, XY><<<grid, kTileThreads, 0, stream>>>(mask, labels, segment_roots, g);
    tile_faces_kernel<CONN, XY><<<grid, kTileThreads, 0, stream>>>(mask, labels, segment_roots, g);
    return cudaGetLastError();
}

} // namespace

cudaError_t union_find_nodes(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels,
                             uint32_t *segment_roots, BlockList &list, const Grid &g, cudaStream_t stream)
{
    list.listed = kEmpty;
    bool used = false;
    const cudaError_t error = union_find_blocks(connectivity, xy, mask, labels, segment_roots, list, g, stream, used);
    if (error != cudaSuccess || used)
        return error;
    switch (connectivity * 2 + (xy ? 1 : 0)) {
    case 4 * 2: return launch_union_find<4, false>(mask, labels, segment_roots, g, stream);
    case 4 * 2 + 1: return launch_union_find<4, true>(mask, labels, segment_roots, g, stream);
    case 6 * 2: return launch_union_find<6, false>(mask, labels, segment_roots, g, stream);
    case 6 * 2 + 1: return launch_union_find<6, true>(mask, labels, segment_roots, g, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace vlccl
