/* Internal: the host union-find of the CPU labeller (src/label/ccl_cpu.c) and the z-slab merge
 * (src/label/label_slabs.c). Every union links the larger root under the smaller, so each set is rooted at its
 * smallest element and parent[i] <= i always holds: a forward pass can number the roots in order. */
#ifndef VL_UNION_FIND_H
#define VL_UNION_FIND_H

#include <stdint.h>

static inline uint32_t vl_find_root(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]]; /* path halving; keeps parent[i] <= i */
        i = parent[i];
    }
    return i;
}

static inline void vl_unite(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = vl_find_root(parent, a);
    b = vl_find_root(parent, b);
    if (a < b)
        parent[b] = a;
    else if (b < a)
        parent[a] = b;
}

#endif
