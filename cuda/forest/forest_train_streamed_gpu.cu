/* GPU training of a binned set that does not stay on the device (see vl_forest_train_gpu for the resident one):
 * breadth-first, all trees' nodes of a level at once. Per level the device
 *   1. builds, for every node searched and each of its candidate features, the class histogram over bins
 *      (one thread per (tree, sample), integer atomics, so the counts are exact and order-free),
 *   2. scans each (node, candidate) histogram for its best threshold (one thread each, exact integer scores;
 *      the threshold centred in the node's gap as the CPU centres it),
 *   3. after the host has picked each node's split, moves every sample to its child.
 * The host keeps the trees, assigns node numbers in breadth-first order and draws candidates and bootstraps
 * from the same hash as the CPU trainer, so the same seed grows the same forest on both.
 * The binned feature matrix (samples x features, 2 bytes each) is the only large input: when it exceeds
 * `chunk_samples` (or device memory) it is streamed in chunks of samples, one upload per chunk per pass, as the
 * seed streams images; the per-tree sample state (node and bootstrap weight, 8 bytes a tree-sample) stays. */
#include <stdlib.h>
#include <string.h>

#include "core/cuda_check.h"
#include "core/gpu_transfer.h"
#include "forest/forest_internal.h"

namespace {

const int B = VL_FOREST_MAX_BINS;

/* 1: histograms of slots [slot_lo, slot_hi) from samples [first, first + count) of this chunk */
__global__ void histogram_kernel(const uint16_t *bins, const uint8_t *classes, int64_t first, int64_t count,
                                 int64_t samples, int trees, int features, int class_count, const int32_t *node_of,
                                 const uint32_t *weight, const int32_t *slot_of, const int32_t *candidates, int m,
                                 int slot_lo, int slot_hi, uint32_t *histogram)
{
    const int64_t pairs = (int64_t)trees * count;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < pairs; p += (int64_t)gridDim.x * blockDim.x) {
        const int t = (int)(p / count);
        const int64_t local = p % count, i = first + local;
        const int32_t node = node_of[(int64_t)t * samples + i];
        if (node < 0)
            continue;
        const int32_t slot = slot_of[node];
        if (slot < slot_lo || slot >= slot_hi)
            continue;
        const uint32_t w = weight[(int64_t)t * samples + i];
        const int c = classes[i];
        for (int k = 0; k < m; k++) {
            const int f = candidates[slot * m + k];
            const int bin = bins[local * features + f];
            atomicAdd(&histogram[(((int64_t)(slot - slot_lo) * m + k) * B + bin) * class_count + c], w);
        }
    }
}

struct best_split {
    int32_t bin;         /* -1: no split beats the parent */
    unsigned long long num_lo, num_hi, den_lo, den_hi;
};

/* 2: best bin of each (slot, candidate); left class counts at that bin into best_left */
__global__ void search_kernel(const uint32_t *histogram, int slot_lo, int slot_hi, int m, int class_count,
                              const int32_t *candidates, const int *edge_count, const float *edges,
                              const unsigned long long *totals,
                              int min_leaf, unsigned long long *left, best_split *best, unsigned long long *best_left)
{
    const int64_t jobs = (int64_t)(slot_hi - slot_lo) * m;
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < jobs; j += (int64_t)gridDim.x * blockDim.x) {
        const int slot = slot_lo + (int)(j / m), k = (int)(j % m);
        const int f = candidates[slot * m + k];
        const int bins = edge_count[f] + 1;
        const uint32_t *h = histogram + j * B * class_count;
        const unsigned long long *tot = totals + (int64_t)slot * class_count;
        unsigned long long *l = left + j * class_count;
        unsigned long long N = 0;
        vl_u128 S = 0;
        for (int c = 0; c < class_count; c++) {
            N += tot[c];
            S += (vl_u128)tot[c] * tot[c];
            l[c] = 0;
        }
        vl_split_score top = {S, N};
        int top_bin = -1;
        vl_forest_scan_bins(h, 0, bins, bins, class_count, tot, N, min_leaf, l, &top, &top_bin);
        if (top_bin >= 0)
            top_bin = vl_forest_centre_bin(top_bin, bins, edges + (int64_t)f * (B - 1), h, class_count);
        best_split out = {top_bin, (unsigned long long)top.num, (unsigned long long)(top.num >> 64),
                          (unsigned long long)top.den, (unsigned long long)(top.den >> 64)};
        best[j] = out;
        unsigned long long *bl = best_left + j * class_count;
        for (int c = 0; c < class_count; c++)
            bl[c] = 0;
        for (int b = 0; b <= top_bin; b++)
            for (int c = 0; c < class_count; c++)
                bl[c] += h[b * class_count + c];
    }
}

