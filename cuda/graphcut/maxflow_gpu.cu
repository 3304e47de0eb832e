/* The GPU half of vl_maxflow: push-relabel (Goldberg-Tarjan) with synchronous sweeps and periodic global
 * relabelling, on the same padded grid as the CPU reference (one dead node around the grid, so neighbours need
 * no bounds checks).
 *
 * Why push-relabel and not augmenting paths: its operations are local to a node and its arcs, so one thread
 * per node does a sweep, and grid graphs give every thread the same amount of work. The solver computes the
 * first phase only (a maximum preflow), which is enough: when no node with excess can reach the sink, the
 * flow into the sink is the maximum flow and the nodes that cannot reach the sink are the source side of a
 * minimum cut.
 *
 * Invariants between phases: heights are valid (h(u) <= h(v) + 1 for every residual arc u -> v, h = 1 for
 * a node with residual to the sink); a node is active when it has excess and h < unreachable.
 * - sweep: every active node pushes, then relabels if excess is left, in one phase. Heights are double-
 *   buffered: the phase reads h and writes h'. Pushes follow admissible arcs of h (h(u) == h(v) + 1), so the
 *   opposite arc v -> u is never admissible at the same time: each arc pair has one writer, and a residual
 *   u -> v only falls by u's own pushes. Excess is received with 64-bit atomics.
 *   A node with excess left after its pushes has no admissible arc, and takes h'(u) = min(h(v) + 1) over its
 *   residual arcs (at least h(u) + 1). An arc u -> v that a neighbour's push opens during the phase has
 *   h(v) == h(u) + 1, so every neighbour at h(u) + 1 counts as a candidate too: h'(u) <= h(u) + 2 <= h'(v) + 1
 *   then holds for it. An arc residual at the scan stays seen (only u lowers it, before the scan), and heights
 *   only grow, so h' is valid.
 * - global relabel: exact distances to the sink in the residual graph; unreachable nodes are parked at the
 *   `unreachable` height for good (their excess can never reach the sink). The distances are found by
 *   relaxation, h(u) = min(h(u), h(v) + 1) over residual arcs u -> v, from h = 1 at nodes with residual to the
 *   sink and `unreachable` elsewhere. Heights only fall and stay upper bounds of the distances whatever order
 *   the updates come in, so a pass in which no height falls leaves exact distances. A pass gives each tile of
 *   the grid to one block, which relaxes it in shared memory until it is stable (its halo read once per pass),
 *   so a pass carries distances across a whole tile instead of one arc.
 *
 * Two drivers run these phases. Where the whole grid is co-resident (cooperative launch), one persistent kernel
 * runs the entire solve and separates the phases with grid-wide barriers: a small grid is bound by the cost
 * of a launch or a barrier, not by its work, and a solve takes several hundred phases. Otherwise each phase is one launch,
 * and the host checks for convergence every few passes. Both run the same phase code. */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cuda_check.h"
#include "graphcut/maxflow_internal.h"
#include "voxlabel/error.h"

namespace cg = cooperative_groups;

#define THREADS 512        /* every kernel's block; a relaxation tile has one node per thread */
#define MAX_HALO_CELLS 1000 /* a tile with its one-node halo: 34 x 18 (planar) or 10 x 10 x 10 */
#define RELAX_BATCH 4      /* launched passes between the host's convergence checks */
#define PERSISTENT_NODES_PER_THREAD 16 /* larger grids have enough work per launch to hide its cost */

struct pr_grid {
    int64_t nodes;        /* padded node count */
    int64_t px, py, pz;   /* padded sizes */
    int64_t nx, ny, nz, zpad;
    int directions;
    int64_t offset[26];   /* padded-index step of each direction */
    int halo_step[26];    /* the same step in a tile's shared-memory box */
    int tile[3], halo[3]; /* tile sizes (product THREADS) and its box with the halo (zero in z for a plane) */
    int64_t tiles_x, tiles_y, tiles;
    int32_t unreachable;  /* height of nodes cut off from the sink */
};

