/* The GPU half of vl_maxflow: push-relabel (Goldberg-Tarjan) with synchronous sweeps and periodic global
 * relabelling by a breadth-first search from the sink, on the same padded grid as the CPU reference (one
 * dead node around the grid, so neighbours need no bounds checks).
 *
 * Why push-relabel and not augmenting paths: its operations are local to a node and its arcs, so one thread
 * per node does a sweep, and grid graphs give every thread the same amount of work. The solver computes the
 * first phase only (a maximum preflow), which is enough: when no node with excess can reach the sink, the
 * flow into the sink is the maximum flow and the nodes that cannot reach the sink are the source side of a
 * minimum cut.
 *
 * Invariants between kernels: heights are valid (h(u) <= h(v) + 1 for every residual arc u -> v, h = 1 for
 * a node with residual to the sink); a node is active when it has excess and h < unreachable.
 * - push: an active node sends excess along admissible arcs (h(u) == h(v) + 1). Heights do not change during
 *   the kernel, so the opposite arc v -> u is never admissible at the same time: each arc pair has one
 *   writer. Excess is received with 64-bit atomics.
 * - relabel: an active node takes min(h(v) + 1) over its residual arcs. Neighbours may relabel at the same
 *   time; heights only grow, so whichever value is read keeps the labelling valid.
 * - global relabel: exact distances to the sink in the residual graph; unreachable nodes are parked at the
 *   `unreachable` height for good (their excess can never reach the sink). */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cuda_check.h"
#include "graphcut/maxflow_internal.h"
#include "voxlabel/error.h"

#define THREADS 256
#define BFS_BATCH 8

struct pr_grid {
    int64_t nodes;        /* padded node count */
    int directions;
    int64_t offset[26];   /* padded-index step of each direction */
    int32_t unreachable;  /* height of nodes cut off from the sink */
};

static int blocks_for(int64_t n)
{
    int64_t blocks = (n + THREADS - 1) / THREADS;
    return (int)(blocks < 1 ? 1 : blocks);
}

__global__ static void push_kernel(pr_grid g, int32_t *__restrict__ residual, int32_t *__restrict__ to_sink,
                                   long long *__restrict__ excess, const int32_t *__restrict__ height)
{
    int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (u >= g.nodes)
        return;
    long long e = excess[u];
    int32_t h = height[u];
    if (e <= 0 || h >= g.unreachable)
        return;
    long long sent = 0;
    if (h == 1 && to_sink[u] > 0) {
        long long delta = e < to_sink[u] ? e : to_sink[u];
        to_sink[u] -= (int32_t)delta;
        sent += delta;
    }
    for (int d = 0; d < g.directions && sent < e; d++) {
        int32_t r = residual[d * g.nodes + u];
        if (r <= 0)
            continue;
        int64_t v = u + g.offset[d];
        if (height[v] != h - 1)
            continue;
        long long delta = e - sent < r ? e - sent : r;
        residual[d * g.nodes + u] = r - (int32_t)delta;
        residual[(d ^ 1) * g.nodes + v] += (int32_t)delta;
        atomicAdd((unsigned long long *)&excess[v], (unsigned long long)delta);
        sent += delta;
    }
    if (sent)
        atomicAdd((unsigned long long *)&excess[u], (unsigned long long)(-sent));
}

__global__ static void relabel_kernel(pr_grid g, const int32_t *__restrict__ residual, const int32_t *__restrict__ to_sink,
                                      const long long *__restrict__ excess, int32_t *height)
{
    int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (u >= g.nodes)
        return;
    int32_t h = height[u];
    if (excess[u] <= 0 || h >= g.unreachable)
        return;
    int32_t lowest = to_sink[u] > 0 ? 1 : g.unreachable;
    for (int d = 0; d < g.directions; d++)
        if (residual[d * g.nodes + u] > 0) {
            int32_t candidate = height[u + g.offset[d]] + 1;
            lowest = candidate < lowest ? candidate : lowest;
        }
    height[u] = lowest < g.unreachable ? lowest : g.unreachable;
}

__global__ static void bfs_start_kernel(pr_grid g, const int32_t *__restrict__ to_sink, int32_t *__restrict__ height)
{
    int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (u < g.nodes)
        height[u] = to_sink[u] > 0 ? 1 : g.unreachable;
}

/* Nodes not yet reached that have a residual arc into level `level` join level + 1. */
__global__ static void bfs_level_kernel(pr_grid g, const int32_t *__restrict__ residual, int32_t *height, int32_t level,
                                        int *changed)
{
    int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (u >= g.nodes || height[u] != g.unreachable)
        return;
    for (int d = 0; d < g.directions; d++)
        if (residual[d * g.nodes + u] > 0 && height[u + g.offset[d]] == level) {
            height[u] = level + 1;
            *changed = 1;
            return;
        }
}

