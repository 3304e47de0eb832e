/* Convex hull, convex volume, solidity, Feret diameters and the oriented bounding box of every component
 * (the VL_STATS_EXTRA_HULL group), on the CPU for either backend.
 *
 * The hull of a set of voxels is the hull of their corners, and in each row (y, z) only the component's
 * leftmost and rightmost voxel can contribute corners. So one pass over the labels lists, per component,
 * one span [x0, x1] per row it touches (two counting passes: sizes, then contents, each thread writing its
 * slab's spans behind the previous slabs'); each component then builds the 8 corners of each span and takes
 * their exact hull in integer index coordinates (stats_hull.c). Volumes come from the exact hull; distances
 * are measured after mapping the hull's vertices through the geometry (spacing, direction), because an
 * affine map keeps hulls, planes and extreme points but not distances. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "core/parallel.h"
#include "stats/stats_extras.h"
#include "stats/stats_hull.h"
#include "voxlabel/error.h"

typedef struct span {
    int32_t x0, x1, y, z;
} span;

typedef struct span_job {
    const vl_volume *labels;
    uint32_t count;
    int64_t z_begin, z_end;
    int64_t *last_row;   /* per label: the last row (y + ny z) that opened a span, -1 before */
    uint64_t *cursor;    /* per label: spans counted (sizing pass) or the next slot (filling pass) */
    span *spans;         /* NULL in the sizing pass */
} span_job;

static uint32_t label_at(const vl_volume *v, int64_t i)
{
    switch (v->dtype) {
    case VL_U8: return ((const uint8_t *)v->data)[i];
    case VL_U16: return ((const uint16_t *)v->data)[i];
    default: return ((const uint32_t *)v->data)[i];
    }
}

static void *collect_spans(void *argument)
{
    span_job *job = argument;
    const vl_volume *labels = job->labels;
    const int64_t nx = labels->nx, ny = labels->ny;
    for (int64_t z = job->z_begin; z < job->z_end; z++)
        for (int64_t y = 0; y < ny; y++) {
            const int64_t row = y + ny * z, start = nx * row;
            for (int64_t x = 0; x < nx; x++) {
                const uint32_t a = label_at(labels, start + x);
                if (!a)
                    continue;
                const int64_t x0 = x;
                while (x + 1 < nx && label_at(labels, start + x + 1) == a)
                    x++;
                const uint32_t k = a - 1;
                if (job->last_row[k] != row) {
                    job->last_row[k] = row;
                    if (job->spans)
                        job->spans[job->cursor[k]] = (span){(int32_t)x0, (int32_t)x, (int32_t)y, (int32_t)z};
                    job->cursor[k]++;
                } else if (job->spans)
                    job->spans[job->cursor[k] - 1].x1 = (int32_t)x; /* runs come left to right */
            }
        }
    return NULL;
}

/* Hulls with at most this many vertices also try every pair of edges for the minimum width (docs/csv.md). */
enum { edge_pair_limit = 16 };

typedef struct hull_job {
    const span *spans;
    const uint64_t *offset;
    const vl_geometry *geometry;
    vl_component_stats *stats;
    uint32_t count;
    atomic_uint *next;
    int64_t (**vertices)[3]; /* when collecting: each component's hull vertices, and how many */
    uint64_t *vertex_count;
    int failed;
} hull_job;

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Index corner c (integers) to physical coordinates relative to the index origin's corner: A c. */
static void to_physical(const vl_geometry *g, const int64_t c[3], double out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = g->direction[3 * r] * g->spacing[0] * (double)c[0] + g->direction[3 * r + 1] * g->spacing[1] * (double)c[1] +
                 g->direction[3 * r + 2] * g->spacing[2] * (double)c[2];
}

/* LPS of a physical point q = A c: origin + A (c - 1/2). */
static void to_lps(const vl_geometry *g, const double q[3], double out[3])
{
    const int64_t ones[3] = {1, 1, 1};
    double half[3];
    to_physical(g, ones, half);
    for (int r = 0; r < 3; r++)
        out[r] = g->origin[r] + q[r] - 0.5 * half[r];
}

typedef struct hull_vertex {
    double p[3]; /* physical, relative to the corner of voxel 0 */
    double r;    /* distance from the vertices' mean */
} hull_vertex;

static int farther_first(const void *a, const void *b)
{
    const double x = ((const hull_vertex *)a)->r, y = ((const hull_vertex *)b)->r;
    return (x < y) - (x > y);
}