/* 3: each sample of a split node moves to its child's frontier index; of a leaf, out (-1) */
__global__ void move_kernel(const uint16_t *bins, int64_t first, int64_t count, int64_t samples, int trees,
                            int features, int32_t *node_of, const int32_t *split_feature, const int32_t *split_bin,
                            const int32_t *child)
{
    const int64_t pairs = (int64_t)trees * count;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < pairs; p += (int64_t)gridDim.x * blockDim.x) {
        const int t = (int)(p / count);
        const int64_t local = p % count;
        int32_t *node = &node_of[(int64_t)t * samples + first + local];
        if (*node < 0)
            continue;
        const int32_t f = split_feature[*node];
        *node = f < 0 ? -1 : child[2 * *node + (bins[local * features + f] > split_bin[*node])];
    }
}

int blocks_for(int64_t n)
{
    const int64_t blocks = (n + 255) / 256;
    return blocks > 65535 * 16 ? 65535 * 16 : blocks < 1 ? 1 : (int)blocks;
}

struct frontier_node {
    int tree;
    int32_t id;
    int depth;
};

/* Device buffers; everything freed by release(). */
struct device_state {
    uint16_t *bins;
    uint8_t *classes;
    int *edge_count;
    float *edges;
    int32_t *node_of;
    uint32_t *weight;
    int32_t *slot_of, *candidates;
    unsigned long long *totals, *left, *best_left;
    uint32_t *histogram;
    best_split *best;
};

void release(device_state *d)
{
    void *all[] = {d->bins,    d->classes, d->edge_count, d->edges,     d->node_of,   d->weight,
                   d->slot_of, d->candidates, d->totals, d->left, d->best_left, d->histogram, d->best};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        cudaFree(all[k]);
    memset(d, 0, sizeof *d);
}

/* Reallocates `buffer` to exactly `count` elements when it holds fewer. */
template <typename T> cudaError_t grow_buffer(T **buffer, size_t *capacity, size_t count)
{
    if (count <= *capacity)
        return cudaSuccess;
    cudaFree(*buffer);
    *buffer = NULL;
    *capacity = 0;
    const cudaError_t error = cudaMalloc(buffer, sizeof(T) * count);
    if (error == cudaSuccess)
        *capacity = count;
    return error;
}

} // namespace