/* Device memory of one solve, carved from one allocation. */
struct pr_state {
    long long *excess;
    long long *flow;      /* finish: total flow into the sink */
    long long *counts;    /* persistent solve: [0] sweeps, [1] global relabels */
    int *vote;            /* [3] grid-wide votes (persistent) or [0] the launched passes' change flag */
    int *bad;             /* build: a capacity out of range */
    int32_t *residual, *to_sink;
    int32_t *height, *height_next; /* a global relabel writes height; sweeps alternate between the two */
    const int32_t *source_cap, *sink_cap, *arc_cap; /* the caller's graph, unpadded */
    uint8_t *segment;
};

static int blocks_for(int64_t n)
{
    int64_t blocks = (n + THREADS - 1) / THREADS;
    return (int)(blocks < 1 ? 1 : blocks > INT32_MAX ? INT32_MAX : blocks);
}

/* ---- phases, one node (or one tile) at a time. Mutable arrays are read and written at L2 (ld/st.cg):
 * the persistent kernel exchanges them between blocks within one launch. */

/* One sweep of node u: reads heights from `height`, writes u's new height to `next`. */
__device__ static void sweep_node(const pr_grid &g, const pr_state &s, const int32_t *height, int32_t *next, int64_t u)
{
    const int32_t h = __ldcg(&height[u]);
    int32_t new_height = h;
    const long long e = __ldcg(&s.excess[u]);
    if (e > 0 && h < g.unreachable) {
        long long sent = 0;
        if (h == 1) {
            const int32_t t = __ldcg(&s.to_sink[u]);
            if (t > 0) {
                const long long delta = e < t ? e : t;
                __stcg(&s.to_sink[u], t - (int32_t)delta);
                sent += delta;
            }
        }
        for (int d = 0; d < g.directions && sent < e; d++) {
            const int32_t r = __ldcg(&s.residual[d * g.nodes + u]);
            if (r <= 0)
                continue;
            const int64_t v = u + g.offset[d];
            if (__ldcg(&height[v]) != h - 1)
                continue;
            const long long delta = e - sent < r ? e - sent : r;
            __stcg(&s.residual[d * g.nodes + u], r - (int32_t)delta);
            int32_t *reverse = &s.residual[(d ^ 1) * g.nodes + v];
            __stcg(reverse, __ldcg(reverse) + (int32_t)delta);
            atomicAdd((unsigned long long *)&s.excess[v], (unsigned long long)delta);
            sent += delta;
        }
        if (sent)
            atomicAdd((unsigned long long *)&s.excess[u], (unsigned long long)(-sent));
        if (sent < e) {
            int32_t lowest = __ldcg(&s.to_sink[u]) > 0 ? 1 : g.unreachable;
            for (int d = 0; d < g.directions; d++) {
                const int32_t neighbour = __ldcg(&height[u + g.offset[d]]);
                if ((neighbour == h + 1 || __ldcg(&s.residual[d * g.nodes + u]) > 0) && neighbour < lowest - 1)
                    lowest = neighbour + 1;
            }
            new_height = lowest;
        }
    }
    __stcg(&next[u], new_height);
}

__device__ static int is_active(const pr_grid &g, const pr_state &s, int64_t u)
{
    return __ldcg(&s.excess[u]) > 0 && __ldcg(&s.height[u]) < g.unreachable;
}

__device__ static void start_height(const pr_grid &g, const pr_state &s, int64_t u)
{
    __stcg(&s.height[u], __ldcg(&s.to_sink[u]) > 0 ? 1 : g.unreachable);
}

/* Relaxes tile `tile` until it is stable, reading its halo once; the whole block calls it. buffer holds two
 * copies of the tile's box: each round reads one and writes the other (no shared-memory races), and a round
 * moves distances one arc. Returns, uniformly over the block, whether any height of the tile fell. */