static void measure_hull(const vl_hull *hull, const int64_t (*corners)[3], const vl_geometry *g, hull_vertex *vertices,
                         vl_component_stats *out)
{
    const double voxel_volume = vl_geometry_voxel_volume(g);
    out->convex_hull_vertices = (double)hull->vertex_count;
    out->convex_volume_voxels = (double)hull->six_volume / 6.0;
    out->convex_volume_mm3 = out->convex_volume_voxels * voxel_volume;
    out->solidity = (double)out->voxels / out->convex_volume_voxels;
    const size_t h = hull->vertex_count;
    /* Vertices sorted by distance r from their mean, farthest first: |p - q| <= r_p + r_q then ends the
     * diameter search early, and the widest vertices come first in the width scans. */
    double mean[3] = {0, 0, 0};
    for (size_t i = 0; i < h; i++) {
        to_physical(g, corners[hull->vertices[i]], vertices[i].p);
        for (int r = 0; r < 3; r++)
            mean[r] += vertices[i].p[r] / (double)h;
    }
    for (size_t i = 0; i < h; i++) {
        const double d[3] = {vertices[i].p[0] - mean[0], vertices[i].p[1] - mean[1], vertices[i].p[2] - mean[2]};
        vertices[i].r = sqrt(dot3(d, d));
    }
    qsort(vertices, h, sizeof *vertices, farther_first);

    /* Feret max: the diameter of a point set is attained between two hull vertices. */
    double best = -1;
    size_t bi = 0, bj = 0;
    const double margin = 1 - 1e-12; /* the bound r_p + r_q carries rounding */
    for (size_t i = 0; i + 1 < h; i++) {
        const double reach = vertices[i].r + vertices[i + 1].r;
        if (reach * reach < best * margin)
            break;
        const double *p = vertices[i].p;
        for (size_t j = i + 1; j < h; j++) {
            const double bound = vertices[i].r + vertices[j].r;
            if (bound * bound < best * margin)
                break;
            const double *q = vertices[j].p;
            const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
            const double d = dx * dx + dy * dy + dz * dz;
            if (d > best)
                best = d, bi = i, bj = j;
        }
    }
    out->feret_max_mm = sqrt(best);
    to_lps(g, vertices[bi].p, out->feret_max_a_lps);
    to_lps(g, vertices[bj].p, out->feret_max_b_lps);

    /* Feret min: the smallest width of a polytope is attained across a face (a face and a vertex touch the
     * two support planes) or between two edges (the planes' normal is their cross product). Every direction's
     * width is at least the minimum, so the minimum over candidate directions is exact once the true one is a
     * candidate: face normals always, edge pairs for hulls of at most edge_pair_limit vertices. */
    double width = INFINITY, foot[3] = {0}, top[3] = {0};
    const size_t triangles = hull->triangle_count;
    const int edges = h <= edge_pair_limit;
    int32_t edge[3 * edge_pair_limit][2];
    size_t edge_count = 0;
    for (size_t t = 0; t < triangles && edges; t++)
        for (int i = 0; i < 3; i++) {
            const int32_t a = hull->triangles[3 * t + i], b = hull->triangles[3 * t + (i + 1) % 3];
            if (a < b && edge_count < sizeof edge / sizeof edge[0])
                edge[edge_count][0] = a, edge[edge_count][1] = b, edge_count++;
        }
    const size_t candidates = triangles + edge_count * (edge_count - (edge_count > 0)) / 2;
    size_t e1 = 0, e2 = 1;
    for (size_t candidate = 0; candidate < candidates; candidate++) {
        double a[3], u[3], v[3];
        if (candidate < triangles) {
            double b[3], c[3];
            to_physical(g, corners[hull->triangles[3 * candidate]], a);
            to_physical(g, corners[hull->triangles[3 * candidate + 1]], b);
            to_physical(g, corners[hull->triangles[3 * candidate + 2]], c);
            for (int r = 0; r < 3; r++)
                u[r] = b[r] - a[r], v[r] = c[r] - a[r];
        } else {
            double p[3], q[3], s[3];
            to_physical(g, corners[edge[e1][0]], a);
            to_physical(g, corners[edge[e1][1]], p);
            to_physical(g, corners[edge[e2][0]], q);
            to_physical(g, corners[edge[e2][1]], s);
            for (int r = 0; r < 3; r++)
                u[r] = p[r] - a[r], v[r] = s[r] - q[r];
            if (++e2 == edge_count)
                e1++, e2 = e1 + 1;
        }
        double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        const double length = sqrt(dot3(n, n));
        if (!(length > 0))
            continue;
        for (int r = 0; r < 3; r++)
            n[r] /= length;
        double lo = INFINITY, hi = -INFINITY;
        size_t high = 0;
        for (size_t i = 0; i < h && hi - lo < width; i++) { /* a width only grows: stop once it is no better */
            const double s = dot3(n, vertices[i].p);
            if (s < lo)
                lo = s;
            if (s > hi)
                hi = s, high = i;
        }
        if (hi - lo < width) {
            width = hi - lo;
            /* End points: the highest vertex and its foot on the lowest support plane. */
            const double *q = vertices[high].p;
            for (int r = 0; r < 3; r++) {
                top[r] = q[r];
                foot[r] = q[r] - (hi - lo) * n[r];
            }
        }
    }
    out->feret_min_mm = width;
    to_lps(g, top, out->feret_min_a_lps);
    to_lps(g, foot, out->feret_min_b_lps);

    /* Oriented box: the hull's extent along each principal axis (the columns of principal_axes). */
    double centre[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++) {
        const double axis[3] = {out->principal_axes[c], out->principal_axes[3 + c], out->principal_axes[6 + c]};
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < h; i++) {
            const double s = dot3(axis, vertices[i].p);
            lo = s < lo ? s : lo;
            hi = s > hi ? s : hi;
        }
        out->obb_size_mm[c] = hi - lo;
        for (int r = 0; r < 3; r++)
            centre[r] += axis[r] * 0.5 * (lo + hi);
    }
    to_lps(g, centre, out->obb_centre_lps);
}

