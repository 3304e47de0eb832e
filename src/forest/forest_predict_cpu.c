/* The CPU reference of prediction: tile by tile, the tile's channels (filters_cpu.c), then every voxel down
 * every tree (vl_forest_eval). Tiles are independent, so they are shared out to threads one at a time. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "filters/filters_internal.h"
#include "forest/forest_internal.h"
#include "forest/forest_predict.h"

typedef struct predict_job {
    vl_forest_prediction *p;
    int64_t edge[3], count[3];
    atomic_int_least64_t *next, *done;
    int index;
    vl_status status;
    char error[256];
} predict_job;

static void *predict_work(void *arg)
{
    predict_job *job = arg;
    const vl_forest *forest = job->p->forest;
    const vl_volume *image = job->p->image;
    const int F = forest->feature_count, C = forest->class_count;
    const int64_t total = job->count[0] * job->count[1] * job->count[2];
    const int64_t tile_voxels = job->edge[0] * job->edge[1] * job->edge[2];
    float *channels = malloc(sizeof(float) * (size_t)tile_voxels * (size_t)F + 1);
    float probabilities[VL_FOREST_MAX_CLASSES];
    if (!channels)
        job->status = vl_fail(VL_ERR_MEMORY, "forest: out of memory for a tile's %d features", F);
    while (job->status == VL_OK) {
        const int64_t t = atomic_fetch_add(job->next, 1);
        if (t >= total)
            break;
        vl_box box;
        int64_t rest = t;
        const int64_t n[3] = {image->nx, image->ny, image->nz};
        for (int a = 0; a < 3; a++) {
            const int64_t k = rest % job->count[a];
            rest /= job->count[a];
            box.lo[a] = k * job->edge[a];
            box.hi[a] = box.lo[a] + job->edge[a] < n[a] ? box.lo[a] + job->edge[a] : n[a];
        }
        if ((job->status = vl_filters_compute_box_cpu(image, &forest->bank, &box, channels)) != VL_OK)
            break;
        const int64_t bx = box.hi[0] - box.lo[0], by = box.hi[1] - box.lo[1];
        const int64_t voxels = bx * by * (box.hi[2] - box.lo[2]);
        for (int64_t i = 0; i < voxels; i++) {
            vl_forest_eval(forest->nodes, forest->tree_node_start, forest->leaf_values, forest->tree_leaf_start,
                           forest->tree_count, C, channels + i, voxels, probabilities);
            const int64_t x = box.lo[0] + i % bx, y = box.lo[1] + (i / bx) % by, z = box.lo[2] + i / (bx * by);
            const int64_t v = x + n[0] * (y + n[1] * z);
            if (job->p->probabilities)
                for (int c = 0; c < C; c++)
                    job->p->probabilities[c][v] = probabilities[c];
            if (job->p->class_map)
                job->p->class_map[v] = vl_forest_argmax(probabilities, C);
        }
        const int64_t done = atomic_fetch_add(job->done, 1) + 1;
        if (job->index == 0)
            vl_progress_report(&job->p->options->progress, "classifying", (double)done / (double)total);
    }
    if (job->status != VL_OK)
        snprintf(job->error, sizeof job->error, "%s", vl_last_error());
    free(channels);
    return NULL;
}

vl_status vl_forest_predict_cpu(vl_forest_prediction *p)
{
    atomic_int_least64_t next = 0, done = 0;
    predict_job jobs[VL_MAX_THREADS];
    const int count = vl_cpu_thread_count(p->options->threads);
    for (int t = 0; t < count; t++) {
        jobs[t] = (predict_job){.p = p, .next = &next, .done = &done, .index = t, .status = VL_OK};
        vl_forest_tiling(p->image, &p->forest->bank, p->options->tile, jobs[t].edge, jobs[t].count);
    }
    vl_run_parallel(predict_work, jobs, sizeof jobs[0], count);
    for (int t = 0; t < count; t++)
        if (jobs[t].status != VL_OK)
            return vl_fail(jobs[t].status, "%s", jobs[t].error);
    vl_progress_report(&p->options->progress, "classifying", 1.0);
    return VL_OK;
}

vl_status vl_forest_predict_samples(const vl_forest *forest, const float *features, int64_t samples,
                                    float *probabilities)
{
    for (int64_t i = 0; i < samples; i++)
        vl_forest_eval(forest->nodes, forest->tree_node_start, forest->leaf_values, forest->tree_leaf_start,
                       forest->tree_count, forest->class_count, features + i * forest->feature_count, 1,
                       probabilities + i * forest->class_count);
    return VL_OK;
}
