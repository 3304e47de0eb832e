/* The CPU reference of vl_maxflow: Boykov-Kolmogorov (PAMI 2004) on an implicit grid graph.
 *
 * Two search trees, S from the source and T from the sink, grow through arcs with residual capacity until
 * they touch; the path through the touching arc is augmented, nodes cut off from their tree become orphans
 * and are re-attached to a node of the same tree that still reaches its terminal (preferring short
 * distances, with the timestamp heuristic) or freed. It stops when no active node can grow.
 *
 * Nodes live in a grid padded by one dead node on every side (in z too for 6/26-connectivity): dead nodes
 * have no capacity in or out, so no tree ever reaches them and neighbours need no bounds checks. Residual
 * capacities are 32-bit: each input capacity is at most VL_MAXFLOW_CAP_MAX, so the two arcs of a pair never
 * hold more than twice that. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "voxlabel/error.h"
#include "voxlabel/graphcut.h"

#define CAP_MAX 1073741823 /* 2^30 - 1: a residual pair sums to less than 2^31 */

enum { TREE_FREE = 0, TREE_SOURCE = 1, TREE_SINK = 2 };
enum { PARENT_ORPHAN = 0xFD, PARENT_TERMINAL = 0xFE, PARENT_NONE = 0xFF };
#define QUEUE_NONE (-1)

typedef struct bk_state {
    int directions;
    int64_t offset[26];   /* padded-index step of each direction */
    int32_t *residual;    /* [padded * directions] */
    int32_t *terminal;    /* > 0: residual from the source; < 0: residual to the sink */
    uint8_t *tree, *parent; /* parent: direction towards the parent, or PARENT_* */
    int32_t *timestamp, *distance;
    int32_t *next;        /* active FIFO: following node, itself at the tail, QUEUE_NONE when not queued */
    int32_t head, tail;
    int32_t *orphans;     /* orphan FIFO */
    int64_t orphan_head, orphan_count, orphan_capacity;
    int32_t time;
    int64_t flow, paths;
} bk_state;

static void activate(bk_state *s, int32_t p)
{
    if (s->next[p] != QUEUE_NONE)
        return;
    s->next[p] = p;
    if (s->tail >= 0)
        s->next[s->tail] = p;
    else
        s->head = p;
    s->tail = p;
}

/* The next queued node that is still in a tree, or -1. */
static int32_t next_active(bk_state *s)
{
    while (s->head >= 0) {
        int32_t p = s->head;
        s->head = s->next[p] == p ? -1 : s->next[p];
        if (s->head < 0)
            s->tail = -1;
        s->next[p] = QUEUE_NONE;
        if (s->parent[p] != PARENT_NONE)
            return p;
    }
    return -1;
}

static int add_orphan(bk_state *s, int32_t p)
{
    s->parent[p] = PARENT_ORPHAN;
    if (s->orphan_head + s->orphan_count == s->orphan_capacity) {
        if (s->orphan_head > 0) {
            memmove(s->orphans, s->orphans + s->orphan_head, (size_t)s->orphan_count * sizeof *s->orphans);
            s->orphan_head = 0;
        }
        if (s->orphan_count == s->orphan_capacity) {
            int64_t capacity = s->orphan_capacity ? 2 * s->orphan_capacity : 4096;
            int32_t *grown = realloc(s->orphans, (size_t)capacity * sizeof *grown);
            if (!grown)
                return 0;
            s->orphans = grown;
            s->orphan_capacity = capacity;
        }
    }
    s->orphans[s->orphan_head + s->orphan_count++] = p;
    return 1;
}

static inline int32_t neighbour(const bk_state *s, int32_t p, int d)
{
    return (int32_t)(p + s->offset[d]);
}

