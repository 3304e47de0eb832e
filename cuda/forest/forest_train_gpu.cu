/* GPU training after Pianu et al.: breadth-first, node-parallel split search over a level of many trees.
 * The binned set stays on the device, feature-major (a candidate's bins of a node's samples are one gather
 * from one row). Each tree's in-bag samples are one list of entries (sample, bootstrap weight, class) that is
 * partitioned node by node, as the CPU trainer partitions its sample order, so a level reads only the live
 * samples of the nodes it splits, once per candidate. Per level:
 *   1. search: one block per (node, candidate) builds the class histogram over bins in shared memory, scans
 *      it and keeps the first bin with the best exact integer score (the threshold centred in the node's gap
 *      as the CPU centres it);
 *   2. choose: one thread per node takes the first candidate with the best score, as the CPU does;
 *   3. the host numbers the children in breadth-first order and pushes the nodes;
 *   4. partition: one block per split node moves its entries to the left or right part of its range.
 * Histogram counts are sums of integers, so the order in which entries sit in a range changes nothing, and
 * the same seed grows the same forest as the CPU. Trees are trained in groups whose entry lists fit a quarter
 * of free device memory; sets that do not stay resident go to vl_forest_train_gpu_streamed. */
#include <stdlib.h>
#include <string.h>

#include <cub/block/block_scan.cuh>

#include "core/cuda_check.h"
#include "core/gpu_transfer.h"
#include "forest/forest_internal.h"

namespace {

const int B = VL_FOREST_MAX_BINS;
const int THREADS = 256;
const int BINS_PER_THREAD = B / THREADS;
/* classes whose histogram (B x classes x 4 bytes) and the search's other shared arrays fit the default 48 KiB */
const int MAX_CLASSES = 8;

/* An entry: sample index (bits 0-31), bootstrap weight (32-55), class (56-63). */
__device__ inline uint32_t entry_sample(uint64_t e) { return (uint32_t)e; }
__device__ inline uint32_t entry_weight(uint64_t e) { return (uint32_t)(e >> 32) & 0xffffffu; }
__device__ inline int entry_class(uint64_t e) { return (int)(e >> 56); }

/* bins_fm[f][i] = bins[i][f] */
__global__ void transpose_kernel(const uint16_t *bins, int64_t n, int features, uint16_t *bins_fm)
{
    const int64_t total = n * features;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < total; p += (int64_t)gridDim.x * blockDim.x) {
        const int f = (int)(p / n);
        const int64_t i = p % n;
        bins_fm[p] = bins[i * features + f];
    }
}

/* bootstrap draws of trees first_tree + blockIdx.y: weight[tree][i] = how often sample i was drawn */
__global__ void bootstrap_kernel(uint64_t seed, int bootstrap, int first_tree, int64_t n, uint32_t *weight)
{
    const int t = blockIdx.y;
    uint32_t *w = weight + (int64_t)t * n;
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n; j += (int64_t)gridDim.x * blockDim.x) {
        if (bootstrap)
            atomicAdd(&w[vl_forest_below(vl_forest_random(seed, (uint32_t)(first_tree + t), VL_FOREST_BOOTSTRAP_NODE,
                                                          (uint64_t)j),
                                         (uint32_t)n)],
                      1u);
        else
            w[j] = 1;
    }
}

/* the in-bag samples of tree blockIdx.y as entries at entries[tree * n ..), their number in in_bag[tree] and
 * their class totals in totals[tree * classes ..] (both zeroed by the caller) */
