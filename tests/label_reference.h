/* Test oracle: a deliberately simple labeller, independent of src/ccl_*.c.
 * Flood fill from every voxel in MATLAB key order (or raster order), so the first voxel met of a component is its
 * minimum key and the component gets the next number; size order re-sorts afterwards. Slow, obviously correct. */
#ifndef VL_TEST_LABEL_REFERENCE_H
#define VL_TEST_LABEL_REFERENCE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/label.h"

static int reference_is_neighbour(int dx, int dy, int dz, int connectivity)
{
    int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
    if (nonzero == 0)
        return 0;
    switch (connectivity) {
    case 4: return dz == 0 && nonzero == 1;
    case 8: return dz == 0;
    case 6: return nonzero == 1;
    case 18: return nonzero <= 2;
    default: return 1;
    }
}

typedef struct reference_rank {
    uint64_t size, key;
    uint32_t label;
} reference_rank;

static int reference_compare_size(const void *a, const void *b)
{
    const reference_rank *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* labels: nx*ny*nz u32 output; returns N. */
static uint32_t reference_label(const uint8_t *mask, int64_t nx, int64_t ny, int64_t nz, int connectivity,
                                vl_label_order order, uint32_t *labels)
{
    const int64_t n = nx * ny * nz;
    memset(labels, 0, (size_t)n * sizeof *labels);
    int64_t *stack = malloc((size_t)n * sizeof *stack);
    uint64_t *first_key = malloc((size_t)(n + 1) * sizeof *first_key);
    uint64_t *sizes = calloc((size_t)n + 1, sizeof *sizes);
    uint32_t count = 0;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t outer = 0; outer < nx * ny; outer++) {
            /* MATLAB key order walks x-major inside a slice; raster (matlab-xy, size-raster) walks y-major. */
            const int raster = order == VL_ORDER_MATLAB_XY || order == VL_ORDER_SIZE_RASTER;
            int64_t x = raster ? outer % nx : outer / ny;
            int64_t y = raster ? outer / nx : outer % ny;
            int64_t start = x + nx * (y + ny * z);
            if (!mask[start] || labels[start])
                continue;
            count++;
            /* The walk meets each component first at its minimum key: the size orders' tie-break. */
            first_key[count] = (uint64_t)(raster ? z * nx * ny + y * nx + x : z * nx * ny + x * ny + y);
            int64_t top = 0;
            stack[top++] = start;
            labels[start] = count;
            while (top > 0) {
                int64_t v = stack[--top];
                sizes[count]++;
                int64_t vx = v % nx, vy = (v / nx) % ny, vz = v / (nx * ny);
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            if (!reference_is_neighbour(dx, dy, dz, connectivity))
                                continue;
                            int64_t ux = vx + dx, uy = vy + dy, uz = vz + dz;
                            if (ux < 0 || uy < 0 || uz < 0 || ux >= nx || uy >= ny || uz >= nz)
                                continue;
                            int64_t u = ux + nx * (uy + ny * uz);
                            if (mask[u] && !labels[u]) {
                                labels[u] = count;
                                stack[top++] = u;
                            }
                        }
            }
        }
    if ((order == VL_ORDER_SIZE || order == VL_ORDER_SIZE_RASTER) && count > 0) {
        reference_rank *ranks = malloc(count * sizeof *ranks);
        uint32_t *renumber = malloc(((size_t)count + 1) * sizeof *renumber);
        for (uint32_t l = 1; l <= count; l++)
            ranks[l - 1] = (reference_rank){sizes[l], first_key[l], l};
        qsort(ranks, count, sizeof *ranks, reference_compare_size);
        renumber[0] = 0;
        for (uint32_t r = 0; r < count; r++)
            renumber[ranks[r].label] = r + 1;
        for (int64_t i = 0; i < n; i++)
            labels[i] = renumber[labels[i]];
        free(ranks);
        free(renumber);
    }
    free(stack);
    free(first_key);
    free(sizes);
    return count;
}

#endif