/* Grows the tree of p by one layer. Returns 1 with the touching arc (from, d) from S into T, else 0. */
static int grow(bk_state *s, int32_t p, int32_t *from, int *arc)
{
    const int D = s->directions;
    if (s->tree[p] == TREE_SOURCE) {
        for (int d = 0; d < D; d++) {
            if (s->residual[(int64_t)p * D + d] <= 0)
                continue;
            int32_t q = neighbour(s, p, d);
            if (s->tree[q] == TREE_FREE) {
                s->tree[q] = TREE_SOURCE;
                s->parent[q] = (uint8_t)(d ^ 1);
                s->timestamp[q] = s->timestamp[p];
                s->distance[q] = s->distance[p] + 1;
                activate(s, q);
            } else if (s->tree[q] == TREE_SINK) {
                *from = p, *arc = d;
                return 1;
            } else if (s->timestamp[q] <= s->timestamp[p] && s->distance[q] > s->distance[p]) {
                s->parent[q] = (uint8_t)(d ^ 1);
                s->timestamp[q] = s->timestamp[p];
                s->distance[q] = s->distance[p] + 1;
            }
        }
    } else {
        for (int d = 0; d < D; d++) {
            int32_t q = neighbour(s, p, d);
            if (s->residual[(int64_t)q * D + (d ^ 1)] <= 0)
                continue;
            if (s->tree[q] == TREE_FREE) {
                s->tree[q] = TREE_SINK;
                s->parent[q] = (uint8_t)(d ^ 1);
                s->timestamp[q] = s->timestamp[p];
                s->distance[q] = s->distance[p] + 1;
                activate(s, q);
            } else if (s->tree[q] == TREE_SOURCE) {
                *from = q, *arc = d ^ 1;
                return 1;
            } else if (s->timestamp[q] <= s->timestamp[p] && s->distance[q] > s->distance[p]) {
                s->parent[q] = (uint8_t)(d ^ 1);
                s->timestamp[q] = s->timestamp[p];
                s->distance[q] = s->distance[p] + 1;
            }
        }
    }
    return 0;
}

/* Pushes the bottleneck along source -> ... -> from -(arc)-> to -> ... -> sink; saturated tree arcs
 * make orphans. Returns 0 when the orphan list cannot grow. */
static int augment(bk_state *s, int32_t from, int arc)
{
    const int D = s->directions;
    int32_t to = neighbour(s, from, arc);
    int32_t bottleneck = s->residual[(int64_t)from * D + arc];
    for (int32_t i = from;;) {
        int d = s->parent[i];
        if (d == PARENT_TERMINAL) {
            bottleneck = s->terminal[i] < bottleneck ? s->terminal[i] : bottleneck;
            break;
        }
        int32_t j = neighbour(s, i, d);
        int32_t r = s->residual[(int64_t)j * D + (d ^ 1)];
        bottleneck = r < bottleneck ? r : bottleneck;
        i = j;
    }
    for (int32_t i = to;;) {
        if (s->parent[i] == PARENT_TERMINAL) {
            if (-s->terminal[i] < bottleneck)
                bottleneck = -s->terminal[i];
            break;
        }
        int d = s->parent[i];
        int32_t r = s->residual[(int64_t)i * D + d];
        bottleneck = r < bottleneck ? r : bottleneck;
        i = neighbour(s, i, d);
    }

    s->residual[(int64_t)from * D + arc] -= bottleneck;
    s->residual[(int64_t)to * D + (arc ^ 1)] += bottleneck;
    for (int32_t i = from;;) {
        int d = s->parent[i];
        if (d == PARENT_TERMINAL) {
            s->terminal[i] -= bottleneck;
            if (s->terminal[i] == 0 && !add_orphan(s, i))
                return 0;
            break;
        }
        int32_t j = neighbour(s, i, d);
        s->residual[(int64_t)j * D + (d ^ 1)] -= bottleneck;
        s->residual[(int64_t)i * D + d] += bottleneck;
        if (s->residual[(int64_t)j * D + (d ^ 1)] == 0 && !add_orphan(s, i))
            return 0;
        i = j;
    }
    for (int32_t i = to;;) {
        int d = s->parent[i];
        if (d == PARENT_TERMINAL) {
            s->terminal[i] += bottleneck;
            if (s->terminal[i] == 0 && !add_orphan(s, i))
                return 0;
            break;
        }
        int32_t j = neighbour(s, i, d);
        s->residual[(int64_t)i * D + d] -= bottleneck;
        s->residual[(int64_t)j * D + (d ^ 1)] += bottleneck;
        if (s->residual[(int64_t)i * D + d] == 0 && !add_orphan(s, i))
            return 0;
        i = j;
    }
    s->flow += bottleneck;
    s->paths++;
    return 1;
}

