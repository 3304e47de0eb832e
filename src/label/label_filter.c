/* Post filters on a labelling: minimum size and the K largest (of all, or of each class of a multilabel
 * result), keeping the labelling's order. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "label/size_rank.h"
#include "voxlabel/error.h"
#include "voxlabel/label.h"

typedef struct remap_job {
    uint32_t *labels;
    const uint32_t *new_label;
    int64_t begin, end;
} remap_job;

static void *remap_range(void *argument)
{
    const remap_job *job = (const remap_job *)argument;
    for (int64_t i = job->begin; i < job->end; i++)
        job->labels[i] = job->new_label[job->labels[i]];
    return NULL;
}

/* Renumbers the labels marked in keep[1..count] as 1..M in their order, moving their sizes (and classes)
 * down, and remaps the volume; keep becomes the old -> new table. */
static void renumber_survivors(vl_volume *labels, vl_label_result *result, uint32_t *keep)
{
    const uint32_t count = result->count;
    uint32_t next = 0;
    for (uint32_t label = 1; label <= count; label++)
        if (keep[label]) {
            keep[label] = ++next;
            result->sizes[next - 1] = result->sizes[label - 1];
            if (result->classes)
                result->classes[next - 1] = result->classes[label - 1];
        }
    result->count = next;

    const int threads = vl_cpu_thread_count(0);
    const int64_t n = vl_volume_voxels(labels);
    remap_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (remap_job){(uint32_t *)labels->data, keep, n * t / threads, n * (t + 1) / threads};
    vl_run_parallel(remap_range, jobs, sizeof jobs[0], threads);
}

vl_status vl_label_filter(vl_volume *labels, vl_label_result *result, uint64_t min_size, uint32_t largest)
{
    if (labels->dtype != VL_U32)
        return vl_fail(VL_ERR_ARGUMENT, "filter: labels must be u32, not %s", vl_dtype_name(labels->dtype));
    const uint32_t count = result->count;
    if ((min_size <= 1 && (largest == 0 || largest >= count)) || count == 0)
        return VL_OK;
    /* new_label[old] for old in 0..count; 0 stays 0 and dropped labels become 0. */
    uint32_t *new_label = calloc((size_t)count + 1, sizeof *new_label);
    vl_ranked_label *ranked = malloc(((size_t)count + 1) * sizeof *ranked);
    if (!new_label || !ranked) {
        free(new_label);
        free(ranked);
        return vl_fail(VL_ERR_MEMORY, "filter: cannot allocate tables for %u labels", count);
    }
    uint32_t kept = 0;
    for (uint32_t label = 1; label <= count; label++)
        if (result->sizes[label - 1] >= min_size)
            ranked[kept++] = (vl_ranked_label){result->sizes[label - 1], label};
    if (largest > 0 && largest < kept) {
        qsort(ranked, kept, sizeof *ranked, vl_compare_larger_first);
        kept = largest;
    }
    for (uint32_t i = 0; i < kept; i++)
        new_label[ranked[i].label] = 1; /* mark survivors, numbered below in their old order */
    renumber_survivors(labels, result, new_label);
    free(new_label);
    free(ranked);
    return VL_OK;
}

/* Orders survivors by class, then larger first, then lower label. */
typedef struct class_ranked {
    uint32_t cls;
    vl_ranked_label rank;
} class_ranked;

static int compare_class_then_size(const void *a, const void *b)
{
    const class_ranked *x = a, *y = b;
    if (x->cls != y->cls)
        return (x->cls > y->cls) - (x->cls < y->cls);
    return vl_compare_larger_first(&x->rank, &y->rank);
}

vl_status vl_label_filter_per_class(vl_volume *labels, vl_label_result *result, uint64_t min_size,
                                    uint32_t largest_per_class)
{
    if (labels->dtype != VL_U32)
        return vl_fail(VL_ERR_ARGUMENT, "filter: labels must be u32, not %s", vl_dtype_name(labels->dtype));
    if (!result->classes)
        return vl_fail(VL_ERR_ARGUMENT, "filter: the per-class filter needs a multilabel result");
    const uint32_t count = result->count;
    if ((min_size <= 1 && largest_per_class == 0) || count == 0)
        return VL_OK;
    uint32_t *keep = calloc((size_t)count + 1, sizeof *keep);
    class_ranked *ranked = malloc(((size_t)count + 1) * sizeof *ranked);
    if (!keep || !ranked) {
        free(keep);
        free(ranked);
        return vl_fail(VL_ERR_MEMORY, "filter: cannot allocate tables for %u labels", count);
    }
    uint32_t kept = 0;
    for (uint32_t label = 1; label <= count; label++)
        if (result->sizes[label - 1] >= min_size)
            ranked[kept++] = (class_ranked){result->classes[label - 1], {result->sizes[label - 1], label}};
    if (largest_per_class > 0)
        qsort(ranked, kept, sizeof *ranked, compare_class_then_size);
    for (uint32_t i = 0, in_class = 0; i < kept; i++) {
        in_class = i > 0 && ranked[i].cls == ranked[i - 1].cls ? in_class + 1 : 0;
        if (largest_per_class == 0 || in_class < largest_per_class)
            keep[ranked[i].rank.label] = 1;
    }
    renumber_survivors(labels, result, keep);
    free(keep);
    free(ranked);
    return VL_OK;
}
