/* Post filters on a labelling: minimum size and the K largest, keeping the labelling's order. */
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
    uint32_t next = 0;
    for (uint32_t label = 1; label <= count; label++)
        if (new_label[label]) {
            new_label[label] = ++next;
            result->sizes[next - 1] = result->sizes[label - 1];
        }
    result->count = next;

    const int threads = vl_cpu_thread_count(0);
    const int64_t n = vl_volume_voxels(labels);
    remap_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (remap_job){(uint32_t *)labels->data, new_label, n * t / threads, n * (t + 1) / threads};
    vl_run_parallel(remap_range, jobs, sizeof jobs[0], threads);
    free(new_label);
    free(ranked);
    return VL_OK;
}