/* Distance from j to its terminal through parents, or INT_MAX when the chain ends in an orphan; nodes
 * whose distance is known in this round carry timestamp == time. Marks the chain on success. */
static int32_t origin_distance(bk_state *s, int32_t j)
{
    int32_t steps = 0;
    for (int32_t k = j;;) {
        if (s->timestamp[k] == s->time) {
            steps += s->distance[k];
            break;
        }
        int d = s->parent[k];
        steps++;
        if (d == PARENT_TERMINAL) {
            s->timestamp[k] = s->time;
            s->distance[k] = 1;
            break;
        }
        if (d == PARENT_ORPHAN)
            return INT_MAX;
        k = neighbour(s, k, d);
    }
    int32_t left = steps;
    for (int32_t k = j; s->timestamp[k] != s->time; k = neighbour(s, k, s->parent[k])) {
        s->timestamp[k] = s->time;
        s->distance[k] = left--;
    }
    return steps;
}

/* Re-attaches orphan i to its tree, or frees it (its children become orphans, its neighbours in the tree
 * that could grow into it become active). */
static int adopt(bk_state *s, int32_t i)
{
    const int D = s->directions;
    const uint8_t tree = s->tree[i];
    int best = -1;
    int32_t best_distance = INT_MAX;
    for (int d = 0; d < D; d++) {
        int32_t j = neighbour(s, i, d);
        if (s->tree[j] != tree)
            continue;
        int32_t r = tree == TREE_SOURCE ? s->residual[(int64_t)j * D + (d ^ 1)] : s->residual[(int64_t)i * D + d];
        if (r <= 0)
            continue;
        int32_t distance = origin_distance(s, j);
        if (distance < best_distance) {
            best_distance = distance;
            best = d;
        }
    }
    if (best >= 0) {
        s->parent[i] = (uint8_t)best;
        s->timestamp[i] = s->time;
        s->distance[i] = best_distance + 1;
        return 1;
    }
    for (int d = 0; d < D; d++) {
        int32_t j = neighbour(s, i, d);
        if (s->tree[j] != tree)
            continue;
        int32_t r = tree == TREE_SOURCE ? s->residual[(int64_t)j * D + (d ^ 1)] : s->residual[(int64_t)i * D + d];
        if (r > 0)
            activate(s, j);
        if (s->parent[j] == (uint8_t)(d ^ 1) && !add_orphan(s, j))
            return 0;
    }
    s->tree[i] = TREE_FREE;
    s->parent[i] = PARENT_NONE;
    return 1;
}

static void state_free(bk_state *s)
{
    free(s->residual);
    free(s->terminal);
    free(s->tree);
    free(s->parent);
    free(s->timestamp);
    free(s->distance);
    free(s->next);
    free(s->orphans);
}