vl_status vl_forest_train_gpu_streamed(const vl_forest_binned *data, const vl_forest_plan *plan,
                                       uint64_t chunk_samples, const vl_progress *progress, vl_tree *trees)
{
    const int64_t n = data->samples;
    const int F = data->features, C = data->classes, T = plan->trees, m = plan->candidates;
    device_state d;
    memset(&d, 0, sizeof d);
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    /* bins resident when they fit in a quarter of free memory (or the caller's chunk), else streamed */
    int64_t chunk = (int64_t)(free_bytes / 4 / (sizeof(uint16_t) * (size_t)F));
    if (chunk_samples && (int64_t)chunk_samples < chunk)
        chunk = (int64_t)chunk_samples;
    if (chunk > n)
        chunk = n;
    if (chunk < 1)
        chunk = 1;
    const int resident = chunk == n;
    vl_status status = VL_OK;
    cudaError_t error = cudaSuccess;
    uint32_t *weights = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)n * (size_t)T);
    int32_t *node_of = (int32_t *)malloc(sizeof(int32_t) * (size_t)n * (size_t)T);
    int *scratch = (int *)malloc(sizeof(int) * (size_t)F);
    frontier_node *frontier = NULL, *next = NULL;
    unsigned long long *totals = NULL, *next_totals = NULL, *best_left = NULL;
    int32_t *slot_of = NULL, *candidates = NULL, *split_feature = NULL, *split_bin = NULL, *child = NULL;
    best_split *best = NULL;
    int64_t *tail = (int64_t *)calloc((size_t)T, sizeof(int64_t));
    size_t cap_frontier = 0, cap_slots = 0, cap_hist = 0, cap_jobs = 0;
    int64_t frontier_count = T, done_levels = 0;
    if (!weights || !node_of || !scratch || !tail) {
        status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
        goto done;
    }
    for (int t = 0; t < T; t++) {
        if (!(trees[t].importance = (double *)calloc((size_t)F, sizeof(double)))) {
            status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
            goto done;
        }
        vl_forest_bootstrap(plan, (uint32_t)t, n, weights + (int64_t)t * n);
        for (int64_t i = 0; i < n; i++)
            node_of[(int64_t)t * n + i] = weights[(int64_t)t * n + i] ? t : -1;
        tail[t] = 1;
    }