__global__ void entries_kernel(const uint32_t *weight, const uint8_t *classes, int64_t n, int class_count,
                               uint64_t *entries, unsigned long long *in_bag, unsigned long long *totals)
{
    __shared__ unsigned long long block_totals[MAX_CLASSES];
    const int t = blockIdx.y;
    if (threadIdx.x < class_count)
        block_totals[threadIdx.x] = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    for (int64_t base = blockIdx.x * (int64_t)blockDim.x; base < n; base += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = base + threadIdx.x;
        const uint32_t w = i < n ? weight[(int64_t)t * n + i] : 0;
        /* one atomic per warp; positions in sample order within the warp */
        const unsigned mask = __ballot_sync(0xffffffffu, w != 0);
        if (!mask)
            continue;
        const int leader = __ffs(mask) - 1;
        unsigned long long first = 0;
        if (lane == leader)
            first = atomicAdd(&in_bag[t], (unsigned long long)__popc(mask));
        first = __shfl_sync(0xffffffffu, first, leader);
        if (w) {
            const int c = classes[i];
            entries[(int64_t)t * n + (int64_t)first + __popc(mask & ((1u << lane) - 1))] =
                (uint64_t)i | (uint64_t)w << 32 | (uint64_t)c << 56;
            atomicAdd(&block_totals[c], (unsigned long long)w);
        }
    }
    __syncthreads();
    if (threadIdx.x < class_count && block_totals[threadIdx.x])
        atomicAdd(&totals[(int64_t)t * class_count + threadIdx.x], block_totals[threadIdx.x]);
}

struct best_split {
    int32_t feature, bin; /* bin -1: no split beats the parent */
    unsigned long long num_lo, num_hi, den_lo, den_hi;
};

__device__ inline vl_split_score score_of(const best_split &s)
{
    return vl_split_score{(vl_u128)s.num_hi << 64 | s.num_lo, (vl_u128)s.den_hi << 64 | s.den_lo};
}

/* a beats b: a strictly better score, or the same score at a lower bin (so the first best bin wins) */
__device__ inline int ahead(vl_split_score a, int a_bin, vl_split_score b, int b_bin)
{
    if (a_bin < 0)
        return 0;
    if (b_bin < 0)
        return 1;
    const vl_u128 x = a.num * b.den, y = b.num * a.den;
    return x > y || (x == y && a_bin < b_bin);
}

/* 1: block (slot, candidate k) = blockIdx.x; writes best[blockIdx.x] and its left class counts */
__global__ void __launch_bounds__(THREADS)
    search_kernel(const uint64_t *entries, const int64_t *slot_begin, const int64_t *slot_count,
                  const int32_t *candidates, const unsigned long long *slot_totals, int m, int class_count,
                  const uint16_t *bins_fm, int64_t n, const int *edge_count, const float *edges, int min_leaf,
                  best_split *best, unsigned long long *best_left)
{
    typedef cub::BlockScan<uint32_t, THREADS> scan_t;
    extern __shared__ uint32_t histogram[]; /* B x classes */
    __shared__ typename scan_t::TempStorage scan_storage;
    __shared__ unsigned long long totals[MAX_CLASSES];
    __shared__ vl_split_score reduce_score[THREADS];
    __shared__ int reduce_bin[THREADS];
    const int slot = blockIdx.x / m, C = class_count, tid = threadIdx.x;
    const int f = candidates[blockIdx.x];
    const int bins = edge_count[f] + 1;
    if (bins < 2) {
        if (tid == 0)
            best[blockIdx.x] = best_split{f, -1, 0, 0, 0, 0};
        return;
    }
    for (int k = tid; k < bins * C; k += THREADS)
        histogram[k] = 0;
    if (tid < C)
        totals[tid] = slot_totals[(int64_t)slot * C + tid];
    __syncthreads();
    const uint64_t *e = entries + slot_begin[slot];
    const int64_t count = slot_count[slot];
    const uint16_t *row = bins_fm + (int64_t)f * n;
    for (int64_t j = tid; j < count; j += THREADS) {
        const uint64_t entry = e[j];
        atomicAdd(&histogram[row[entry_sample(entry)] * C + entry_class(entry)], entry_weight(entry));
    }
    __syncthreads();
    /* thread tid owns bins [tid * BINS_PER_THREAD, ...); left counts before them by a block scan per class */
    const int first_bin = tid * BINS_PER_THREAD;
    uint32_t left[MAX_CLASSES];
    for (int c = 0; c < C; c++) {
        uint32_t own = 0;
        for (int b = first_bin; b < first_bin + BINS_PER_THREAD && b < bins; b++)
            own += histogram[b * C + c];
        scan_t(scan_storage).ExclusiveSum(own, left[c]);
        __syncthreads();
    }
    unsigned long long N = 0;
    vl_u128 S = 0;
    for (int c = 0; c < C; c++) {
        N += totals[c];
        S += (vl_u128)totals[c] * totals[c];
    }
    vl_split_score top = {S, N};
    int top_bin = -1;
    unsigned long long running[MAX_CLASSES];
    for (int c = 0; c < C; c++)
        running[c] = left[c];
    vl_forest_scan_bins(histogram, first_bin, first_bin + BINS_PER_THREAD, bins, C, totals, N, min_leaf, running, &top,
                        &top_bin);
    reduce_score[tid] = top;
    reduce_bin[tid] = top_bin;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (tid < half && ahead(reduce_score[tid + half], reduce_bin[tid + half], reduce_score[tid], reduce_bin[tid])) {
            reduce_score[tid] = reduce_score[tid + half];
            reduce_bin[tid] = reduce_bin[tid + half];
        }
        __syncthreads();
    }
    const int chosen = reduce_bin[0];
    unsigned long long *out_left = best_left + (int64_t)blockIdx.x * C;
    if (chosen >= 0 && chosen / BINS_PER_THREAD == tid) {
        /* left counts through the chosen bin; the centred bin makes the same partition */
        for (int b = first_bin; b <= chosen; b++)
            for (int c = 0; c < C; c++)
                left[c] += histogram[b * C + c];
        for (int c = 0; c < C; c++)
            out_left[c] = left[c];
        const vl_split_score s = reduce_score[0];
        best[blockIdx.x] = best_split{f, vl_forest_centre_bin(chosen, bins, edges + (int64_t)f * (B - 1), histogram, C),
                                      (unsigned long long)s.num, (unsigned long long)(s.num >> 64),
                                      (unsigned long long)s.den, (unsigned long long)(s.den >> 64)};
    }
    if (chosen < 0 && tid == 0)
        best[blockIdx.x] = best_split{f, -1, 0, 0, 0, 0};
}