__device__ static int relax_tile(const pr_grid &g, const pr_state &s, int64_t tile, int32_t *buffer)
{
    const int cells = g.halo[0] * g.halo[1] * g.halo[2];
    const int zhalo = g.halo[2] > g.tile[2];
    const int64_t x0 = tile % g.tiles_x * g.tile[0], y0 = tile / g.tiles_x % g.tiles_y * g.tile[1],
                  z0 = tile / (g.tiles_x * g.tiles_y) * g.tile[2];
    for (int i = threadIdx.x; i < cells; i += blockDim.x) {
        const int64_t x = x0 - 1 + i % g.halo[0], y = y0 - 1 + i / g.halo[0] % g.halo[1],
                      z = z0 - zhalo + i / (g.halo[0] * g.halo[1]);
        int32_t h = g.unreachable;
        if (x >= 0 && y >= 0 && z >= 0 && x < g.px && y < g.py && z < g.pz)
            h = __ldcg(&s.height[x + g.px * (y + g.py * z)]);
        buffer[i] = h;
        buffer[cells + i] = h;
    }
    const int lx = threadIdx.x % g.tile[0], ly = threadIdx.x / g.tile[0] % g.tile[1],
              lz = threadIdx.x / (g.tile[0] * g.tile[1]);
    const int64_t x = x0 + lx, y = y0 + ly, z = z0 + lz;
    const int inside = x < g.px && y < g.py && z < g.pz;
    const int64_t u = inside ? x + g.px * (y + g.py * z) : 0;
    const int cell = (lx + 1) + g.halo[0] * ((ly + 1) + g.halo[1] * (lz + zhalo));
    uint32_t arcs = 0;
    if (inside)
        for (int d = 0; d < g.directions; d++)
            if (__ldcg(&s.residual[d * g.nodes + u]) > 0)
                arcs |= 1u << d;
    __syncthreads();
    const int32_t start = buffer[cell];
    int32_t h = start;
    int current = 0, rounds = 0;
    for (;;) {
        int32_t best = h;
        for (uint32_t m = arcs; m; m &= m - 1) {
            const int32_t neighbour = buffer[current * cells + cell + g.halo_step[__ffs(m) - 1]];
            if (neighbour < best - 1)
                best = neighbour + 1;
        }
        const int fell = best < h;
        h = best;
        if (inside)
            buffer[(current ^ 1) * cells + cell] = h;
        current ^= 1;
        rounds++;
        if (!__syncthreads_or(fell))
            break;
    }
    if (inside && h < start)
        __stcg(&s.height[u], h);
    return rounds > 1;
}

/* ---- the persistent driver */

/* A grid-wide "any": every block reports a block-uniform value, all threads get the OR. Three slots rotate so
 * that a slot is cleared one barrier before it is written and read one barrier after. */
__device__ static int grid_any(cg::grid_group &grid, int *vote, int &epoch, int block_value)
{
    const int slot = epoch % 3;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicExch(&vote[(slot + 1) % 3], 0);
    if (threadIdx.x == 0 && block_value)
        atomicOr(&vote[slot], 1);
    grid.sync();
    epoch++;
    return __ldcg(&vote[slot]);
}

__global__ static void __launch_bounds__(THREADS, 2)
    solve_kernel(pr_grid g, pr_state s, int64_t interval)
{
    __shared__ int32_t buffer[2 * MAX_HALO_CELLS];
    cg::grid_group grid = cg::this_grid();
    const int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, stride = (int64_t)gridDim.x * blockDim.x;
    int epoch = 0;
    int64_t sweeps = 0, relabels = 0;
    for (;;) {
        relabels++;
        for (int64_t u = first; u < g.nodes; u += stride)
            start_height(g, s, u);
        grid.sync();
        int64_t passes = 0;
        for (;;) {
            int changed = 0;
            for (int64_t t = blockIdx.x; t < g.tiles; t += gridDim.x)
                changed |= relax_tile(g, s, t, buffer);
            passes++;
            if (!grid_any(grid, s.vote, epoch, changed))
                break;
        }
        int active = 0;
        for (int64_t u = first; u < g.nodes; u += stride)
            active |= is_active(g, s, u);
        if (!grid_any(grid, s.vote, epoch, __syncthreads_or(active)))
            break;
        const int64_t round = passes > interval ? passes : interval;
        int32_t *height = s.height, *next = s.height_next;
        for (int64_t i = 0; i < round; i++) {
            for (int64_t u = first; u < g.nodes; u += stride)
                sweep_node(g, s, height, next, u);
            grid.sync();
            int32_t *swap = height;
            height = next, next = swap;
        }
        sweeps += round;
    }
    if (first == 0)
        s.counts[0] = sweeps, s.counts[1] = relabels;
}