static void *hull_components(void *argument)
{
    hull_job *job = argument;
    vl_hull hull;
    memset(&hull, 0, sizeof hull);
    int64_t (*corners)[3] = NULL;
    hull_vertex *physical = NULL;
    size_t capacity = 0;
    for (;;) {
        const uint32_t k = atomic_fetch_add(job->next, 1);
        if (k >= job->count)
            break;
        vl_component_stats *out = &job->stats[k];
        const uint64_t first = job->offset[k], n = job->offset[k + 1] - first;
        if (!n || !out->voxels)
            continue;
        if (8 * n > capacity) {
            const size_t wanted = 8 * n;
            int64_t (*c)[3] = realloc(corners, wanted * sizeof *corners);
            hull_vertex *p = c ? realloc(physical, wanted * sizeof *p) : NULL;
            if (c)
                corners = c;
            if (!p) {
                job->failed = 1;
                break;
            }
            physical = p;
            capacity = wanted;
        }
        size_t m = 0;
        for (uint64_t i = 0; i < n; i++) {
            const span *s = &job->spans[first + i];
            for (int corner = 0; corner < 8; corner++) {
                corners[m][0] = corner & 1 ? s->x1 + 1 : s->x0;
                corners[m][1] = s->y + ((corner >> 1) & 1);
                corners[m][2] = s->z + ((corner >> 2) & 1);
                m++;
            }
        }
        const int built = vl_hull_build(&hull, (const int64_t(*)[3])corners, m);
        if (built < 0) {
            job->failed = 1;
            break;
        }
        if (built == 0)
            measure_hull(&hull, (const int64_t(*)[3])corners, job->geometry, physical, out);
        if (built == 0 && job->vertices) {
            int64_t (*kept)[3] = malloc(sizeof *kept * hull.vertex_count);
            if (!kept) {
                job->failed = 1;
                break;
            }
            for (size_t i = 0; i < hull.vertex_count; i++)
                for (int a = 0; a < 3; a++)
                    kept[i][a] = corners[hull.vertices[i]][a];
            job->vertices[k] = kept;
            job->vertex_count[k] = hull.vertex_count;
        }
    }
    vl_hull_free(&hull);
    free(corners);
    free(physical);
    return NULL;
}