/* 2: per slot, the first candidate with the best score that beats the parent (as the CPU scans candidates) */
__global__ void choose_kernel(const best_split *best, const unsigned long long *best_left,
                              const unsigned long long *slot_totals, int slots, int m, int class_count,
                              best_split *chosen, unsigned long long *chosen_left)
{
    const int slot = blockIdx.x * blockDim.x + threadIdx.x;
    if (slot >= slots)
        return;
    const int C = class_count;
    unsigned long long N = 0;
    vl_u128 S = 0;
    for (int c = 0; c < C; c++) {
        N += slot_totals[(int64_t)slot * C + c];
        S += (vl_u128)slot_totals[(int64_t)slot * C + c] * slot_totals[(int64_t)slot * C + c];
    }
    vl_split_score top = {S, N};
    int pick = -1;
    for (int k = 0; k < m; k++) {
        const best_split *b = &best[(int64_t)slot * m + k];
        if (b->bin >= 0 && vl_split_better(score_of(*b), top)) {
            top = score_of(*b);
            pick = k;
        }
    }
    if (pick < 0) {
        chosen[slot] = best_split{-1, -1, 0, 0, 0, 0};
        return;
    }
    chosen[slot] = best[(int64_t)slot * m + pick];
    for (int c = 0; c < C; c++)
        chosen_left[(int64_t)slot * C + c] = best_left[((int64_t)slot * m + pick) * C + c];
}

/* 4: block s moves the entries of split s within its range: bin <= split bin to the front, the rest to the
 * back; the number sent left to left_count[s] */
__global__ void __launch_bounds__(THREADS)
    partition_kernel(const uint64_t *from, uint64_t *to, const int64_t *split_begin, const int64_t *split_count,
                     const int32_t *split_feature, const int32_t *split_bin, const uint16_t *bins_fm, int64_t n,
                     int64_t *left_count)
{
    typedef cub::BlockScan<int, THREADS> scan_t;
    __shared__ typename scan_t::TempStorage scan_storage;
    const int s = blockIdx.x;
    const int64_t begin = split_begin[s], count = split_count[s];
    const uint16_t *row = bins_fm + (int64_t)split_feature[s] * n;
    const int bin = split_bin[s];
    int64_t lefts = 0, rights = 0;
    for (int64_t base = 0; base < count; base += THREADS) {
        const int64_t j = base + threadIdx.x;
        const uint64_t entry = j < count ? from[begin + j] : 0;
        const int goes_left = j < count && row[entry_sample(entry)] <= bin;
        int rank, chunk_lefts;
        scan_t(scan_storage).ExclusiveSum(goes_left, rank, chunk_lefts);
        __syncthreads();
        if (j < count) {
            if (goes_left)
                to[begin + lefts + rank] = entry;
            else
                to[begin + count - 1 - (rights + (threadIdx.x - rank))] = entry;
        }
        lefts += chunk_lefts;
        rights += (count - base < THREADS ? count - base : THREADS) - chunk_lefts;
    }
    if (threadIdx.x == 0)
        left_count[s] = lefts;
}