/* ---- the launched driver: one phase per launch */

__global__ static void sweep_kernel(pr_grid g, pr_state s, const int32_t *height, int32_t *next)
{
    for (int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; u < g.nodes; u += (int64_t)gridDim.x * blockDim.x)
        sweep_node(g, s, height, next, u);
}

__global__ static void start_height_kernel(pr_grid g, pr_state s)
{
    for (int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; u < g.nodes; u += (int64_t)gridDim.x * blockDim.x)
        start_height(g, s, u);
}

__global__ static void relax_kernel(pr_grid g, pr_state s)
{
    __shared__ int32_t buffer[2 * MAX_HALO_CELLS];
    int changed = 0;
    for (int64_t t = blockIdx.x; t < g.tiles; t += gridDim.x)
        changed |= relax_tile(g, s, t, buffer);
    if (changed && threadIdx.x == 0)
        atomicOr(&s.vote[0], 1);
}

__global__ static void active_kernel(pr_grid g, pr_state s)
{
    int active = 0;
    for (int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; u < g.nodes; u += (int64_t)gridDim.x * blockDim.x)
        active |= is_active(g, s, u);
    if (__syncthreads_or(active) && threadIdx.x == 0)
        atomicOr(&s.vote[0], 1);
}

/* What a solve did, for vl_maxflow_result. */
struct pr_counts {
    int64_t sweeps, relabels, launches;
};

static vl_status read_vote(const pr_state &s, int *value, const char *what)
{
    VL_CUDA_TRY(cudaGetLastError(), what);
    VL_CUDA_TRY(cudaMemcpy(value, s.vote, sizeof *value, cudaMemcpyDeviceToHost), what);
    return VL_OK;
}

/* Exact distances to the sink; *passes receives the passes run. */
static vl_status global_relabel(const pr_grid &g, const pr_state &s, int64_t *passes, pr_counts *counts)
{
    const char *what = "max-flow: global relabel";
    start_height_kernel<<<blocks_for(g.nodes), THREADS>>>(g, s);
    counts->launches++;
    counts->relabels++;
    const int tile_blocks = (int)(g.tiles < INT32_MAX ? g.tiles : INT32_MAX);
    *passes = 0;
    for (int changed = 1; changed;) {
        VL_CUDA_TRY(cudaMemsetAsync(s.vote, 0, sizeof(int)), what);
        for (int i = 0; i < RELAX_BATCH; i++)
            relax_kernel<<<tile_blocks, THREADS>>>(g, s);
        *passes += RELAX_BATCH;
        counts->launches += RELAX_BATCH;
        vl_status status = read_vote(s, &changed, what);
        if (status != VL_OK)
            return status;
    }
    return VL_OK;
}

/* Alternates global relabels with rounds of push/relabel sweeps. A round has at least `interval` sweeps and at
 * least as many as the last relabel had passes, so relabelling stays a minor share of the launches however
 * deep the residual graph gets in the tail (few active nodes, long paths). */
static vl_status solve_launched(const pr_grid &g, const pr_state &s, int64_t interval, pr_counts *counts)
{
    const int blocks = blocks_for(g.nodes);
    for (;;) {
        int64_t passes = 0;
        vl_status status = global_relabel(g, s, &passes, counts);
        if (status != VL_OK)
            return status;
        int active = 0;
        VL_CUDA_TRY(cudaMemsetAsync(s.vote, 0, sizeof(int)), "max-flow: counting active nodes");
        active_kernel<<<blocks, THREADS>>>(g, s);
        counts->launches++;
        status = read_vote(s, &active, "max-flow: counting active nodes");
        if (status != VL_OK)
            return status;
        if (!active)
            return VL_OK;
        const int64_t round = passes > interval ? passes : interval;
        int32_t *height = s.height, *next = s.height_next;
        for (int64_t i = 0; i < round; i++) {
            sweep_kernel<<<blocks, THREADS>>>(g, s, height, next);
            int32_t *swap = height;
            height = next, next = swap;
        }
        counts->sweeps += round;
        counts->launches += round;
        VL_CUDA_TRY(cudaGetLastError(), "max-flow: push-relabel sweep");
    }
}

