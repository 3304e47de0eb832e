/* What both trainers share: options to plan, bootstrap weights, tree building blocks, and assembling trees
 * into a forest with its out-of-bag accuracy and feature importances. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "forest/forest_internal.h"

void vl_forest_options_default(vl_forest_options *options)
{
    memset(options, 0, sizeof *options);
    options->trees = 100;
    options->min_samples_leaf = 1;
    options->bins = VL_FOREST_MAX_BINS;
    options->bootstrap = 1;
    options->seed = 1;
    options->max_samples = 2000000;
    options->tile = 128;
    vl_device_default(&options->device);
}

vl_status vl_forest_plan_make(const vl_forest_options *options, int feature_count, vl_forest_plan *plan)
{
    if (options->trees < 1 || options->trees > 10000)
        return vl_fail(VL_ERR_ARGUMENT, "forest: %d trees (give 1..10000)", options->trees);
    if (options->max_depth < 0 || options->max_depth > VL_FOREST_MAX_DEPTH)
        return vl_fail(VL_ERR_ARGUMENT, "forest: max depth %d (give 1..%d, or 0 for no limit)", options->max_depth,
                       VL_FOREST_MAX_DEPTH);
    if (options->min_samples_leaf < 1)
        return vl_fail(VL_ERR_ARGUMENT, "forest: min samples per leaf %d (give 1 or more)",
                       options->min_samples_leaf);
    if (options->max_features < 0 || options->max_features > feature_count)
        return vl_fail(VL_ERR_ARGUMENT, "forest: %d features per split, but there are %d features",
                       options->max_features, feature_count);
    plan->trees = options->trees;
    plan->max_depth = options->max_depth ? options->max_depth : VL_FOREST_MAX_DEPTH;
    plan->min_leaf = options->min_samples_leaf;
    plan->candidates = options->max_features ? options->max_features : (int)floor(sqrt((double)feature_count));
    if (plan->candidates < 1)
        plan->candidates = 1;
    plan->bootstrap = options->bootstrap;
    plan->seed = options->seed;
    return VL_OK;
}

void vl_forest_bootstrap(const vl_forest_plan *plan, uint32_t tree, int64_t samples, uint32_t *weights)
{
    if (!plan->bootstrap) {
        for (int64_t i = 0; i < samples; i++)
            weights[i] = 1;
        return;
    }
    memset(weights, 0, sizeof(uint32_t) * (size_t)samples);
    for (int64_t j = 0; j < samples; j++)
        weights[vl_forest_below(vl_forest_random(plan->seed, tree, VL_FOREST_BOOTSTRAP_NODE, (uint64_t)j),
                                (uint32_t)samples)]++;
}

int vl_tree_push_node(vl_tree *tree, vl_forest_node node)
{
    if (tree->node_count == tree->node_capacity) {
        const int64_t capacity = tree->node_capacity ? 2 * tree->node_capacity : 256;
        vl_forest_node *grown = realloc(tree->nodes, sizeof(vl_forest_node) * (size_t)capacity);
        if (!grown)
            return 0;
        tree->nodes = grown;
        tree->node_capacity = capacity;
    }
    tree->nodes[tree->node_count++] = node;
    return 1;
}

int vl_tree_push_leaf(vl_tree *tree, const double *class_weights, int classes, int64_t *leaf_index)
{
    if (tree->leaf_count == tree->leaf_capacity) {
        const int64_t capacity = tree->leaf_capacity ? 2 * tree->leaf_capacity : 128;
        float *grown = realloc(tree->leaf_values, sizeof(float) * (size_t)(capacity * classes));
        if (!grown)
            return 0;
        tree->leaf_values = grown;
        tree->leaf_capacity = capacity;
    }
    double total = 0;
    for (int c = 0; c < classes; c++)
        total += class_weights[c];
    float *leaf = tree->leaf_values + tree->leaf_count * classes;
    for (int c = 0; c < classes; c++)
        leaf[c] = total > 0 ? (float)(class_weights[c] / total) : 0.0f;
    *leaf_index = tree->leaf_count++;
    return 1;
}

void vl_tree_free(vl_tree *tree)
{
    free(tree->nodes);
    free(tree->leaf_values);
    free(tree->importance);
    memset(tree, 0, sizeof *tree);
}

void vl_forest_free(vl_forest *forest)
{
    free(forest->tree_node_start);
    free(forest->nodes);
    free(forest->tree_leaf_start);
    free(forest->leaf_values);
    free(forest->importances);
    memset(forest, 0, sizeof *forest);
}

/* Out-of-bag votes: each tree's class fractions added to the samples it did not draw. */
typedef struct oob_job {
    const vl_forest *forest;
    const vl_forest_binned *data;
    const vl_forest_plan *plan;
    int threads, index, failed;
    double *votes; /* samples x classes, this job's trees */
} oob_job;