int blocks_for(int64_t n)
{
    const int64_t blocks = (n + THREADS - 1) / THREADS;
    return blocks > 65535 * 16 ? 65535 * 16 : blocks < 1 ? 1 : (int)blocks;
}

/* Reallocates a device buffer to at least `count` elements when it holds fewer. */
template <typename T> cudaError_t grow(T **buffer, size_t *capacity, size_t count)
{
    if (count <= *capacity)
        return cudaSuccess;
    cudaFree(*buffer);
    *buffer = NULL;
    *capacity = 0;
    const size_t grown = count < 2 * *capacity ? 2 * *capacity : count;
    const cudaError_t error = cudaMalloc(buffer, sizeof(T) * grown);
    if (error == cudaSuccess)
        *capacity = grown;
    return error;
}

/* Reallocates a host buffer to at least `count` elements; 0 when memory runs out. */
template <typename T> int grow_host(T **buffer, size_t *capacity, size_t count)
{
    if (count <= *capacity)
        return 1;
    const size_t grown = count < 2 * *capacity ? 2 * *capacity : count;
    T *bigger = (T *)realloc(*buffer, sizeof(T) * grown);
    if (!bigger)
        return 0;
    *buffer = bigger;
    *capacity = grown;
    return 1;
}

struct frontier_node {
    int tree, depth;
    int32_t id;
    int64_t begin, count; /* entry range */
};

/* Device buffers and their capacities. */
struct device_state {
    uint16_t *bins_fm;
    uint8_t *classes;
    int *edge_count;
    float *edges;
    uint32_t *weight;
    uint64_t *entries[2];
    unsigned long long *in_bag, *root_totals;
    int64_t *slot_begin, *slot_count, *left_count;
    int32_t *candidates, *split_feature, *split_bin;
    unsigned long long *slot_totals, *best_left, *chosen_left;
    best_split *best, *chosen;
    size_t cap_slots, cap_candidates, cap_slot_totals, cap_best_left, cap_best, cap_chosen, cap_chosen_left;
    size_t cap_splits[4];
};

void release(device_state *d)
{
    void *all[] = {d->bins_fm,     d->classes,    d->edge_count,  d->edges,         d->weight,
                   d->entries[0],  d->entries[1], d->in_bag,      d->root_totals,   d->slot_begin,
                   d->slot_count,  d->left_count, d->candidates,  d->split_feature, d->split_bin,
                   d->slot_totals, d->best_left,  d->chosen_left, d->best,          d->chosen};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        cudaFree(all[k]);
    memset(d, 0, sizeof *d);
}

/* Host copies of one level's arrays. */
struct host_state {
    frontier_node *frontier, *next;
    unsigned long long *totals, *next_totals, *slot_totals, *chosen_left;
    int64_t *slot_begin, *slot_count, *split_begin, *split_count, *left_count;
    int32_t *slot_of, *candidates, *split_feature, *split_bin;
    int64_t *tail; /* per tree of the group: the next node number (children numbered in breadth-first order) */
    best_split *chosen;
    int *scratch;
    size_t cap_frontier, cap_next, cap_totals, cap_next_totals, cap_slot_totals, cap_chosen_left, cap_slot_begin,
        cap_slot_count, cap_split_begin, cap_split_count, cap_left_count, cap_slot_of, cap_candidates,
        cap_split_feature, cap_split_bin, cap_chosen, cap_tail;
};

void release_host(host_state *h)
{
    void *all[] = {h->frontier,   h->next,        h->totals,      h->next_totals,   h->slot_totals,
                   h->chosen_left, h->slot_begin, h->slot_count,  h->split_begin,   h->split_count,
                   h->left_count, h->slot_of,     h->candidates,  h->split_feature, h->split_bin,
                   h->tail, h->chosen,     h->scratch};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        free(all[k]);
    memset(h, 0, sizeof *h);
}