/* Blocks of the persistent kernel when the whole grid can be co-resident and the grid is small enough for the
 * launch cost to matter; 0 otherwise. */
static int persistent_blocks(const pr_grid &g)
{
    int device = 0, cooperative = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, solve_kernel, THREADS, 0) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    const int64_t resident = (int64_t)sms * per_sm;
    if (!cooperative || resident < 1 || g.nodes > resident * THREADS * PERSISTENT_NODES_PER_THREAD)
        return 0;
    return (int)(g.tiles < resident ? g.tiles : resident);
}

/* Runs the persistent kernel; *ran = 0 (and no error) when the cooperative launch is refused, e.g. under a tool
 * that takes resources from the kernel. */
static vl_status solve_persistent(const pr_grid &g, const pr_state &s, int blocks, int64_t interval,
                                  pr_counts *counts, int *ran)
{
    *ran = 0;
    pr_grid grid = g;
    pr_state state = s;
    void *args[] = {&grid, &state, &interval};
    VL_CUDA_TRY(cudaMemsetAsync(s.vote, 0, 3 * sizeof(int)), "max-flow: persistent solve");
    cudaError_t error = cudaLaunchCooperativeKernel((const void *)solve_kernel, dim3(blocks), dim3(THREADS), args, 0, 0);
    if (error == cudaErrorCooperativeLaunchTooLarge || error == cudaErrorNotSupported ||
        error == cudaErrorLaunchOutOfResources) {
        cudaGetLastError();
        return VL_OK;
    }
    VL_CUDA_TRY(error, "max-flow: persistent solve");
    long long done[2] = {0, 0};
    VL_CUDA_TRY(cudaMemcpy(done, s.counts, sizeof done, cudaMemcpyDeviceToHost), "max-flow: persistent solve");
    counts->sweeps = done[0], counts->relabels = done[1], counts->launches = 1;
    *ran = 1;
    return VL_OK;
}

/* ---- graph upload and result */

/* Pads the caller's graph into the residual arrays (zeroed beforehand) and flags capacities out of range. */
__global__ static void build_kernel(pr_grid g, pr_state s, const int8_t *__restrict__ direction_xyz)
{
    const int64_t n = g.nx * g.ny * g.nz;
    int bad = 0;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = p % g.nx, y = p / g.nx % g.ny, z = p / (g.nx * g.ny);
        const int64_t q = (x + 1) + g.px * ((y + 1) + g.py * (z + g.zpad));
        const int32_t source = s.source_cap[p], sink = s.sink_cap[p];
        bad |= source < 0 || sink < 0;
        s.excess[q] = source > sink ? source - sink : 0;
        s.to_sink[q] = sink > source ? sink - source : 0;
        for (int d = 0; d < g.directions; d++) {
            const int64_t qx = x + direction_xyz[3 * d], qy = y + direction_xyz[3 * d + 1],
                          qz = z + direction_xyz[3 * d + 2];
            if (qx < 0 || qy < 0 || qz < 0 || qx >= g.nx || qy >= g.ny || qz >= g.nz)
                continue;
            const int32_t c = s.arc_cap[p * g.directions + d];
            bad |= c < 0 || c > 1073741823;
            s.residual[d * g.nodes + q] = c;
        }
    }
    if (__syncthreads_or(bad) && threadIdx.x == 0)
        atomicOr(s.bad, 1);
}

/* The source side of the cut (nodes cut off from the sink) and the flow: every unit of a node's sink capacity
 * that is no longer residual went to the sink. */
