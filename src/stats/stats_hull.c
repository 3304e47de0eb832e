/* Quickhull in 3D with exact integer predicates.
 *
 * Start from a tetrahedron of extreme points; every other point goes to the outside list of one face it
 * lies strictly above. A face with a non-empty list takes its farthest point p, the faces that see p
 * (strictly) are found by a walk over face neighbours, and the horizon (edges between visible and hidden
 * faces) is joined to p by new faces; the visible faces' points are redistributed over the new faces
 * (points under every new face are inside and dropped). Faces only receive points when they are created,
 * so one forward sweep over the face array processes every face that needs it.
 * Points exactly on a face's plane count as inside: coplanar facets are kept as separate triangles, which
 * is harmless for volumes, widths and diameters. */
#include <stdlib.h>
#include <string.h>

#include "stats/stats_hull.h"

typedef struct vl_hull_face {
    int32_t v[3];      /* counter-clockwise seen from outside */
    int32_t nb[3];     /* neighbour across edge (v[i], v[i+1]) */
    int32_t outside;   /* head of the outside list (-1: empty) */
    int32_t seen;      /* walk stamp */
    int32_t alive;
} hull_face;

typedef struct vl_hull_edge {
    int32_t a, b;      /* as oriented in the visible face */
    int32_t hidden;    /* the face beyond the edge, which stays */
} hull_edge;

typedef struct vl_hull_normal {
    int64_t n[3];      /* (b - a) x (c - a) of a triangle, exact */
} hull_normal;

typedef struct vl_hull_directions {
    int64_t normal[2][3]; /* the first two distinct normal directions around a vertex */
    int seen;             /* how many distinct directions, counted up to 3 */
} hull_directions;

typedef const int64_t (*point_array)[3];

/* Two integer normals point the same way: parallel (zero cross product, in 128 bits) and not opposite. */
static int same_direction(const int64_t a[3], const int64_t b[3])
{
    const __int128 c0 = (__int128)a[1] * b[2] - (__int128)a[2] * b[1];
    const __int128 c1 = (__int128)a[2] * b[0] - (__int128)a[0] * b[2];
    const __int128 c2 = (__int128)a[0] * b[1] - (__int128)a[1] * b[0];
    const __int128 dot = (__int128)a[0] * b[0] + (__int128)a[1] * b[1] + (__int128)a[2] * b[2];
    return c0 == 0 && c1 == 0 && c2 == 0 && dot > 0;
}

static int64_t orient(point_array p, int32_t a, int32_t b, int32_t c, int32_t d)
{
    const int64_t ux = p[b][0] - p[a][0], uy = p[b][1] - p[a][1], uz = p[b][2] - p[a][2];
    const int64_t vx = p[c][0] - p[a][0], vy = p[c][1] - p[a][1], vz = p[c][2] - p[a][2];
    const int64_t wx = p[d][0] - p[a][0], wy = p[d][1] - p[a][1], wz = p[d][2] - p[a][2];
    return ux * (vy * wz - vz * wy) - uy * (vx * wz - vz * wx) + uz * (vx * wy - vy * wx);
}

static int grow(void **array, size_t *capacity, size_t needed, size_t element)
{
    if (needed <= *capacity)
        return 0;
    size_t wanted = *capacity ? *capacity : 64;
    while (wanted < needed)
        wanted *= 2;
    void *bigger = realloc(*array, wanted * element);
    if (!bigger)
        return -1;
    *array = bigger;
    *capacity = wanted;
    return 0;
}

static int32_t add_face(vl_hull *h, size_t *count, int32_t a, int32_t b, int32_t c)
{
    if (grow((void **)&h->faces, &h->face_capacity, *count + 1, sizeof *h->faces))
        return -1;
    hull_face *f = &h->faces[*count];
    f->v[0] = a, f->v[1] = b, f->v[2] = c;
    f->nb[0] = f->nb[1] = f->nb[2] = -1;
    f->outside = -1;
    f->seen = -1;
    f->alive = 1;
    return (int32_t)(*count)++;
}

/* Index of the edge (a, b) in face f, or -1. */
static int edge_of(const hull_face *f, int32_t a, int32_t b)
{
    for (int i = 0; i < 3; i++)
        if (f->v[i] == a && f->v[(i + 1) % 3] == b)
            return i;
    return -1;
}