static void *oob_work(void *arg)
{
    oob_job *job = arg;
    const vl_forest_binned *data = job->data;
    const int C = data->classes, F = data->features;
    uint32_t *weights = malloc(sizeof(uint32_t) * (size_t)data->samples + 1);
    job->votes = calloc((size_t)(data->samples * C) + 1, sizeof(double));
    if (!weights || !job->votes) {
        job->failed = 1;
        free(weights);
        return NULL;
    }
    for (int t = job->index; t < job->plan->trees; t += job->threads) {
        vl_forest_bootstrap(job->plan, (uint32_t)t, data->samples, weights);
        const vl_forest_node *nodes = job->forest->nodes + job->forest->tree_node_start[t];
        const float *leaves = job->forest->leaf_values + job->forest->tree_leaf_start[t] * C;
        for (int64_t i = 0; i < data->samples; i++) {
            if (weights[i])
                continue;
            int32_t n = 0;
            while (nodes[n].feature >= 0) {
                const int f = nodes[n].feature;
                const int bin = data->bins[i * F + f];
                /* bin <= split bin  <=>  the edge below the bin is under the threshold */
                const int left = bin == 0 || data->edges[(int64_t)f * (VL_FOREST_MAX_BINS - 1) + bin - 1] <
                                                 nodes[n].threshold;
                n = left ? nodes[n].left : nodes[n].right;
            }
            for (int c = 0; c < C; c++)
                job->votes[i * C + c] += leaves[nodes[n].left * C + c];
        }
    }
    free(weights);
    return NULL;
}

vl_status vl_forest_assemble(vl_forest *forest, vl_tree *trees, const vl_forest_binned *binned,
                             const vl_forest_plan *plan, const vl_filter_bank *bank, int threads)
{
    memset(forest, 0, sizeof *forest);
    forest->bank = *bank;
    forest->feature_count = binned->features;
    forest->class_count = binned->classes;
    forest->tree_count = plan->trees;
    forest->seed = plan->seed;
    forest->training_samples = binned->samples;
    forest->oob_accuracy = -1;
    int64_t nodes = 0, leaves = 0;
    for (int t = 0; t < plan->trees; t++) {
        nodes += trees[t].node_count;
        leaves += trees[t].leaf_count;
    }
    const int C = binned->classes, F = binned->features;
    forest->tree_node_start = malloc(sizeof(int64_t) * (size_t)(plan->trees + 1));
    forest->tree_leaf_start = malloc(sizeof(int64_t) * (size_t)(plan->trees + 1));
    forest->nodes = malloc(sizeof(vl_forest_node) * (size_t)nodes + 1);
    forest->leaf_values = malloc(sizeof(float) * (size_t)(leaves * C) + 1);
    forest->importances = calloc((size_t)F, sizeof(float));
    if (!forest->tree_node_start || !forest->tree_leaf_start || !forest->nodes || !forest->leaf_values ||
        !forest->importances) {
        vl_forest_free(forest);
        return vl_fail(VL_ERR_MEMORY, "forest: cannot allocate %lld nodes", (long long)nodes);
    }
    nodes = leaves = 0;
    double *importance = calloc((size_t)F, sizeof(double));
    for (int t = 0; t < plan->trees; t++) {
        forest->tree_node_start[t] = nodes;
        forest->tree_leaf_start[t] = leaves;
        memcpy(forest->nodes + nodes, trees[t].nodes, sizeof(vl_forest_node) * (size_t)trees[t].node_count);
        memcpy(forest->leaf_values + leaves * C, trees[t].leaf_values,
               sizeof(float) * (size_t)(trees[t].leaf_count * C));
        nodes += trees[t].node_count;
        leaves += trees[t].leaf_count;
        double sum = 0;
        for (int f = 0; f < F; f++)
            sum += trees[t].importance[f];
        for (int f = 0; importance && sum > 0 && f < F; f++)
            importance[f] += trees[t].importance[f] / sum / plan->trees;
    }
    forest->tree_node_start[plan->trees] = nodes;
    forest->tree_leaf_start[plan->trees] = leaves;
    for (int f = 0; importance && f < F; f++)
        forest->importances[f] = (float)importance[f];
    free(importance);

    int count = vl_cpu_thread_count(threads);
    if (count > plan->trees)
        count = plan->trees;
    oob_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < count; t++)
        jobs[t] = (oob_job){.forest = forest, .data = binned, .plan = plan, .threads = count, .index = t};
    vl_run_parallel(oob_work, jobs, sizeof jobs[0], count);
    int failed = 0;
    for (int t = 0; t < count; t++)
        failed |= jobs[t].failed;
    if (!failed) {
        int64_t voted = 0, right = 0;
        for (int64_t i = 0; i < binned->samples; i++) {
            double best = 0;
            int best_class = -1;
            for (int c = 0; c < C; c++) {
                double v = 0;
                for (int t = 0; t < count; t++)
                    v += jobs[t].votes[i * C + c];
                if (v > best) {
                    best = v;
                    best_class = c;
                }
            }
            if (best_class >= 0) {
                voted++;
                right += best_class == binned->classes_of[i];
            }
        }
        if (voted)
            forest->oob_accuracy = (double)right / (double)voted;
    }
    for (int t = 0; t < count; t++)
        free(jobs[t].votes);
    if (failed) {
        vl_forest_free(forest);
        return vl_fail(VL_ERR_MEMORY, "forest: out of memory for the out-of-bag votes");
    }
    return VL_OK;
}