__global__ static void finish_kernel(pr_grid g, pr_state s, int write_segment)
{
    const int64_t n = g.nx * g.ny * g.nz;
    long long flow = 0;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = p % g.nx, y = p / g.nx % g.ny, z = p / (g.nx * g.ny);
        const int64_t q = (x + 1) + g.px * ((y + 1) + g.py * (z + g.zpad));
        flow += (long long)s.sink_cap[p] - s.to_sink[q];
        if (write_segment)
            s.segment[p] = s.height[q] >= g.unreachable;
    }
    for (int step = 16; step; step >>= 1)
        flow += __shfl_down_sync(0xffffffffu, flow, step);
    if ((threadIdx.x & 31) == 0 && flow)
        atomicAdd((unsigned long long *)s.flow, (unsigned long long)flow);
}

static size_t align_up(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

/* The grid, its tiling and the shared-memory steps. VL_ERR_ARGUMENT when it exceeds 32-bit heights. */
static vl_status describe_grid(const vl_grid_graph *graph, pr_grid *g, int8_t direction_xyz[26 * 3])
{
    memset(g, 0, sizeof *g);
    const int D = vl_grid_directions(graph->connectivity);
    if (!D || graph->nx <= 0 || graph->ny <= 0 || graph->nz <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: invalid grid graph");
    const int planar = graph->connectivity == 4 || graph->connectivity == 8;
    const int64_t nx = graph->nx, ny = graph->ny, nz = graph->nz;
    const int64_t px = nx + 2, py = ny + 2, pz = planar ? nz : nz + 2;
    if (px > INT32_MAX / py || px * py > (INT32_MAX - 1) / pz)
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: %lldx%lldx%lld nodes exceed the GPU solver's 2^31 limit",
                       (long long)nx, (long long)ny, (long long)nz);
    g->nx = nx, g->ny = ny, g->nz = nz, g->zpad = planar ? 0 : 1;
    g->px = px, g->py = py, g->pz = pz;
    g->nodes = px * py * pz;
    g->directions = D;
    g->unreachable = (int32_t)(g->nodes + 1);
    /* THREADS nodes per tile: 32 x 16 in a plane, 8 x 8 x 8 in a volume. */
    g->tile[0] = planar ? 32 : 8, g->tile[1] = planar ? 16 : 8, g->tile[2] = planar ? 1 : 8;
    g->halo[0] = g->tile[0] + 2, g->halo[1] = g->tile[1] + 2, g->halo[2] = planar ? 1 : g->tile[2] + 2;
    g->tiles_x = (px + g->tile[0] - 1) / g->tile[0];
    g->tiles_y = (py + g->tile[1] - 1) / g->tile[1];
    g->tiles = g->tiles_x * g->tiles_y * ((pz + g->tile[2] - 1) / g->tile[2]);
    for (int d = 0; d < D; d++) {
        int o[3];
        vl_grid_direction_offset(graph->connectivity, d, o);
        g->offset[d] = o[0] + px * (o[1] + py * o[2]);
        g->halo_step[d] = o[0] + g->halo[0] * (o[1] + g->halo[1] * o[2]);
        for (int a = 0; a < 3; a++)
            direction_xyz[3 * d + a] = (int8_t)o[a];
    }
    return VL_OK;
}

extern "C" vl_status vl_maxflow_gpu(const vl_grid_graph *graph, uint8_t *segment, int64_t relabel_interval,
                                    int allow_persistent, vl_maxflow_result *result)
{
    memset(result, 0, sizeof *result);
    pr_grid g;
    int8_t direction_xyz[26 * 3];
    vl_status status = describe_grid(graph, &g, direction_xyz);
    if (status != VL_OK)
        return status;
    const int64_t interval = relabel_interval > 0 ? relabel_interval : VL_MAXFLOW_RELABEL_INTERVAL;
    const size_t P = (size_t)g.nodes, n = (size_t)(g.nx * g.ny * g.nz), D = (size_t)g.directions;

    /* One allocation: 8-byte arrays first, then the padded graph (zeroed), then the caller's graph. */
    const size_t small = align_up(3 * sizeof(long long) + 4 * sizeof(int) + sizeof direction_xyz);
    const size_t excess_bytes = align_up(P * sizeof(long long)), padded_bytes = align_up(P * (D + 3) * sizeof(int32_t));
    const size_t input_bytes = align_up(n * (D + 2) * sizeof(int32_t));
    char *memory = NULL;
    VL_CUDA_TRY(cudaMalloc(&memory, small + excess_bytes + padded_bytes + input_bytes + n),
                "max-flow: device memory for the graph");
    pr_state s;
    s.flow = (long long *)memory;
    s.counts = s.flow + 1;
    s.vote = (int *)(s.flow + 3);
    s.bad = s.vote + 3;
    int8_t *directions = (int8_t *)(s.bad + 1);
    s.excess = (long long *)(memory + small);
    s.residual = (int32_t *)(memory + small + excess_bytes);
    s.to_sink = s.residual + P * D;
    s.height = s.to_sink + P;
    s.height_next = s.height + P;
    int32_t *input = (int32_t *)(memory + small + excess_bytes + padded_bytes);
    s.source_cap = input;
    s.sink_cap = input + n;
    s.arc_cap = input + 2 * n;
    s.segment = (uint8_t *)(memory + small + excess_bytes + padded_bytes + input_bytes);

    cudaError_t error = cudaMemsetAsync(memory, 0, small + excess_bytes + padded_bytes);
    if (error == cudaSuccess)
        error = cudaMemcpyAsync(directions, direction_xyz, sizeof direction_xyz, cudaMemcpyHostToDevice);
    if (error == cudaSuccess)
        error = cudaMemcpyAsync(input, graph->source_cap, n * sizeof(int32_t), cudaMemcpyHostToDevice);
    if (error == cudaSuccess)
        error = cudaMemcpyAsync(input + n, graph->sink_cap, n * sizeof(int32_t), cudaMemcpyHostToDevice);
    if (error == cudaSuccess)
        error = cudaMemcpyAsync(input + 2 * n, graph->arc_cap, n * D * sizeof(int32_t), cudaMemcpyHostToDevice);
    if (error == cudaSuccess) {
        build_kernel<<<blocks_for((int64_t)n), THREADS>>>(g, s, directions);
        error = cudaGetLastError();
    }
    int bad = 0;
    if (error == cudaSuccess)
        error = cudaMemcpy(&bad, s.bad, sizeof bad, cudaMemcpyDeviceToHost);
    status = error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "max-flow: uploading the graph");
    if (status == VL_OK && bad)
        status = vl_fail(VL_ERR_ARGUMENT, "max-flow: capacities must lie in 0..1073741823");

    pr_counts counts = {0, 0, 0};
    cudaEvent_t start = NULL, stop = NULL;
    if (status == VL_OK && (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess))
        status = vl_fail(VL_ERR_DEVICE, "max-flow: cannot create CUDA events");
    if (status == VL_OK) {
        cudaEventRecord(start);
        const int blocks = allow_persistent ? persistent_blocks(g) : 0;
        int ran = 0;
        if (blocks)
            status = solve_persistent(g, s, blocks, interval, &counts, &ran);
        if (status == VL_OK && !ran)
            status = solve_launched(g, s, interval, &counts);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float milliseconds = 0;
        cudaEventElapsedTime(&milliseconds, start, stop);
        result->solve_seconds = milliseconds / 1000.0;
    }
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    if (status == VL_OK) {
        finish_kernel<<<blocks_for((int64_t)n), THREADS>>>(g, s, segment != NULL);
        long long flow = 0;
        error = cudaGetLastError();
        if (error == cudaSuccess)
            error = cudaMemcpy(&flow, s.flow, sizeof flow, cudaMemcpyDeviceToHost);
        if (error == cudaSuccess && segment)
            error = cudaMemcpy(segment, s.segment, n, cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            status = vl_cuda_failure(error, "max-flow: downloading the cut");
        result->flow = flow;
    }
    if (status == VL_OK) {
        result->iterations = counts.sweeps;
        result->gpu_relabels = counts.relabels;
        result->gpu_launches = counts.launches;
        result->outcome.used = VL_DEVICE_GPU;
    }
    cudaFree(memory);
    return status;
}