/* The first tetrahedron: returns 1 when every point lies in one plane. */
static int start(vl_hull *h, point_array p, size_t n, size_t *face_count, int32_t corner[4])
{
    int32_t i0 = 0, i1 = -1, i2 = -1, i3 = -1;
    for (size_t i = 1; i < n; i++)
        if (p[i][0] < p[i0][0] || (p[i][0] == p[i0][0] && (p[i][1] < p[i0][1] || (p[i][1] == p[i0][1] && p[i][2] < p[i0][2]))))
            i0 = (int32_t)i;
    int64_t best = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t dx = p[i][0] - p[i0][0], dy = p[i][1] - p[i0][1], dz = p[i][2] - p[i0][2];
        const int64_t d = dx * dx + dy * dy + dz * dz;
        if (d > best)
            best = d, i1 = (int32_t)i;
    }
    if (i1 < 0)
        return 1;
    double best_area = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t ux = p[i1][0] - p[i0][0], uy = p[i1][1] - p[i0][1], uz = p[i1][2] - p[i0][2];
        const int64_t vx = p[i][0] - p[i0][0], vy = p[i][1] - p[i0][1], vz = p[i][2] - p[i0][2];
        const int64_t cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
        const double area = (double)cx * (double)cx + (double)cy * (double)cy + (double)cz * (double)cz;
        if ((cx || cy || cz) && area > best_area)
            best_area = area, i2 = (int32_t)i;
    }
    if (i2 < 0)
        return 1;
    int64_t best_volume = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t o = orient(p, i0, i1, i2, (int32_t)i);
        o = o < 0 ? -o : o;
        if (o > best_volume)
            best_volume = o, i3 = (int32_t)i;
    }
    if (i3 < 0)
        return 1;
    corner[0] = i0, corner[1] = i1, corner[2] = i2, corner[3] = i3;
    /* Each face leaves out one corner, which must lie below it. */
    for (int skip = 0; skip < 4; skip++) {
        int32_t t[3], k = 0;
        for (int j = 0; j < 4; j++)
            if (j != skip)
                t[k++] = corner[j];
        if (orient(p, t[0], t[1], t[2], corner[skip]) > 0) {
            int32_t swap = t[1];
            t[1] = t[2];
            t[2] = swap;
        }
        if (add_face(h, face_count, t[0], t[1], t[2]) < 0)
            return -1;
    }
    for (int f = 0; f < 4; f++)
        for (int i = 0; i < 3; i++) {
            hull_face *face = &h->faces[f];
            for (int g = 0; g < 4; g++)
                if (g != f && edge_of(&h->faces[g], face->v[(i + 1) % 3], face->v[i]) >= 0)
                    face->nb[i] = g;
        }
    return 0;
}

/* Puts point q on the outside list of the first face in faces[first..end) that it lies strictly above. */
static void assign(vl_hull *h, point_array p, int32_t q, size_t first, size_t end)
{
    for (size_t f = first; f < end; f++) {
        hull_face *face = &h->faces[f];
        if (face->alive && orient(p, face->v[0], face->v[1], face->v[2], q) > 0) {
            h->next[q] = face->outside;
            face->outside = q;
            return;
        }
    }
}