__global__ static void count_active_kernel(pr_grid g, const long long *__restrict__ excess,
                                           const int32_t *__restrict__ height, unsigned long long *active)
{
    int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int is_active = u < g.nodes && excess[u] > 0 && height[u] < g.unreachable;
    unsigned ballot = __ballot_sync(0xffffffffu, is_active);
    if ((threadIdx.x & 31) == 0 && ballot)
        atomicAdd(active, (unsigned long long)__popc(ballot));
}

struct pr_device {
    int32_t *residual, *to_sink, *height;
    long long *excess;
    int *changed;
    unsigned long long *active;
};

static void device_free(pr_device *m)
{
    cudaFree(m->residual);
    cudaFree(m->to_sink);
    cudaFree(m->height);
    cudaFree(m->excess);
    cudaFree(m->changed);
    cudaFree(m->active);
}

/* Exact distances to the sink; *levels receives the number of levels searched (about one launch each). */
static vl_status global_relabel(const pr_grid &g, pr_device *m, int64_t *levels)
{
    int blocks = blocks_for(g.nodes);
    bfs_start_kernel<<<blocks, THREADS>>>(g, m->to_sink, m->height);
    *levels = 0;
    for (int32_t level = 1; level < g.unreachable; level += BFS_BATCH) {
        VL_CUDA_TRY(cudaMemsetAsync(m->changed, 0, sizeof(int)), "max-flow: breadth-first search");
        for (int32_t l = level; l < level + BFS_BATCH && l < g.unreachable; l++)
            bfs_level_kernel<<<blocks, THREADS>>>(g, m->residual, m->height, l, m->changed);
        int changed = 0;
        VL_CUDA_TRY(cudaMemcpy(&changed, m->changed, sizeof changed, cudaMemcpyDeviceToHost),
                    "max-flow: breadth-first search");
        *levels += BFS_BATCH;
        if (!changed)
            break;
    }
    return VL_OK;
}

static vl_status count_active(const pr_grid &g, pr_device *m, unsigned long long *active)
{
    VL_CUDA_TRY(cudaMemsetAsync(m->active, 0, sizeof *m->active), "max-flow: counting active nodes");
    count_active_kernel<<<blocks_for(g.nodes), THREADS>>>(g, m->excess, m->height, m->active);
    VL_CUDA_TRY(cudaMemcpy(active, m->active, sizeof *active, cudaMemcpyDeviceToHost), "max-flow: counting active nodes");
    return VL_OK;
}

/* Alternates global relabels with rounds of push/relabel sweeps. A round has at least `interval` sweeps and at
 * least as many as the last search had levels: a search costs about one launch per level and a sweep two, so the
 * searches never take more than about a third of the launches, however deep the residual graph gets in the
 * tail (few active nodes, long paths). */
static vl_status solve(const pr_grid &g, pr_device *m, int64_t interval, int64_t *sweeps)
{
    int blocks = blocks_for(g.nodes);
    for (;;) {
        int64_t levels = 0;
        vl_status status = global_relabel(g, m, &levels);
        unsigned long long active = 0;
        if (status == VL_OK)
            status = count_active(g, m, &active);
        if (status != VL_OK)
            return status;
        if (active == 0)
            return VL_OK;
        const int64_t round = levels > interval ? levels : interval;
        for (int64_t i = 0; i < round; i++) {
            push_kernel<<<blocks, THREADS>>>(g, m->residual, m->to_sink, m->excess, m->height);
            relabel_kernel<<<blocks, THREADS>>>(g, m->residual, m->to_sink, m->excess, m->height);
        }
        *sweeps += round;
        VL_CUDA_TRY(cudaGetLastError(), "max-flow: push-relabel sweep");
    }
}