vl_status vl_maxflow_cpu(const vl_grid_graph *graph, uint8_t *segment, vl_maxflow_result *result)
{
    memset(result, 0, sizeof *result);
    result->outcome.used = VL_DEVICE_CPU;
    const int D = vl_grid_directions(graph->connectivity);
    if (!D || graph->nx <= 0 || graph->ny <= 0 || graph->nz <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: invalid grid graph");
    const int planar = graph->connectivity == 4 || graph->connectivity == 8;
    const int64_t nx = graph->nx, ny = graph->ny, nz = graph->nz;
    const int64_t px = nx + 2, py = ny + 2, pz = planar ? nz : nz + 2, zpad = planar ? 0 : 1;
    if (px > INT32_MAX / py || px * py > INT32_MAX / pz)
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: %lldx%lldx%lld nodes exceed the CPU solver's 2^31 limit",
                       (long long)nx, (long long)ny, (long long)nz);
    const int64_t padded = px * py * pz;

    bk_state s;
    memset(&s, 0, sizeof s);
    s.directions = D;
    s.head = s.tail = -1;
    for (int d = 0; d < D; d++) {
        int o[3];
        vl_grid_direction_offset(graph->connectivity, d, o);
        s.offset[d] = o[0] + px * (o[1] + py * o[2]);
    }
    s.residual = calloc((size_t)padded * (size_t)D, sizeof *s.residual);
    s.terminal = calloc((size_t)padded, sizeof *s.terminal);
    s.tree = calloc((size_t)padded, 1);
    s.parent = malloc((size_t)padded);
    s.timestamp = calloc((size_t)padded, sizeof *s.timestamp);
    s.distance = calloc((size_t)padded, sizeof *s.distance);
    s.next = malloc((size_t)padded * sizeof *s.next);
    if (!s.residual || !s.terminal || !s.tree || !s.parent || !s.timestamp || !s.distance || !s.next) {
        state_free(&s);
        return vl_fail(VL_ERR_MEMORY, "max-flow: out of memory for %lld nodes", (long long)padded);
    }
    memset(s.parent, PARENT_NONE, (size_t)padded);
    for (int64_t i = 0; i < padded; i++)
        s.next[i] = QUEUE_NONE;

    int bad = 0;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t p = x + nx * (y + ny * z);
                int32_t q = (int32_t)((x + 1) + px * ((y + 1) + py * (z + zpad)));
                int32_t source = graph->source_cap[p], sink = graph->sink_cap[p];
                bad |= source < 0 || sink < 0 || source > CAP_MAX || sink > CAP_MAX;
                s.flow += source < sink ? source : sink;
                s.terminal[q] = source - sink;
                for (int d = 0; d < D; d++) {
                    int o[3];
                    vl_grid_direction_offset(graph->connectivity, d, o);
                    int64_t qx = x + o[0], qy = y + o[1], qz = z + o[2];
                    if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
                        continue;
                    int32_t c = graph->arc_cap[p * D + d];
                    bad |= c < 0 || c > CAP_MAX;
                    s.residual[(int64_t)q * D + d] = c;
                }
                if (s.terminal[q] != 0) {
                    s.tree[q] = s.terminal[q] > 0 ? TREE_SOURCE : TREE_SINK;
                    s.parent[q] = PARENT_TERMINAL;
                    s.distance[q] = 1;
                    activate(&s, q);
                }
            }
    if (bad) {
        state_free(&s);
        return vl_fail(VL_ERR_ARGUMENT, "max-flow: capacities must lie in 0..%d", CAP_MAX);
    }

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int32_t current = -1;
    for (;;) {
        int32_t p = current >= 0 && s.parent[current] != PARENT_NONE ? current : next_active(&s);
        if (p < 0)
            break;
        int32_t from;
        int arc;
        int found = grow(&s, p, &from, &arc);
        s.time++;
        current = -1;
        if (!found)
            continue;
        current = p;
        int ok = augment(&s, from, arc);
        while (ok && s.orphan_count > 0) {
            int32_t orphan = s.orphans[s.orphan_head++];
            s.orphan_count--;
            if (s.orphan_count == 0)
                s.orphan_head = 0;
            ok = adopt(&s, orphan);
        }
        if (!ok) {
            state_free(&s);
            return vl_fail(VL_ERR_MEMORY, "max-flow: out of memory for the orphan list");
        }
    }

    clock_gettime(CLOCK_MONOTONIC, &end);
    result->solve_seconds = (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec);
    if (segment)
        for (int64_t z = 0; z < nz; z++)
            for (int64_t y = 0; y < ny; y++)
                for (int64_t x = 0; x < nx; x++)
                    segment[x + nx * (y + ny * z)] =
                        s.tree[(x + 1) + px * ((y + 1) + py * (z + zpad))] == TREE_SOURCE;
    result->flow = s.flow;
    result->iterations = s.paths;
    state_free(&s);
    return VL_OK;
}