int vl_hull_build(vl_hull *h, const int64_t (*p)[3], size_t n)
{
    h->triangle_count = h->vertex_count = 0;
    h->six_volume = 0;
    if (n < 4)
        return 1;
    if (n > h->point_capacity) {
        /* next, slot and vertices are all indexed by point */
        int32_t *next = realloc(h->next, n * sizeof *next), *slot = next ? realloc(h->slot, n * sizeof *slot) : NULL;
        if (next)
            h->next = next;
        if (slot)
            h->slot = slot;
        int32_t *vertices = slot ? realloc(h->vertices, n * sizeof *vertices) : NULL;
        if (!vertices)
            return -1;
        h->vertices = vertices;
        h->point_capacity = n;
    }
    size_t face_count = 0;
    int32_t corner[4];
    int started = start(h, p, n, &face_count, corner);
    if (started)
        return started;
    for (size_t i = 0; i < n; i++)
        if ((int32_t)i != corner[0] && (int32_t)i != corner[1] && (int32_t)i != corner[2] && (int32_t)i != corner[3])
            assign(h, p, (int32_t)i, 0, 4);
    for (size_t i = 0; i < n; i++)
        h->slot[i] = -1;

    for (size_t f = 0; f < face_count; f++) {
        if (!h->faces[f].alive || h->faces[f].outside < 0)
            continue;
        /* The farthest point above f: orient is proportional to the distance from f's plane. */
        const hull_face *top = &h->faces[f];
        int32_t apex = -1;
        int64_t far = 0;
        for (int32_t q = top->outside; q >= 0; q = h->next[q]) {
            const int64_t o = orient(p, top->v[0], top->v[1], top->v[2], q);
            if (o > far)
                far = o, apex = q;
        }
        /* Walk the faces that see the apex; collect them and the horizon. */
        size_t visible = 0, horizon = 0;
        if (grow((void **)&h->stack, &h->stack_capacity, 1, sizeof *h->stack))
            return -1;
        h->stack[visible++] = (int32_t)f;
        h->faces[f].seen = (int32_t)f;
        for (size_t k = 0; k < visible; k++) {
            const int32_t g = h->stack[k];
            for (int e = 0; e < 3; e++) {
                const int32_t nb = h->faces[g].nb[e];
                hull_face *other = &h->faces[nb];
                if (other->seen == (int32_t)f)
                    continue;
                if (orient(p, other->v[0], other->v[1], other->v[2], apex) > 0) {
                    other->seen = (int32_t)f;
                    if (grow((void **)&h->stack, &h->stack_capacity, visible + 1, sizeof *h->stack))
                        return -1;
                    h->stack[visible++] = nb;
                } else {
                    if (grow((void **)&h->horizon, &h->horizon_capacity, horizon + 1, sizeof *h->horizon))
                        return -1;
                    h->horizon[horizon++] = (hull_edge){h->faces[g].v[e], h->faces[g].v[(e + 1) % 3], nb};
                }
            }
        }
        /* A hidden face seen from two visible faces would be a horizon edge listed twice: impossible, each
         * edge belongs to exactly one visible face. New faces (a, b, apex) keep the visible face's edge order. */
        const size_t first_new = face_count;
        for (size_t k = 0; k < horizon; k++) {
            const hull_edge *edge = &h->horizon[k];
            const int32_t made = add_face(h, &face_count, edge->a, edge->b, apex);
            if (made < 0)
                return -1;
            h->faces[made].nb[0] = edge->hidden;
            hull_face *hidden = &h->faces[edge->hidden];
            hidden->nb[edge_of(hidden, edge->b, edge->a)] = made;
            h->slot[edge->a] = made;
        }
        /* Across (b, apex) lies the new face whose edge starts at b; across (apex, a) the one that ends at a. */
        for (size_t k = first_new; k < face_count; k++) {
            hull_face *made = &h->faces[k];
            const int32_t across = h->slot[made->v[1]];
            made->nb[1] = across;
            h->faces[across].nb[2] = (int32_t)k;
        }
        for (size_t k = 0; k < horizon; k++)
            h->slot[h->horizon[k].a] = -1;
        for (size_t k = 0; k < visible; k++) {
            hull_face *gone = &h->faces[h->stack[k]];
            gone->alive = 0;
            int32_t q = gone->outside;
            gone->outside = -1;
            while (q >= 0) {
                const int32_t next = h->next[q];
                if (q != apex)
                    assign(h, p, q, first_new, face_count);
                q = next;
            }
        }
    }

    /* Collect the triangles, the extreme vertices and the exact volume. A triangle vertex can lie inside a flat
     * facet or an edge of the polytope (coplanar points are kept as triangle corners); it is a true vertex
     * when the triangles around it face at least three different directions. */
    size_t alive = 0;
    for (size_t f = 0; f < face_count; f++)
        alive += h->faces[f].alive != 0;
    if (grow((void **)&h->triangles, &h->triangle_capacity, 3 * alive, sizeof *h->triangles))
        return -1;
    const int32_t reference = corner[0];
    if (grow((void **)&h->normals, &h->normal_capacity, 3 * alive, sizeof *h->normals))
        return -1;
    size_t candidates = 0;
    for (size_t f = 0; f < face_count; f++) {
        const hull_face *face = &h->faces[f];
        if (!face->alive)
            continue;
        memcpy(&h->triangles[3 * h->triangle_count], face->v, sizeof face->v);
        const int64_t *a = p[face->v[0]], *b = p[face->v[1]], *c = p[face->v[2]];
        const int64_t u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        int64_t *n = h->normals[h->triangle_count++].n;
        n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
        h->six_volume += orient(p, reference, face->v[0], face->v[1], face->v[2]);
        for (int i = 0; i < 3; i++)
            if (h->slot[face->v[i]] < 0) {
                h->slot[face->v[i]] = (int32_t)candidates;
                h->vertices[candidates++] = face->v[i];
            }
    }
    /* Per candidate: up to two distinct normal directions seen so far, then "extreme". */
    if (grow((void **)&h->directions, &h->direction_capacity, candidates, sizeof *h->directions))
        return -1;
    for (size_t i = 0; i < candidates; i++)
        h->directions[i].seen = 0;
    for (size_t t = 0; t < h->triangle_count; t++)
        for (int i = 0; i < 3; i++) {
            hull_directions *d = &h->directions[h->slot[h->triangles[3 * t + i]]];
            const int64_t *n = h->normals[t].n;
            int fresh = d->seen < 3;
            for (int k = 0; k < d->seen && k < 2 && fresh; k++)
                fresh = !same_direction(d->normal[k], n);
            if (!fresh)
                continue;
            if (d->seen < 2)
                memcpy(d->normal[d->seen], n, sizeof d->normal[0]);
            d->seen++;
        }
    for (size_t i = 0; i < candidates; i++) {
        const int32_t vertex = h->vertices[i];
        h->slot[vertex] = -1;
        if (h->directions[i].seen >= 3)
            h->vertices[h->vertex_count++] = vertex;
    }
    return 0;
}

void vl_hull_free(vl_hull *h)
{
    free(h->normals);
    free(h->directions);
    free(h->triangles);
    free(h->vertices);
    free(h->faces);
    free(h->next);
    free(h->slot);
    free(h->stack);
    free(h->horizon);
    memset(h, 0, sizeof *h);
}