extern "C" vl_status vl_maxflow_gpu(const vl_grid_graph *graph, uint8_t *segment, int64_t relabel_interval,
                                    vl_maxflow_result *result)
{
    memset(result, 0, sizeof *result);
    const int D = vl_grid_directions(graph->connectivity);
    if (!D || graph->nx <= 0 || graph->ny <= 0 || graph->nz <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: invalid grid graph");
    const int planar = graph->connectivity == 4 || graph->connectivity == 8;
    const int64_t nx = graph->nx, ny = graph->ny, nz = graph->nz;
    const int64_t px = nx + 2, py = ny + 2, pz = planar ? nz : nz + 2, zpad = planar ? 0 : 1;
    if (px > INT32_MAX / py || px * py > (INT32_MAX - 1) / pz)
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: %lldx%lldx%lld nodes exceed the GPU solver's 2^31 limit",
                       (long long)nx, (long long)ny, (long long)nz);
    pr_grid g;
    memset(&g, 0, sizeof g);
    g.nodes = px * py * pz;
    g.directions = D;
    g.unreachable = (int32_t)(g.nodes + 1);
    int offsets[26][3];
    for (int d = 0; d < D; d++) {
        vl_grid_direction_offset(graph->connectivity, d, offsets[d]);
        g.offset[d] = offsets[d][0] + px * (offsets[d][1] + py * offsets[d][2]);
    }

    /* Host image of the padded residual graph: arcs direction-major (coalesced per direction). */
    const size_t P = (size_t)g.nodes;
    int32_t *residual = (int32_t *)calloc(P * (size_t)D, sizeof(int32_t));
    int32_t *to_sink = (int32_t *)calloc(P, sizeof(int32_t));
    long long *excess = (long long *)calloc(P, sizeof(long long));
    int32_t *height = (int32_t *)malloc(P * sizeof(int32_t));
    if (!residual || !to_sink || !excess || !height) {
        free(residual), free(to_sink), free(excess), free(height);
        return vl_fail(VL_ERR_MEMORY, "max-flow: out of host memory for %lld nodes", (long long)g.nodes);
    }
    int64_t base_flow = 0;
    int bad = 0;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t p = x + nx * (y + ny * z);
                int64_t q = (x + 1) + px * ((y + 1) + py * (z + zpad));
                int32_t source = graph->source_cap[p], sink = graph->sink_cap[p];
                bad |= source < 0 || sink < 0;
                base_flow += source < sink ? source : sink;
                excess[q] = source > sink ? source - sink : 0;
                to_sink[q] = sink > source ? sink - source : 0;
                for (int d = 0; d < D; d++) {
                    int64_t qx = x + offsets[d][0], qy = y + offsets[d][1], qz = z + offsets[d][2];
                    if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
                        continue;
                    int32_t c = graph->arc_cap[p * D + d];
                    bad |= c < 0 || c > 1073741823;
                    residual[(size_t)d * P + (size_t)q] = c;
                }
            }
    if (bad) {
        free(residual), free(to_sink), free(excess), free(height);
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: capacities must lie in 0..1073741823");
    }
    int64_t initial_to_sink = 0;
    for (size_t i = 0; i < P; i++)
        initial_to_sink += to_sink[i];

    pr_device m;
    memset(&m, 0, sizeof m);
    cudaError_t error = cudaMalloc(&m.residual, P * (size_t)D * sizeof(int32_t));
    if (error == cudaSuccess)
        error = cudaMalloc(&m.to_sink, P * sizeof(int32_t));
    if (error == cudaSuccess)
        error = cudaMalloc(&m.height, P * sizeof(int32_t));
    if (error == cudaSuccess)
        error = cudaMalloc(&m.excess, P * sizeof(long long));
    if (error == cudaSuccess)
        error = cudaMalloc(&m.changed, sizeof(int));
    if (error == cudaSuccess)
        error = cudaMalloc(&m.active, sizeof(unsigned long long));
    if (error == cudaSuccess)
        error = cudaMemcpy(m.residual, residual, P * (size_t)D * sizeof(int32_t), cudaMemcpyHostToDevice);
    if (error == cudaSuccess)
        error = cudaMemcpy(m.to_sink, to_sink, P * sizeof(int32_t), cudaMemcpyHostToDevice);
    if (error == cudaSuccess)
        error = cudaMemcpy(m.excess, excess, P * sizeof(long long), cudaMemcpyHostToDevice);
    vl_status status = error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "max-flow: uploading the graph");
    int64_t sweeps = 0;
    cudaEvent_t start = NULL, stop = NULL;
    if (status == VL_OK && (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess))
        status = vl_fail(VL_ERR_DEVICE, "max-flow: cannot create CUDA events");
    if (status == VL_OK) {
        cudaEventRecord(start);
        status = solve(g, &m, relabel_interval > 0 ? relabel_interval : VL_MAXFLOW_RELABEL_INTERVAL, &sweeps);
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
        error = cudaMemcpy(to_sink, m.to_sink, P * sizeof(int32_t), cudaMemcpyDeviceToHost);
        if (error == cudaSuccess)
            error = cudaMemcpy(height, m.height, P * sizeof(int32_t), cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            status = vl_cuda_failure(error, "max-flow: downloading the cut");
    }
    if (status == VL_OK) {
        int64_t final_to_sink = 0;
        for (size_t i = 0; i < P; i++)
            final_to_sink += to_sink[i];
        result->flow = base_flow + initial_to_sink - final_to_sink;
        result->iterations = sweeps;
        result->outcome.used = VL_DEVICE_GPU;
        if (segment)
            for (int64_t z = 0; z < nz; z++)
                for (int64_t y = 0; y < ny; y++)
                    for (int64_t x = 0; x < nx; x++)
                        segment[x + nx * (y + ny * z)] =
                            height[(x + 1) + px * ((y + 1) + py * (z + zpad))] >= g.unreachable;
    }
    device_free(&m);
    free(residual), free(to_sink), free(excess), free(height);
    return status;
}
