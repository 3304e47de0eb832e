/* The CPU trainer: one tree per job, grown breadth-first (a FIFO of nodes, so node numbers are BFS order, as the
 * GPU trainer numbers them level by level), the split chosen from per-bin class histograms. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "forest/forest_internal.h"

typedef struct pending {
    int64_t begin, end; /* range of the in-bag sample list */
    int depth;
} pending;

typedef struct tree_scratch {
    uint32_t *weights;
    int64_t *order;     /* in-bag samples, partitioned node by node */
    int64_t *swap;
    pending *queue;
    int64_t queue_capacity;
    uint32_t *histogram; /* VL_FOREST_MAX_BINS x classes */
    int *candidates, *shuffle;
} tree_scratch;

static int queue_push(tree_scratch *s, int64_t *tail, pending p)
{
    if (*tail == s->queue_capacity) {
        const int64_t capacity = s->queue_capacity ? 2 * s->queue_capacity : 1024;
        pending *grown = realloc(s->queue, sizeof(pending) * (size_t)capacity);
        if (!grown)
            return 0;
        s->queue = grown;
        s->queue_capacity = capacity;
    }
    s->queue[(*tail)++] = p;
    return 1;
}

static int grow_tree(const vl_forest_binned *data, const vl_forest_plan *plan, uint32_t tree_index, tree_scratch *s,
                     vl_tree *tree)
{
    const int F = data->features, C = data->classes;
    vl_forest_bootstrap(plan, tree_index, data->samples, s->weights);
    int64_t in_bag = 0;
    for (int64_t i = 0; i < data->samples; i++)
        if (s->weights[i])
            s->order[in_bag++] = i;
    int64_t head = 0, tail = 0;
    if (!queue_push(s, &tail, (pending){0, in_bag, 0}))
        return 0;
    double totals_d[VL_FOREST_MAX_CLASSES];
    unsigned long long totals[VL_FOREST_MAX_CLASSES];
    while (head < tail) {
        const uint32_t node_id = (uint32_t)head;
        const pending p = s->queue[head++];
        memset(totals, 0, sizeof totals[0] * (size_t)C);
        for (int64_t k = p.begin; k < p.end; k++) {
            const int64_t i = s->order[k];
            totals[data->classes_of[i]] += s->weights[i];
        }
        uint64_t N = 0;
        vl_u128 S = 0;
        int classes_present = 0;
        for (int c = 0; c < C; c++) {
            N += totals[c];
            S += (vl_u128)totals[c] * totals[c];
            classes_present += totals[c] > 0;
            totals_d[c] = (double)totals[c];
        }
        int best_feature = -1, best_bin = -1;
        vl_split_score best = {S, N}; /* a split must beat the parent's own score */
        if (p.depth < plan->max_depth && classes_present > 1 && N >= 2 * (uint64_t)plan->min_leaf) {
            vl_forest_candidates(plan, tree_index, node_id, F, s->shuffle, s->candidates);
            for (int k = 0; k < plan->candidates; k++) {
                const int f = s->candidates[k];
                const int bins = data->edge_count[f] + 1;
                if (bins < 2)
                    continue;
                memset(s->histogram, 0, sizeof(uint32_t) * (size_t)(bins * C));
                for (int64_t j = p.begin; j < p.end; j++) {
                    const int64_t i = s->order[j];
                    s->histogram[data->bins[i * F + f] * C + data->classes_of[i]] += s->weights[i];
                }
                unsigned long long left[VL_FOREST_MAX_CLASSES] = {0};
                int bin = -1;
                vl_forest_scan_bins(s->histogram, 0, bins, bins, C, totals, N, plan->min_leaf, left, &best, &bin);
                if (bin >= 0) {
                    best_feature = f;
                    best_bin = bin;
                }
                if (best_feature == f)
                    best_bin = vl_forest_centre_bin(best_bin, bins, data->edges + (int64_t)f * (VL_FOREST_MAX_BINS - 1),
                                                    s->histogram, C);
            }
        }
        if (best_feature < 0) {
            int64_t leaf;
            if (!vl_tree_push_leaf(tree, totals_d, C, &leaf) ||
                !vl_tree_push_node(tree, (vl_forest_node){-1, 0.0f, (int32_t)leaf, -1}))
                return 0;
            continue;
        }
        tree->importance[best_feature] += (double)best.num / (double)best.den - (double)S / (double)N;
        /* stable partition: bins <= best_bin to the left */
        int64_t l = p.begin, r = 0;
        for (int64_t j = p.begin; j < p.end; j++) {
            const int64_t i = s->order[j];
            if (data->bins[i * F + best_feature] <= best_bin)
                s->order[l++] = i;
            else
                s->swap[r++] = i;
        }
        memcpy(s->order + l, s->swap, sizeof(int64_t) * (size_t)r);
        const float threshold = data->edges[(int64_t)best_feature * (VL_FOREST_MAX_BINS - 1) + best_bin];
        const vl_forest_node node = {best_feature, threshold, (int32_t)tail, (int32_t)tail + 1};
        if (!vl_tree_push_node(tree, node) || !queue_push(s, &tail, (pending){p.begin, l, p.depth + 1}) ||
            !queue_push(s, &tail, (pending){l, p.end, p.depth + 1}))
            return 0;
    }
    return 1;
}