#define CUDA(call)                                                                                                     \
    do {                                                                                                               \
        const cudaError_t error_ = (call);                                                                             \
        if (error_ != cudaSuccess)                                                                                     \
            return vl_cuda_failure(error_, "forest training");                                                         \
    } while (0)
#define HOST(ok)                                                                                                       \
    do {                                                                                                               \
        if (!(ok))                                                                                                     \
            return vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");                                         \
    } while (0)

/* The set on the device (feature-major), the per-tree buffers of `group` trees and the host scratch. */
vl_status setup(const vl_forest_binned *data, int64_t group, device_state *d, host_state *h)
{
    const int64_t n = data->samples;
    const int F = data->features, C = data->classes;
    HOST(h->scratch = (int *)malloc(sizeof(int) * (size_t)F));
    uint16_t *bins = NULL;
    CUDA(cudaMalloc(&bins, sizeof(uint16_t) * (size_t)n * F));
    cudaError_t error = vl_gpu_upload(bins, data->bins, sizeof(uint16_t) * (size_t)n * F);
    if (error == cudaSuccess)
        error = cudaMalloc(&d->bins_fm, sizeof(uint16_t) * (size_t)n * F);
    if (error == cudaSuccess) {
        transpose_kernel<<<blocks_for(n * F), THREADS>>>(bins, n, F, d->bins_fm);
        error = cudaDeviceSynchronize();
    }
    cudaFree(bins);
    CUDA(error);
    CUDA(cudaMalloc(&d->classes, (size_t)n));
    CUDA(cudaMemcpy(d->classes, data->classes_of, (size_t)n, cudaMemcpyHostToDevice));
    CUDA(cudaMalloc(&d->edge_count, sizeof(int) * (size_t)F));
    CUDA(cudaMemcpy(d->edge_count, data->edge_count, sizeof(int) * (size_t)F, cudaMemcpyHostToDevice));
    CUDA(cudaMalloc(&d->edges, sizeof(float) * (size_t)F * (B - 1)));
    CUDA(cudaMemcpy(d->edges, data->edges, sizeof(float) * (size_t)F * (B - 1), cudaMemcpyHostToDevice));
    CUDA(cudaMalloc(&d->weight, sizeof(uint32_t) * (size_t)n * (size_t)group));
    CUDA(cudaMalloc(&d->entries[0], sizeof(uint64_t) * (size_t)n * (size_t)group));
    CUDA(cudaMalloc(&d->entries[1], sizeof(uint64_t) * (size_t)n * (size_t)group));
    CUDA(cudaMalloc(&d->in_bag, sizeof(unsigned long long) * (size_t)group));
    CUDA(cudaMalloc(&d->root_totals, sizeof(unsigned long long) * (size_t)group * C));
    return VL_OK;
}

/* Grows trees [first, first + count), whose entries, weights and totals the device holds, level by level. */
vl_status grow_group(const vl_forest_binned *data, const vl_forest_plan *plan, int first, int count, device_state *d,
                     host_state *h, const vl_progress *progress, vl_tree *trees)
{
    const int64_t n = data->samples;
    const int F = data->features, C = data->classes, m = plan->candidates;
    const size_t u64 = sizeof(unsigned long long);
    CUDA(cudaMemset(d->weight, 0, sizeof(uint32_t) * (size_t)n * (size_t)count));
    CUDA(cudaMemset(d->in_bag, 0, u64 * (size_t)count));
    CUDA(cudaMemset(d->root_totals, 0, u64 * (size_t)count * (size_t)C));
    const int per_tree_blocks = blocks_for(n) < 65536 / count ? blocks_for(n) : 65536 / count;
    const dim3 grid((unsigned)(per_tree_blocks > 0 ? per_tree_blocks : 1), (unsigned)count);
    bootstrap_kernel<<<grid, THREADS>>>(plan->seed, plan->bootstrap, first, n, d->weight);
    CUDA(cudaGetLastError());
    entries_kernel<<<grid, THREADS>>>(d->weight, d->classes, n, C, d->entries[0], d->in_bag, d->root_totals);
    CUDA(cudaGetLastError());
    HOST(grow_host(&h->frontier, &h->cap_frontier, (size_t)count));
    HOST(grow_host(&h->totals, &h->cap_totals, (size_t)count * C));
    HOST(grow_host(&h->left_count, &h->cap_left_count, (size_t)count));
    CUDA(cudaMemcpy(h->totals, d->root_totals, u64 * (size_t)count * C, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(h->left_count, d->in_bag, u64 * (size_t)count, cudaMemcpyDeviceToHost));
    HOST(grow_host(&h->tail, &h->cap_tail, (size_t)count));
    for (int t = 0; t < count; t++) {
        h->frontier[t] = frontier_node{first + t, 0, 0, (int64_t)t * n, h->left_count[t]};
        h->tail[t] = 1;
    }
    int64_t frontier_count = count;
    int current = 0, level = 0;
    while (frontier_count > 0) {
        /* the nodes that search for a split, as slots */
        HOST(grow_host(&h->slot_of, &h->cap_slot_of, (size_t)frontier_count));
        HOST(grow_host(&h->slot_begin, &h->cap_slot_begin, (size_t)frontier_count));
        HOST(grow_host(&h->slot_count, &h->cap_slot_count, (size_t)frontier_count));
        HOST(grow_host(&h->slot_totals, &h->cap_slot_totals, (size_t)frontier_count * C));
        HOST(grow_host(&h->candidates, &h->cap_candidates, (size_t)frontier_count * m));
        int slots = 0;
        for (int64_t fi = 0; fi < frontier_count; fi++) {
            const frontier_node *node = &h->frontier[fi];
            const unsigned long long *tot = h->totals + fi * C;
            unsigned long long N = 0;
            int present = 0;
            for (int c = 0; c < C; c++) {
                N += tot[c];
                present += tot[c] > 0;
            }
            h->slot_of[fi] = -1;
            if (node->depth < plan->max_depth && present > 1 && N >= 2 * (unsigned long long)plan->min_leaf) {
                h->slot_of[fi] = slots;
                h->slot_begin[slots] = node->begin;
                h->slot_count[slots] = node->count;
                memcpy(h->slot_totals + (int64_t)slots * C, tot, u64 * C);
                int out[VL_FILTER_MAX_CHANNELS];
                vl_forest_candidates(plan, (uint32_t)node->tree, (uint32_t)node->id, F, h->scratch, out);
                memcpy(h->candidates + (int64_t)slots * m, out, sizeof(int) * (size_t)m);
                slots++;
            }
        }
        if (slots) {
            CUDA(grow(&d->slot_begin, &d->cap_slots, (size_t)slots));
            CUDA(grow(&d->slot_count, &d->cap_splits[0], (size_t)slots));
            CUDA(grow(&d->candidates, &d->cap_candidates, (size_t)slots * m));
            CUDA(grow(&d->slot_totals, &d->cap_slot_totals, (size_t)slots * C));
            CUDA(grow(&d->best, &d->cap_best, (size_t)slots * m));
            CUDA(grow(&d->best_left, &d->cap_best_left, (size_t)slots * m * C));
            CUDA(grow(&d->chosen, &d->cap_chosen, (size_t)slots));
            CUDA(grow(&d->chosen_left, &d->cap_chosen_left, (size_t)slots * C));
            CUDA(cudaMemcpy(d->slot_begin, h->slot_begin, sizeof(int64_t) * slots, cudaMemcpyHostToDevice));
            CUDA(cudaMemcpy(d->slot_count, h->slot_count, sizeof(int64_t) * slots, cudaMemcpyHostToDevice));
            CUDA(cudaMemcpy(d->candidates, h->candidates, sizeof(int32_t) * slots * m, cudaMemcpyHostToDevice));
            CUDA(cudaMemcpy(d->slot_totals, h->slot_totals, u64 * slots * C, cudaMemcpyHostToDevice));
            search_kernel<<<(unsigned)(slots * m), THREADS, sizeof(uint32_t) * B * C>>>(d->entries[current], d->slot_begin, d->slot_count,
                                                              d->candidates, d->slot_totals, m, C, d->bins_fm, n,
                                                              d->edge_count, d->edges, plan->min_leaf, d->best,
                                                              d->best_left);
            CUDA(cudaGetLastError());
            choose_kernel<<<(slots + THREADS - 1) / THREADS, THREADS>>>(d->best, d->best_left, d->slot_totals, slots,
                                                                          m, C, d->chosen, d->chosen_left);
            CUDA(cudaGetLastError());
            HOST(grow_host(&h->chosen, &h->cap_chosen, (size_t)slots));
            HOST(grow_host(&h->chosen_left, &h->cap_chosen_left, (size_t)slots * C));
            CUDA(cudaMemcpy(h->chosen, d->chosen, sizeof(best_split) * slots, cudaMemcpyDeviceToHost));
            CUDA(cudaMemcpy(h->chosen_left, d->chosen_left, u64 * slots * C, cudaMemcpyDeviceToHost));
        }
        /* decide every node in frontier order (per tree: breadth-first order); list the splits */
        HOST(grow_host(&h->split_begin, &h->cap_split_begin, (size_t)frontier_count));
        HOST(grow_host(&h->split_count, &h->cap_split_count, (size_t)frontier_count));
        HOST(grow_host(&h->split_feature, &h->cap_split_feature, (size_t)frontier_count));
        HOST(grow_host(&h->split_bin, &h->cap_split_bin, (size_t)frontier_count));
        HOST(grow_host(&h->next, &h->cap_next, (size_t)(2 * frontier_count)));
        HOST(grow_host(&h->next_totals, &h->cap_next_totals, (size_t)(2 * frontier_count) * C));
        int64_t splits = 0;
        for (int64_t fi = 0; fi < frontier_count; fi++) {
            const frontier_node node = h->frontier[fi];
            vl_tree *tree = &trees[node.tree];
            const unsigned long long *tot = h->totals + fi * C;
            unsigned long long N = 0;
            vl_u128 S = 0;
            double totals_d[VL_FOREST_MAX_CLASSES];
            for (int c = 0; c < C; c++) {
                N += tot[c];
                S += (vl_u128)tot[c] * tot[c];
                totals_d[c] = (double)tot[c];
            }
            const best_split *choice = h->slot_of[fi] >= 0 ? &h->chosen[h->slot_of[fi]] : NULL;
            if (!choice || choice->bin < 0) {
                int64_t leaf;
                HOST(vl_tree_push_leaf(tree, totals_d, C, &leaf) &&
                     vl_tree_push_node(tree, vl_forest_node{-1, 0.0f, (int32_t)leaf, -1}));
                continue;
            }
            const int f = choice->feature, bin = choice->bin;
            const vl_u128 num = (vl_u128)choice->num_hi << 64 | choice->num_lo,
                          den = (vl_u128)choice->den_hi << 64 | choice->den_lo;
            tree->importance[f] += (double)num / (double)den - (double)S / (double)N;
            const float threshold = data->edges[(int64_t)f * (VL_FOREST_MAX_BINS - 1) + bin];
            const int64_t t = node.tree - first;
            const int32_t left_id = (int32_t)h->tail[t]++, right_id = (int32_t)h->tail[t]++;
            h->split_begin[splits] = node.begin;
            h->split_count[splits] = node.count;
            h->split_feature[splits] = f;
            h->split_bin[splits] = bin;
            HOST(vl_tree_push_node(tree, vl_forest_node{f, threshold, left_id, right_id}));
            const unsigned long long *left = h->chosen_left + (int64_t)h->slot_of[fi] * C;
            for (int c = 0; c < C; c++) {
                h->next_totals[(2 * splits) * C + c] = left[c];
                h->next_totals[(2 * splits + 1) * C + c] = tot[c] - left[c];
            }
            h->next[2 * splits] = frontier_node{node.tree, node.depth + 1, left_id, node.begin, 0};
            h->next[2 * splits + 1] = frontier_node{node.tree, node.depth + 1, right_id, node.begin, 0};
            splits++;
        }
        if (splits) {
            CUDA(grow(&d->slot_begin, &d->cap_slots, (size_t)splits));
            CUDA(grow(&d->slot_count, &d->cap_splits[0], (size_t)splits));
            CUDA(grow(&d->split_feature, &d->cap_splits[1], (size_t)splits));
            CUDA(grow(&d->split_bin, &d->cap_splits[2], (size_t)splits));
            CUDA(grow(&d->left_count, &d->cap_splits[3], (size_t)splits));
            CUDA(cudaMemcpy(d->slot_begin, h->split_begin, sizeof(int64_t) * splits, cudaMemcpyHostToDevice));
            CUDA(cudaMemcpy(d->slot_count, h->split_count, sizeof(int64_t) * splits, cudaMemcpyHostToDevice));
            CUDA(cudaMemcpy(d->split_feature, h->split_feature, sizeof(int32_t) * splits, cudaMemcpyHostToDevice));
            CUDA(cudaMemcpy(d->split_bin, h->split_bin, sizeof(int32_t) * splits, cudaMemcpyHostToDevice));
            partition_kernel<<<(unsigned)splits, THREADS>>>(d->entries[current], d->entries[1 - current],
                                                            d->slot_begin, d->slot_count, d->split_feature,
                                                            d->split_bin, d->bins_fm, n, d->left_count);
            CUDA(cudaGetLastError());
            HOST(grow_host(&h->left_count, &h->cap_left_count, (size_t)splits));
            CUDA(cudaMemcpy(h->left_count, d->left_count, sizeof(int64_t) * splits, cudaMemcpyDeviceToHost));
            current = 1 - current;
        }
        for (int64_t s = 0; s < splits; s++) {
            h->next[2 * s].count = h->left_count[s];
            h->next[2 * s + 1].begin = h->split_begin[s] + h->left_count[s];
            h->next[2 * s + 1].count = h->split_count[s] - h->left_count[s];
        }
        frontier_node *swap_nodes = h->frontier;
        h->frontier = h->next;
        h->next = swap_nodes;
        size_t swap_cap = h->cap_frontier;
        h->cap_frontier = h->cap_next;
        h->cap_next = swap_cap;
        unsigned long long *swap_totals = h->totals;
        h->totals = h->next_totals;
        h->next_totals = swap_totals;
        swap_cap = h->cap_totals;
        h->cap_totals = h->cap_next_totals;
        h->cap_next_totals = swap_cap;
        frontier_count = 2 * splits;
        level++;
        /* a level's share of the group, as if every tree grew to the depth limit */
        vl_progress_report(progress, "training",
                           (first + count * (double)level / (plan->max_depth + 1)) / plan->trees);
    }
    return VL_OK;
}

} // namespace

vl_status vl_forest_train_gpu(const vl_forest_binned *data, const vl_forest_plan *plan, int gpu_index,
                              uint64_t chunk_samples, const vl_progress *progress, vl_tree *trees)
{
    (void)gpu_index; /* vl_device_run made it current */
    const int64_t n = data->samples;
    const int F = data->features, C = data->classes, T = plan->trees;
    size_t free_bytes = 0, total_bytes = 0;
    const cudaError_t info = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (info != cudaSuccess)
        return vl_cuda_failure(info, "forest training");
    /* resident: the feature-major set (and the sample-major one while transposing) and, per tree of a group,
     * its weights and two entry lists, within a quarter of free memory */
    const size_t set_bytes = (2 * sizeof(uint16_t) * (size_t)F + 1) * (size_t)n;
    const size_t per_tree = (sizeof(uint32_t) + 2 * sizeof(uint64_t)) * (size_t)n;
    if (C > MAX_CLASSES || n >= ((int64_t)1 << 31) || (chunk_samples && chunk_samples < (uint64_t)n) ||
        set_bytes + per_tree > free_bytes / 4)
        return vl_forest_train_gpu_streamed(data, plan, chunk_samples, progress, trees);
    int64_t group = (int64_t)((free_bytes / 4 - set_bytes) / per_tree);
    if (group > T)
        group = T;
    for (int t = 0; t < T; t++)
        if (!(trees[t].importance = (double *)calloc((size_t)F, sizeof(double))))
            return vl_fail(VL_ERR_MEMORY, "gpu training: out of host memory");
    device_state d;
    host_state h;
    memset(&d, 0, sizeof d);
    memset(&h, 0, sizeof h);
    vl_status status = setup(data, group, &d, &h);
    for (int first = 0; status == VL_OK && first < T; first += (int)group) {
        const int count = first + group < T ? (int)group : T - first;
        status = grow_group(data, plan, first, count, &d, &h, progress, trees);
        vl_progress_report(progress, "training", (double)(first + count) / T);
    }
    release(&d);
    release_host(&h);
    return status;
}