/* Moves the per-component vertex lists into one vl_convex_hulls. */
static vl_status gather_hulls(int64_t (**vertices)[3], const uint64_t *vertex_count, uint32_t count, vl_convex_hulls *hulls)
{
    uint64_t total = 0;
    for (uint32_t k = 0; k < count; k++)
        total += vertex_count[k];
    hulls->count = count;
    hulls->offset = malloc(sizeof *hulls->offset * ((size_t)count + 1));
    hulls->corner = malloc(sizeof *hulls->corner * (total ? total : 1));
    if (!hulls->offset || !hulls->corner) {
        vl_convex_hulls_free(hulls);
        return vl_fail(VL_ERR_MEMORY, "statistics: no memory for %llu hull vertices", (unsigned long long)total);
    }
    uint64_t at = 0;
    for (uint32_t k = 0; k < count; k++) {
        hulls->offset[k] = at;
        if (vertex_count[k])
            memcpy(hulls->corner + at, vertices[k], sizeof *hulls->corner * vertex_count[k]);
        at += vertex_count[k];
    }
    hulls->offset[count] = at;
    return VL_OK;
}

void vl_convex_hulls_free(vl_convex_hulls *hulls)
{
    if (!hulls)
        return;
    free(hulls->offset);
    free(hulls->corner);
    memset(hulls, 0, sizeof *hulls);
}

vl_status vl_stats_hulls(const vl_volume *labels, uint32_t count, int threads, vl_component_stats *stats,
                         vl_convex_hulls *hulls)
{
    const int64_t limit = (int64_t)1 << 19;
    if (labels->nx >= limit || labels->ny >= limit || labels->nz >= limit)
        return VL_OK; /* exact 64-bit hull predicates need coordinates below 2^19: the columns stay empty */
    if (threads > labels->nz)
        threads = (int)labels->nz;
    const size_t n = count;
    int64_t *last_row = vl_allocate_large(sizeof *last_row * n * (size_t)threads);
    uint64_t *cursor = vl_allocate_large(sizeof *cursor * n * (size_t)threads);
    uint64_t *offset = vl_allocate_large(sizeof *offset * (n + 1));
    span *spans = NULL;
    vl_status status = VL_OK;
    if (!last_row || !cursor || !offset)
        status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for the convex hulls of %u components", count);
    span_job jobs[VL_MAX_THREADS];
    if (status == VL_OK) {
        for (int t = 0; t < threads; t++) {
            jobs[t] = (span_job){labels, count, labels->nz * t / threads, labels->nz * (t + 1) / threads,
                                 last_row + n * (size_t)t, cursor + n * (size_t)t, NULL};
            memset(jobs[t].last_row, 0xff, sizeof *last_row * n);
            memset(jobs[t].cursor, 0, sizeof *cursor * n);
        }
        vl_run_parallel(collect_spans, jobs, sizeof jobs[0], threads);
        /* Component k's spans: thread 0's slab first, then thread 1's, ... (scan order overall). */
        uint64_t total = 0;
        for (size_t k = 0; k < n; k++) {
            offset[k] = total;
            for (int t = 0; t < threads; t++) {
                const uint64_t c = jobs[t].cursor[k];
                jobs[t].cursor[k] = total;
                total += c;
            }
        }
        offset[n] = total;
        spans = vl_allocate_large(sizeof *spans * (total ? total : 1));
        if (!spans)
            status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for %llu hull rows", (unsigned long long)total);
    }
    if (status == VL_OK) {
        for (int t = 0; t < threads; t++) {
            memset(jobs[t].last_row, 0xff, sizeof *last_row * n);
            jobs[t].spans = spans;
        }
        vl_run_parallel(collect_spans, jobs, sizeof jobs[0], threads);
        atomic_uint next = 0;
        int64_t (**vertices)[3] = hulls ? calloc(n ? n : 1, sizeof *vertices) : NULL;
        uint64_t *vertex_count = hulls ? calloc(n ? n : 1, sizeof *vertex_count) : NULL;
        if (hulls && (!vertices || !vertex_count))
            status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for the hull lists of %u components", count);
        hull_job work[VL_MAX_THREADS];
        for (int t = 0; t < threads; t++)
            work[t] = (hull_job){spans, offset, &labels->geometry, stats, count, &next, vertices, vertex_count, 0};
        if (status == VL_OK)
            vl_run_parallel(hull_components, work, sizeof work[0], threads);
        for (int t = 0; t < threads; t++)
            if (work[t].failed)
                status = vl_fail(VL_ERR_MEMORY, "statistics: no memory for a convex hull");
        if (status == VL_OK && hulls)
            status = gather_hulls(vertices, vertex_count, count, hulls);
        for (size_t k = 0; vertices && k < n; k++)
            free(vertices[k]);
        free(vertices);
        free(vertex_count);
    }
    free(last_row);
    free(cursor);
    free(offset);
    free(spans);
    return status;
}
