/* Internal: the binned training set and the split rule that the CPU and GPU trainers share. */
#ifndef VL_FOREST_INTERNAL_H
#define VL_FOREST_INTERNAL_H
#include <math.h>
#include <stdint.h>

#include "forest/forest_random.h"
#include "voxlabel/forest.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VL_FOREST_MAX_BINS 1024

/* Each feature cut into bins: a sample is in bin b when edges[b - 1] < value <= edges[b]; a split at bin b sends
 * bins 0..b left, i.e. value <= edges[b]. */
typedef struct vl_forest_binned {
    int64_t samples;
    int features, classes;
    uint16_t *bins;      /* samples x features, sample-major */
    uint8_t *classes_of; /* 0..classes-1 */
    int *edge_count;     /* per feature: bins - 1 */
    float *edges;        /* features x (VL_FOREST_MAX_BINS - 1) */
} vl_forest_binned;

vl_status vl_forest_bin(const float *features, const uint8_t *classes, int64_t samples, int feature_count,
                        int class_count, int bins, int threads, vl_forest_binned *binned);
void vl_forest_binned_free(vl_forest_binned *binned);

/* Split quality exactly: a split with class counts L and R (bootstrap weights) scores
 * sum L_c^2 / |L| + sum R_c^2 / |R| (larger = less Gini impurity), kept as the fraction num / den. */
__extension__ typedef unsigned __int128 vl_u128;
typedef struct vl_split_score {
    vl_u128 num, den;
} vl_split_score;

static inline VL_FOREST_HD int vl_split_better(vl_split_score a, vl_split_score b)
{
    return a.num * b.den > b.num * a.den;
}

/* The cut points after bins first .. end - 1 of a node's class histogram (bins x C; none after the last bin),
 * each scored when both sides keep at least min_leaf: left[c] holds the node's class counts before bin `first`
 * and goes along with the scan; *top and *top_bin keep the best so far (a later bin only when strictly better). */
static inline VL_FOREST_HD void vl_forest_scan_bins(const uint32_t *histogram, int first, int end, int bins, int C,
                                                    const unsigned long long *totals, unsigned long long N,
                                                    int min_leaf, unsigned long long *left, vl_split_score *top,
                                                    int *top_bin)
{
    unsigned long long NL = 0;
    for (int c = 0; c < C; c++)
        NL += left[c];
    for (int b = first; b < end && b + 1 < bins; b++) {
        for (int c = 0; c < C; c++) {
            left[c] += histogram[b * C + c];
            NL += histogram[b * C + c];
        }
        const unsigned long long NR = N - NL;
        if (NL < (unsigned long long)min_leaf || NR < (unsigned long long)min_leaf)
            continue;
        vl_u128 SL = 0, SR = 0;
        for (int c = 0; c < C; c++) {
            const unsigned long long r = totals[c] - left[c];
            SL += (vl_u128)left[c] * left[c];
            SR += (vl_u128)r * r;
        }
        const vl_split_score score = {SL * NR + SR * NL, (vl_u128)NL * NR};
        if (vl_split_better(score, *top)) {
            *top = score;
            *top_bin = b;
        }
    }
}

/* Every split bin from `bin` up to the node's next non-empty bin makes the same partition: the threshold is
 * the one of those edges nearest the middle of the gap between the node's samples (as scikit-learn puts it
 * halfway between the node's neighbouring values). `occupied(b)` is non-zero when bin b holds node samples. */
static inline VL_FOREST_HD int vl_forest_centre_bin(int bin, int bins, const float *edges, const uint32_t *counts,
                                                    int count_stride)
{
    int next = bin + 1;
    while (next + 1 < bins) {
        int occupied = 0;
        for (int c = 0; c < count_stride; c++)
            occupied |= counts[next * count_stride + c] != 0;
        if (occupied)
            break;
        next++;
    }
    /* splits bin .. next - 1 are equivalent */
    const double target = 0.5 * ((double)edges[bin] + (double)edges[next - 1]);
    int best = bin;
    for (int b = bin + 1; b < next; b++)
        if (fabs((double)edges[b] - target) < fabs((double)edges[best] - target))
            best = b;
    return best;
}

