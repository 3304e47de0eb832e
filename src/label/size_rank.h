/* Internal: ranking labels by size, largest first and ties to the lower label (the rule of the `size` and
 * `size-raster` orders), for the CPU numbering (src/label/ccl_runs.c), the z-slab merge (src/label/label_slabs.c) and the --largest filter (src/label/label_filter.c). */
#ifndef VL_SIZE_RANK_H
#define VL_SIZE_RANK_H

#include <stdint.h>

typedef struct vl_ranked_label {
    uint64_t size;
    uint32_t label;
} vl_ranked_label;

/* qsort comparator: larger size first, then smaller label. */
static inline int vl_compare_larger_first(const void *a, const void *b)
{
    const vl_ranked_label *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->label > y->label) - (x->label < y->label);
}

#endif