#define CUDA(call)                                                      \
    do {                                                                \
        if ((error = (call)) != cudaSuccess) {                          \
            status = vl_cuda_failure(error, "forest training");          \
            goto done;                                                  \
        }                                                               \
    } while (0)
    CUDA(cudaMalloc(&d.bins, sizeof(uint16_t) * (size_t)chunk * (size_t)F));
    CUDA(cudaMalloc(&d.classes, (size_t)n));
    CUDA(cudaMalloc(&d.edge_count, sizeof(int) * (size_t)F));
    CUDA(cudaMalloc(&d.node_of, sizeof(int32_t) * (size_t)n * (size_t)T));
    CUDA(cudaMalloc(&d.weight, sizeof(uint32_t) * (size_t)n * (size_t)T));
    CUDA(cudaMemcpy(d.classes, data->classes_of, (size_t)n, cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy(d.edge_count, data->edge_count, sizeof(int) * (size_t)F, cudaMemcpyHostToDevice));
    CUDA(cudaMalloc(&d.edges, sizeof(float) * (size_t)F * (B - 1)));
    CUDA(cudaMemcpy(d.edges, data->edges, sizeof(float) * (size_t)F * (B - 1), cudaMemcpyHostToDevice));
    CUDA(vl_gpu_upload(d.node_of, node_of, sizeof(int32_t) * (size_t)n * (size_t)T));
    CUDA(vl_gpu_upload(d.weight, weights, sizeof(uint32_t) * (size_t)n * (size_t)T));
    if (resident)
        CUDA(vl_gpu_upload(d.bins, data->bins, sizeof(uint16_t) * (size_t)n * (size_t)F));

    /* the roots: class totals from the bootstrap weights */
    frontier = (frontier_node *)malloc(sizeof(frontier_node) * (size_t)T);
    totals = (unsigned long long *)calloc((size_t)T * (size_t)C, sizeof(unsigned long long));
    if (!frontier || !totals) {
        status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
        goto done;
    }
    for (int t = 0; t < T; t++) {
        frontier[t] = frontier_node{t, 0, 0};
        for (int64_t i = 0; i < n; i++)
            totals[(int64_t)t * C + data->classes_of[i]] += weights[(int64_t)t * n + i];
    }
    while (frontier_count > 0) {
        /* which nodes search for a split; slots in frontier order */
        slot_of = (int32_t *)realloc(slot_of, sizeof(int32_t) * (size_t)frontier_count);
        candidates = (int32_t *)realloc(candidates, sizeof(int32_t) * (size_t)frontier_count * (size_t)m);
        split_feature = (int32_t *)realloc(split_feature, sizeof(int32_t) * (size_t)frontier_count);
        split_bin = (int32_t *)realloc(split_bin, sizeof(int32_t) * (size_t)frontier_count);
        child = (int32_t *)realloc(child, sizeof(int32_t) * 2 * (size_t)frontier_count);
        if (!slot_of || !candidates || !split_feature || !split_bin || !child) {
            status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
            goto done;
        }
        int slots = 0;
        for (int64_t fi = 0; fi < frontier_count; fi++) {
            const frontier_node *node = &frontier[fi];
            unsigned long long N = 0;
            int present = 0;
            for (int c = 0; c < C; c++) {
                N += totals[fi * C + c];
                present += totals[fi * C + c] > 0;
            }
            slot_of[fi] = -1;
            if (node->depth < plan->max_depth && present > 1 && N >= 2 * (unsigned long long)plan->min_leaf) {
                slot_of[fi] = slots;
                int out[VL_FILTER_MAX_CHANNELS];
                vl_forest_candidates(plan, (uint32_t)node->tree, (uint32_t)node->id, F, scratch, out);
                memcpy(candidates + (int64_t)slots * m, out, sizeof(int) * (size_t)m);
                slots++;
            }
        }
        best = (best_split *)realloc(best, sizeof(best_split) * ((size_t)slots * (size_t)m + 1));
        best_left = (unsigned long long *)realloc(best_left, sizeof(unsigned long long) *
                                                                 ((size_t)slots * (size_t)m * (size_t)C + 1));
        unsigned long long *slot_totals = (unsigned long long *)malloc(sizeof(unsigned long long) * ((size_t)slots * C + 1));
        if (!best || !best_left || !slot_totals) {
            free(slot_totals);
            status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
            goto done;
        }
        for (int64_t fi = 0; fi < frontier_count; fi++)
            if (slot_of[fi] >= 0)
                memcpy(slot_totals + (int64_t)slot_of[fi] * C, totals + fi * C, sizeof(unsigned long long) * (size_t)C);
        if (slots) {
            error = grow_buffer(&d.slot_of, &cap_frontier, (size_t)frontier_count);
            if (error == cudaSuccess)
                error = grow_buffer(&d.candidates, &cap_slots, (size_t)slots * (size_t)m);
            if (error == cudaSuccess) {
                cudaFree(d.totals);
                d.totals = NULL;
                error = cudaMalloc(&d.totals, sizeof(unsigned long long) * (size_t)slots * (size_t)C);
            }
            if (error == cudaSuccess)
                error = cudaMemcpy(d.slot_of, slot_of, sizeof(int32_t) * (size_t)frontier_count, cudaMemcpyHostToDevice);
            if (error == cudaSuccess)
                error = cudaMemcpy(d.candidates, candidates, sizeof(int32_t) * (size_t)slots * (size_t)m,
                                   cudaMemcpyHostToDevice);
            if (error == cudaSuccess)
                error = cudaMemcpy(d.totals, slot_totals, sizeof(unsigned long long) * (size_t)slots * (size_t)C,
                                   cudaMemcpyHostToDevice);
            free(slot_totals);
            slot_totals = NULL;
            if (error != cudaSuccess) {
                status = vl_cuda_failure(error, "forest training");
                goto done;
            }
            /* histograms in batches of slots within a quarter of free memory and at most 1 GiB */
            cudaMemGetInfo(&free_bytes, &total_bytes);
            const size_t per_slot = sizeof(uint32_t) * (size_t)m * B * (size_t)C;
            const size_t budget = free_bytes / 4 < ((size_t)1 << 30) ? free_bytes / 4 : (size_t)1 << 30;
            int64_t batch = (int64_t)(budget / per_slot);
            if (batch < 1)
                batch = 1;
            if (batch > slots)
                batch = slots;
            CUDA(grow_buffer(&d.histogram, &cap_hist, (size_t)batch * m * B * (size_t)C));
            CUDA(grow_buffer(&d.best, &cap_jobs, (size_t)slots * m));
            cudaFree(d.left);
            cudaFree(d.best_left);
            d.left = d.best_left = NULL;
            CUDA(cudaMalloc(&d.left, sizeof(unsigned long long) * (size_t)batch * m * (size_t)C));
            CUDA(cudaMalloc(&d.best_left, sizeof(unsigned long long) * (size_t)slots * m * (size_t)C));
            for (int lo = 0; lo < slots; lo += (int)batch) {
                const int hi = lo + (int)batch < slots ? lo + (int)batch : slots;
                CUDA(cudaMemset(d.histogram, 0, sizeof(uint32_t) * (size_t)(hi - lo) * m * B * (size_t)C));
                for (int64_t first = 0; first < n; first += chunk) {
                    const int64_t count = first + chunk < n ? chunk : n - first;
                    if (!resident)
                        CUDA(vl_gpu_upload(d.bins, data->bins + first * F, sizeof(uint16_t) * (size_t)count * F));
                    histogram_kernel<<<blocks_for((int64_t)T * count), 256>>>(
                        d.bins, d.classes, first, count, n, T, F, C, d.node_of, d.weight, d.slot_of, d.candidates, m,
                        lo, hi, d.histogram);
                    CUDA(cudaGetLastError());
                    if (!resident)
                        CUDA(cudaDeviceSynchronize());
                }
                search_kernel<<<blocks_for((int64_t)(hi - lo) * m), 256>>>(
                    d.histogram, lo, hi, m, C, d.candidates, d.edge_count, d.edges, d.totals, plan->min_leaf, d.left,
                    d.best + (int64_t)lo * m, d.best_left + (int64_t)lo * m * C);
                CUDA(cudaGetLastError());
            }
            CUDA(cudaMemcpy(best, d.best, sizeof(best_split) * (size_t)slots * m, cudaMemcpyDeviceToHost));
            CUDA(cudaMemcpy(best_left, d.best_left, sizeof(unsigned long long) * (size_t)slots * m * C,
                            cudaMemcpyDeviceToHost));
        } else {
            free(slot_totals);
        }
        /* decide every node in frontier order (per tree: breadth-first order), number the children */
        next = (frontier_node *)malloc(sizeof(frontier_node) * (size_t)(2 * frontier_count));
        next_totals = (unsigned long long *)calloc((size_t)(2 * frontier_count) * (size_t)C, sizeof(unsigned long long));
        if (!next || !next_totals) {
            status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
            goto done;
        }
        int64_t next_count = 0;
        for (int64_t fi = 0; fi < frontier_count; fi++) {
            const frontier_node node = frontier[fi];
            vl_tree *tree = &trees[node.tree];
            const unsigned long long *tot = totals + fi * C;
            unsigned long long N = 0;
            vl_u128 S = 0;
            double totals_d[VL_FOREST_MAX_CLASSES];
            for (int c = 0; c < C; c++) {
                N += tot[c];
                S += (vl_u128)tot[c] * tot[c];
                totals_d[c] = (double)tot[c];
            }
            int chosen = -1;
            vl_split_score top = {S, N};
            if (slot_of[fi] >= 0)
                for (int k = 0; k < m; k++) {
                    const best_split *b = &best[(int64_t)slot_of[fi] * m + k];
                    if (b->bin < 0 || data->edge_count[candidates[(int64_t)slot_of[fi] * m + k]] < 1)
                        continue;
                    const vl_split_score score = {(vl_u128)b->num_hi << 64 | b->num_lo,
                                                  (vl_u128)b->den_hi << 64 | b->den_lo};
                    if (vl_split_better(score, top)) {
                        top = score;
                        chosen = k;
                    }
                }
            split_feature[fi] = -1;
            split_bin[fi] = 0;
            if (chosen < 0) {
                int64_t leaf;
                if (!vl_tree_push_leaf(tree, totals_d, C, &leaf) ||
                    !vl_tree_push_node(tree, vl_forest_node{-1, 0.0f, (int32_t)leaf, -1})) {
                    status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
                    goto done;
                }
                continue;
            }
            const int64_t j = (int64_t)slot_of[fi] * m + chosen;
            const int f = candidates[j], bin = best[j].bin;
            tree->importance[f] += (double)top.num / (double)top.den - (double)S / (double)N;
            const float threshold = data->edges[(int64_t)f * (VL_FOREST_MAX_BINS - 1) + bin];
            const int32_t left_id = (int32_t)tail[node.tree]++, right_id = (int32_t)tail[node.tree]++;
            if (!vl_tree_push_node(tree, vl_forest_node{f, threshold, left_id, right_id})) {
                status = vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
                goto done;
            }
            split_feature[fi] = f;
            split_bin[fi] = bin;
            child[2 * fi] = (int32_t)next_count;
            child[2 * fi + 1] = (int32_t)next_count + 1;
            for (int c = 0; c < C; c++) {
                next_totals[next_count * C + c] = best_left[j * C + c];
                next_totals[(next_count + 1) * C + c] = tot[c] - best_left[j * C + c];
            }
            next[next_count++] = frontier_node{node.tree, left_id, node.depth + 1};
            next[next_count++] = frontier_node{node.tree, right_id, node.depth + 1};
        }
        /* move the samples to their children */
        if (next_count) {
            int32_t *d_feature = NULL, *d_bin = NULL, *d_child = NULL;
            error = cudaMalloc(&d_feature, sizeof(int32_t) * (size_t)frontier_count);
            if (error == cudaSuccess)
                error = cudaMalloc(&d_bin, sizeof(int32_t) * (size_t)frontier_count);
            if (error == cudaSuccess)
                error = cudaMalloc(&d_child, sizeof(int32_t) * 2 * (size_t)frontier_count);
            if (error == cudaSuccess)
                error = cudaMemcpy(d_feature, split_feature, sizeof(int32_t) * (size_t)frontier_count,
                                   cudaMemcpyHostToDevice);
            if (error == cudaSuccess)
                error = cudaMemcpy(d_bin, split_bin, sizeof(int32_t) * (size_t)frontier_count, cudaMemcpyHostToDevice);
            if (error == cudaSuccess)
                error = cudaMemcpy(d_child, child, sizeof(int32_t) * 2 * (size_t)frontier_count, cudaMemcpyHostToDevice);
            for (int64_t first = 0; error == cudaSuccess && first < n; first += chunk) {
                const int64_t count = first + chunk < n ? chunk : n - first;
                if (!resident)
                    error = vl_gpu_upload(d.bins, data->bins + first * F, sizeof(uint16_t) * (size_t)count * F);
                if (error == cudaSuccess) {
                    move_kernel<<<blocks_for((int64_t)T * count), 256>>>(d.bins, first, count, n, T, F, d.node_of,
                                                                         d_feature, d_bin, d_child);
                    error = cudaGetLastError();
                }
                if (error == cudaSuccess && !resident)
                    error = cudaDeviceSynchronize();
            }
            if (error == cudaSuccess)
                error = cudaDeviceSynchronize();
            cudaFree(d_feature);
            cudaFree(d_bin);
            cudaFree(d_child);
            if (error != cudaSuccess) {
                status = vl_cuda_failure(error, "forest training: moving samples");
                goto done;
            }
        }
        free(frontier);
        free(totals);
        frontier = next;
        totals = next_totals;
        next = NULL;
        next_totals = NULL;
        frontier_count = next_count;
        done_levels++;
        vl_progress_report(progress, "training", (double)done_levels / (double)(plan->max_depth + 1));
    }
    vl_progress_report(progress, "training", 1.0);
#undef CUDA
done:
    release(&d);
    free(weights);
    free(node_of);
    free(scratch);
    free(frontier);
    free(next);
    free(totals);
    free(next_totals);
    free(slot_of);
    free(candidates);
    free(split_feature);
    free(split_bin);
    free(child);
    free(best);
    free(best_left);
    free(tail);
    return status;
}