typedef struct train_job {
    const vl_forest_binned *data;
    const vl_forest_plan *plan;
    vl_tree *trees;
    const vl_progress *progress;
    atomic_int *done;
    int threads, index, failed;
} train_job;

static void *train_work(void *arg)
{
    train_job *job = arg;
    const vl_forest_binned *data = job->data;
    tree_scratch s;
    memset(&s, 0, sizeof s);
    s.weights = malloc(sizeof(uint32_t) * (size_t)data->samples + 1);
    s.order = malloc(sizeof(int64_t) * (size_t)data->samples + 1);
    s.swap = malloc(sizeof(int64_t) * (size_t)data->samples + 1);
    s.histogram = malloc(sizeof(uint32_t) * VL_FOREST_MAX_BINS * (size_t)data->classes);
    s.candidates = malloc(sizeof(int) * (size_t)data->features);
    s.shuffle = malloc(sizeof(int) * (size_t)data->features);
    if (!s.weights || !s.order || !s.swap || !s.histogram || !s.candidates || !s.shuffle)
        job->failed = 1;
    for (int t = job->index; !job->failed && t < job->plan->trees; t += job->threads) {
        vl_tree *tree = &job->trees[t];
        if (!(tree->importance = calloc((size_t)data->features, sizeof(double))) ||
            !grow_tree(data, job->plan, (uint32_t)t, &s, tree))
            job->failed = 1;
        const int done = atomic_fetch_add(job->done, 1) + 1;
        if (job->index == 0)
            vl_progress_report(job->progress, "training", (double)done / job->plan->trees);
    }
    free(s.weights);
    free(s.order);
    free(s.swap);
    free(s.queue);
    free(s.histogram);
    free(s.candidates);
    free(s.shuffle);
    return NULL;
}

vl_status vl_forest_train_cpu(const vl_forest_binned *binned, const vl_forest_plan *plan, int threads,
                              const vl_progress *progress, vl_tree *trees)
{
    int count = vl_cpu_thread_count(threads);
    if (count > plan->trees)
        count = plan->trees;
    atomic_int done = 0;
    train_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < count; t++)
        jobs[t] = (train_job){.data = binned, .plan = plan, .trees = trees, .progress = progress, .done = &done,
                              .threads = count, .index = t};
    vl_run_parallel(train_work, jobs, sizeof jobs[0], count);
    for (int t = 0; t < count; t++)
        if (jobs[t].failed)
            return vl_fail(VL_ERR_MEMORY, "forest: out of memory while growing trees");
    vl_progress_report(progress, "training", 1.0);
    return VL_OK;
}