/* Node and trainer limits derived from the options. */
typedef struct vl_forest_plan {
    int trees, max_depth, min_leaf, candidates, bootstrap;
    uint64_t seed;
} vl_forest_plan;

vl_status vl_forest_plan_make(const vl_forest_options *options, int feature_count, vl_forest_plan *plan);

/* Candidate k of `node` of `tree`: the first `candidates` of a Fisher-Yates shuffle of 0..features-1 drawn
 * from the hash; written to out[0..candidates). */
static inline VL_FOREST_HD void vl_forest_candidates(const vl_forest_plan *plan, uint32_t tree, uint32_t node,
                                                      int features, int *scratch, int *out)
{
    for (int f = 0; f < features; f++)
        scratch[f] = f;
    for (int k = 0; k < plan->candidates; k++) {
        const int j = k + (int)vl_forest_below(vl_forest_random(plan->seed, tree, node, (uint64_t)k),
                                                (uint32_t)(features - k));
        const int t = scratch[k];
        scratch[k] = scratch[j];
        scratch[j] = t;
        out[k] = scratch[k];
    }
}

/* Bootstrap weight of every sample for `tree`: samples draws with replacement (or 1 each without bootstrap). */
void vl_forest_bootstrap(const vl_forest_plan *plan, uint32_t tree, int64_t samples, uint32_t *weights);

/* A grown tree before it joins a forest: BFS-ordered nodes; leaves index `leaf_values`. */
typedef struct vl_tree {
    vl_forest_node *nodes;
    int64_t node_count, node_capacity;
    float *leaf_values;
    int64_t leaf_count, leaf_capacity;
    double *importance; /* per feature, impurity decrease (unnormalised) */
} vl_tree;

/* Appends a node/leaf; 0 when memory runs out. */
int vl_tree_push_node(vl_tree *tree, vl_forest_node node);
int vl_tree_push_leaf(vl_tree *tree, const double *class_weights, int classes, int64_t *leaf_index);
void vl_tree_free(vl_tree *tree);

/* Assembles trained trees into `forest` (taking their arrays), computes the out-of-bag accuracy from the
 * binned set and normalises the importances. */
vl_status vl_forest_assemble(vl_forest *forest, vl_tree *trees, const vl_forest_binned *binned,
                             const vl_forest_plan *plan, const vl_filter_bank *bank, int threads);

/* The CPU and GPU trainers: trees[0..plan->trees) from the binned set. */
vl_status vl_forest_train_cpu(const vl_forest_binned *binned, const vl_forest_plan *plan, int threads,
                              const vl_progress *progress, vl_tree *trees);
vl_status vl_forest_train_gpu(const vl_forest_binned *binned, const vl_forest_plan *plan, int gpu_index,
                              uint64_t chunk_samples, const vl_progress *progress, vl_tree *trees);
/* The GPU trainer for a set streamed in chunks of `chunk_samples` (per level, every chunk once per histogram
 * batch); vl_forest_train_gpu hands it the sets it does not keep resident. */
vl_status vl_forest_train_gpu_streamed(const vl_forest_binned *binned, const vl_forest_plan *plan,
                                       uint64_t chunk_samples, const vl_progress *progress, vl_tree *trees);

/* One voxel's class fractions summed over the trees, in tree order, then divided by the tree count. */
static inline VL_FOREST_HD void vl_forest_eval(const vl_forest_node *nodes, const int64_t *tree_node_start,
                                                const float *leaf_values, const int64_t *tree_leaf_start,
                                                int trees, int classes, const float *x, int64_t x_stride,
                                                float *probabilities)
{
    for (int c = 0; c < classes; c++)
        probabilities[c] = 0;
    for (int t = 0; t < trees; t++) {
        const vl_forest_node *tree = nodes + tree_node_start[t];
        int32_t n = 0;
        while (tree[n].feature >= 0)
            n = x[(int64_t)tree[n].feature * x_stride] <= tree[n].threshold ? tree[n].left : tree[n].right;
        const float *leaf = leaf_values + (tree_leaf_start[t] + tree[n].left) * classes;
        for (int c = 0; c < classes; c++)
            probabilities[c] += leaf[c];
    }
    for (int c = 0; c < classes; c++)
        probabilities[c] /= (float)trees;
}

#ifdef __cplusplus
}
#endif
#endif
