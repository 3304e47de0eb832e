/* GPU prediction: the forest on the device, then slab by slab (whole x rows and y columns, as many z planes as the
 * feature budget allows) the slab's channels (cuda/filters, never the whole feature volume) and one thread per
 * voxel down every tree, as vl_forest_eval does on the CPU (the same float sums in tree order, the same argmax).
 * Only the channels that the trees test are computed (vl_gpu_filters_select). The trees go to the device packed
 * 8 bytes a node, siblings side by side, read through the read-only cache. A slab's results come back to one of
 * two pinned host buffers and the host copies them into place while the device works on the next slab; only the
 * outputs asked for come back. */
#include <stdlib.h>
#include <string.h>

#include "core/cuda_check.h"
#include "filters/filters_gpu.cuh"
#include "forest/forest_internal.h"
#include "forest/forest_predict.h"

namespace {

/* Classes whose sums a thread keeps in registers; more classes sum in the output buffer. */
const int REGISTER_CLASSES = 8;
/* Device memory for a slab's channels (float32); the filters' intermediates of a slab take about as much again. */
const int64_t FEATURE_BUDGET = (int64_t)2 << 30;
/* Trees a thread walks at once: independent chains of loads, so one voxel's descent waits on memory less. */
const int TREES_AT_ONCE = 4;
/* Threads of a prediction block, nine blocks a multiprocessor (the walk waits on memory: many threads hide it). */
const int PREDICT_THREADS = 128;

/* A node packed in 8 bytes for the walk: x the threshold's bits; y the feature in the low FEATURE_BITS
 * (LEAF_FEATURE for a leaf) and above them, for an inner node, the index in its tree of its children (left, right
 * = left + 1: the trees are laid out again so that siblings are neighbours), for a leaf its leaf index. */
const int FEATURE_BITS = 9;
const uint32_t LEAF_FEATURE = (1u << FEATURE_BITS) - 1;
const int64_t PACKED_INDEX_LIMIT = (int64_t)1 << (32 - FEATURE_BITS);
static_assert(VL_FILTER_MAX_CHANNELS < (int)LEAF_FEATURE, "a feature index must fit below LEAF_FEATURE");
/* A slab's channels fit FEATURE_BUDGET, so a channel's offset from a voxel's first one fits 32 bits. */
static_assert(FEATURE_BUDGET / sizeof(float) < ((int64_t)1 << 32), "channel offsets must fit 32 bits");

__global__ void __launch_bounds__(PREDICT_THREADS, 9)
    predict_kernel(const uint2 *forest, const uint32_t *tree_start, const float *leaf_values,
                   const int64_t *tree_leaf_start, int trees, int classes, const float *channels, int64_t voxels,
                   float *probabilities, uint8_t *class_map)
{
    const uint32_t stride = (uint32_t)voxels; /* from one channel to the next */
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < voxels; i += (int64_t)gridDim.x * blockDim.x) {
        const float *mine = channels + i;
        float sum[REGISTER_CLASSES];
#pragma unroll
        for (int c = 0; c < REGISTER_CLASSES; c++)
            sum[c] = 0;
        for (int c = REGISTER_CLASSES; c < classes; c++)
            probabilities[c * voxels + i] = 0;
        for (int t0 = 0; t0 < trees; t0 += TREES_AT_ONCE) {
            uint32_t root[TREES_AT_ONCE];
            uint2 node[TREES_AT_ONCE];
#pragma unroll
            for (int u = 0; u < TREES_AT_ONCE; u++) {
                root[u] = __ldg(tree_start + (t0 + u < trees ? t0 + u : t0));
                node[u] = __ldg(forest + root[u]);
            }
            for (;;) {
                int walking = 0;
#pragma unroll
                for (int u = 0; u < TREES_AT_ONCE; u++) {
                    const uint32_t feature = node[u].y & LEAF_FEATURE;
                    if (feature != LEAF_FEATURE) {
                        const float v = mine[feature * stride];
                        node[u] = __ldg(forest + root[u] + (node[u].y >> FEATURE_BITS) +
                                        (v <= __uint_as_float(node[u].x) ? 0 : 1));
                        walking = 1;
                    }
                }
                if (!walking)
                    break;
            }
            /* the leaves' fractions added in tree order, as the CPU does */
#pragma unroll
            for (int u = 0; u < TREES_AT_ONCE; u++) {
                if (t0 + u >= trees)
                    break;
                const float *leaf = leaf_values + (__ldg(tree_leaf_start + t0 + u) + (node[u].y >> FEATURE_BITS)) * classes;
#pragma unroll
                for (int c = 0; c < REGISTER_CLASSES; c++)
                    if (c < classes)
                        sum[c] += __ldg(leaf + c);
                for (int c = REGISTER_CLASSES; c < classes; c++)
                    probabilities[c * voxels + i] += __ldg(leaf + c);
            }
        }
        /* the same float operations as vl_forest_eval and vl_forest_argmax: sums in tree order, then / trees */
        int best = 0;
        float top = 0;
        for (int c = 0; c < classes; c++) {
            float p = 0;
#pragma unroll
            for (int k = 0; k < REGISTER_CLASSES; k++)
                if (k == c)
                    p = sum[k];
            if (c >= REGISTER_CLASSES)
                p = probabilities[c * voxels + i];
            p /= (float)trees;
            if (probabilities)
                probabilities[c * voxels + i] = p;
            if (c == 0 || p > top) {
                best = c;
                top = p;
            }
        }
        class_map[i] = (uint8_t)(best + 1);
    }
}

struct device_forest {
    uint2 *packed;
    uint32_t *tree_start;
    int64_t *tree_leaf_start;
    float *leaf_values;
    int64_t nodes;
};

void device_forest_free(device_forest *d)
{
    cudaFree(d->packed);
    cudaFree(d->tree_start);
    cudaFree(d->tree_leaf_start);
    cudaFree(d->leaf_values);
}

/* The forest's trees packed (see FEATURE_BITS) breadth first from each root, so that the children of a node are
 * neighbours; 0 when a tree is not a tree (a node reached twice, a child out of range) or exceeds the packing. */
int forest_pack(const vl_forest *f, uint2 *packed, uint32_t *tree_start, int32_t *order)
{
    for (int t = 0; t < f->tree_count; t++) {
        const vl_forest_node *tree = f->nodes + f->tree_node_start[t];
        const int64_t count = f->tree_node_start[t + 1] - f->tree_node_start[t];
        if (count < 1 || count >= PACKED_INDEX_LIMIT)
            return 0;
        uint2 *out = packed + f->tree_node_start[t];
        tree_start[t] = (uint32_t)f->tree_node_start[t];
        /* order[k]: the old index of new node k; a node's children get the next two new indices */
        int64_t placed = 1;
        order[0] = 0;
        for (int64_t k = 0; k < placed; k++) {
            const vl_forest_node *n = &tree[order[k]];
            if (n->feature < 0) {
                if (n->left < 0 || n->left >= PACKED_INDEX_LIMIT)
                    return 0;
                out[k] = make_uint2(0, ((uint32_t)n->left << FEATURE_BITS) | LEAF_FEATURE);
                continue;
            }
            if (n->feature >= (int32_t)LEAF_FEATURE || n->left < 0 || n->left >= count || n->right < 0 ||
                n->right >= count || placed + 2 > count)
                return 0;
            uint32_t bits;
            memcpy(&bits, &n->threshold, sizeof bits);
            out[k] = make_uint2(bits, ((uint32_t)placed << FEATURE_BITS) | (uint32_t)n->feature);
            order[placed++] = n->left;
            order[placed++] = n->right;
        }
    }
    tree_start[f->tree_count] = (uint32_t)f->tree_node_start[f->tree_count];
    return 1;
}

cudaError_t device_forest_upload(const vl_forest *f, device_forest *d, int *packable)
{
    memset(d, 0, sizeof *d);
    const int64_t nodes = f->tree_node_start[f->tree_count], leaves = f->tree_leaf_start[f->tree_count];
    d->nodes = nodes;
    uint2 *packed = (uint2 *)malloc(sizeof(uint2) * (size_t)nodes + 1);
    uint32_t *tree_start = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(f->tree_count + 1));
    int32_t *order = (int32_t *)malloc(sizeof(int32_t) * (size_t)nodes + 1);
    cudaError_t error = packed && tree_start && order ? cudaSuccess : cudaErrorMemoryAllocation;
    *packable = error == cudaSuccess && nodes < ((int64_t)1 << 32) && forest_pack(f, packed, tree_start, order);
    const size_t sizes[4] = {sizeof(uint2) * (size_t)nodes, sizeof(uint32_t) * (size_t)(f->tree_count + 1),
                             sizeof(int64_t) * (size_t)(f->tree_count + 1),
                             sizeof(float) * (size_t)(leaves * f->class_count)};
    void **targets[4] = {(void **)&d->packed, (void **)&d->tree_start, (void **)&d->tree_leaf_start,
                         (void **)&d->leaf_values};
    const void *sources[4] = {packed, tree_start, f->tree_leaf_start, f->leaf_values};
    for (int k = 0; k < 4 && error == cudaSuccess && *packable; k++) {
        error = cudaMalloc(targets[k], sizes[k]);
        if (error == cudaSuccess)
            error = cudaMemcpy(*targets[k], sources[k], sizes[k], cudaMemcpyHostToDevice);
    }
    free(packed);
    free(tree_start);
    free(order);
    return error;
}

} // namespace

vl_status vl_forest_predict_gpu(vl_forest_prediction *p)
{
    const vl_forest *forest = p->forest;
    const vl_volume *image = p->image;
    const int F = forest->feature_count, C = forest->class_count;
    /* slabs: whole rows, whole planes when they fit the budget, as many planes as fit */
    const int64_t per_row = image->nx * (int64_t)F * (int64_t)sizeof(float);
    int64_t edge[3] = {image->nx, image->ny, 1}, count[3];
    if (per_row * image->ny > FEATURE_BUDGET)
        edge[1] = FEATURE_BUDGET / per_row > 1 ? FEATURE_BUDGET / per_row : 1;
    else
        edge[2] = FEATURE_BUDGET / (per_row * image->ny) < image->nz ? FEATURE_BUDGET / (per_row * image->ny) : image->nz;
    for (int a = 0; a < 3; a++)
        count[a] = (((a == 0 ? image->nx : a == 1 ? image->ny : image->nz)) + edge[a] - 1) / edge[a];
    const int64_t tile_voxels = edge[0] * edge[1] * edge[2];
    const int64_t total_tiles = count[0] * count[1] * count[2];
    device_forest d;
    vl_gpu_filters *filters = NULL;
    float *channels = NULL, *probabilities = NULL, *host_probabilities[2] = {NULL, NULL};
    uint8_t *class_map = NULL, *host_class_map[2] = {NULL, NULL};
    cudaStream_t stream = NULL;
    cudaEvent_t copied[2] = {NULL, NULL};
    vl_box boxes[2];
    int64_t pending = -1; /* the tile whose results are on their way to the host, or -1 */
    vl_status status = VL_OK;
    /* the filters allocate their intermediates from the stream-ordered pool slab after slab: the pool keeps them
     * between slabs and gives them back at the end */
    cudaMemPool_t pool = NULL;
    int device = 0;
    uint64_t keep = UINT64_MAX;
    cudaError_t error = cudaGetDevice(&device);
    if (error == cudaSuccess)
        error = cudaDeviceGetDefaultMemPool(&pool, device);
    if (error == cudaSuccess)
        error = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    int packable = 0;
    if (error == cudaSuccess)
        error = device_forest_upload(forest, &d, &packable);
    if (error == cudaSuccess)
        error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (error == cudaSuccess)
        error = cudaMalloc(&channels, sizeof(float) * (size_t)tile_voxels * (size_t)F);
    if (error == cudaSuccess && (p->probabilities || C > REGISTER_CLASSES))
        error = cudaMalloc(&probabilities, sizeof(float) * (size_t)tile_voxels * (size_t)C);
    if (error == cudaSuccess)
        error = cudaMalloc(&class_map, (size_t)tile_voxels);
    for (int b = 0; b < 2; b++) {
        if (error == cudaSuccess && p->probabilities)
            error = cudaMallocHost(&host_probabilities[b], sizeof(float) * (size_t)tile_voxels * (size_t)C);
        if (error == cudaSuccess && p->class_map)
            error = cudaMallocHost(&host_class_map[b], (size_t)tile_voxels);
        if (error == cudaSuccess)
            error = cudaEventCreateWithFlags(&copied[b], cudaEventDisableTiming);
    }
    if (error != cudaSuccess) {
        status = vl_cuda_failure(error, "forest prediction buffers");
        goto done;
    }
    if (!packable) {
        status = vl_fail(VL_ERR_INPUT, "forest prediction: a tree of the model is malformed or has more than %lld "
                         "nodes", (long long)PACKED_INDEX_LIMIT - 1);
        goto done;
    }
    if ((status = vl_gpu_filters_create(image, &forest->bank, &filters)) != VL_OK)
        goto done;
    {
        /* only the channels the trees test */
        uint8_t tested[VL_FILTER_MAX_CHANNELS] = {0};
        for (int64_t k = 0; k < forest->tree_node_start[forest->tree_count]; k++)
            if (forest->nodes[k].feature >= 0 && forest->nodes[k].feature < F)
                tested[forest->nodes[k].feature] = 1;
        vl_gpu_filters_select(filters, tested);
    }
    for (int64_t t = 0; t <= total_tiles; t++) {
        const int b = (int)(t & 1);
        const int64_t n[3] = {image->nx, image->ny, image->nz};
        if (t < total_tiles) {
            vl_box *box = &boxes[b];
            int64_t rest = t;
            for (int a = 0; a < 3; a++) {
                const int64_t k = rest % count[a];
                rest /= count[a];
                box->lo[a] = k * edge[a];
                box->hi[a] = box->lo[a] + edge[a] < n[a] ? box->lo[a] + edge[a] : n[a];
            }
            const int64_t voxels = (box->hi[0] - box->lo[0]) * (box->hi[1] - box->lo[1]) * (box->hi[2] - box->lo[2]);
            if ((status = vl_gpu_filters_box(filters, box, channels, stream, p->options->gpu_pass_planes)) != VL_OK)
                goto done;
            const int64_t blocks = (voxels + PREDICT_THREADS - 1) / PREDICT_THREADS;
            predict_kernel<<<(unsigned)(blocks > 65535 * 16 ? 65535 * 16 : blocks), PREDICT_THREADS, 0, stream>>>(
                d.packed, d.tree_start, d.leaf_values, d.tree_leaf_start, forest->tree_count, C, channels, voxels,
                probabilities, class_map);
            error = cudaGetLastError();
            if (error == cudaSuccess && p->probabilities)
                error = cudaMemcpyAsync(host_probabilities[b], probabilities, sizeof(float) * (size_t)(voxels * C),
                                        cudaMemcpyDeviceToHost, stream);
            if (error == cudaSuccess && p->class_map)
                error = cudaMemcpyAsync(host_class_map[b], class_map, (size_t)voxels, cudaMemcpyDeviceToHost, stream);
            if (error == cudaSuccess)
                error = cudaEventRecord(copied[b], stream);
            if (error != cudaSuccess) {
                status = vl_cuda_failure(error, "forest prediction on a tile");
                goto done;
            }
        }
        /* meanwhile, the previous tile's results into place */
        if (pending >= 0) {
            const int pb = 1 - b;
            const vl_box *box = &boxes[pb];
            if ((error = cudaEventSynchronize(copied[pb])) != cudaSuccess) {
                status = vl_cuda_failure(error, "forest prediction on a tile");
                goto done;
            }
            const int64_t bx = box->hi[0] - box->lo[0], by = box->hi[1] - box->lo[1];
            const int64_t voxels = bx * by * (box->hi[2] - box->lo[2]);
            for (int64_t z = box->lo[2], i = 0; z < box->hi[2]; z++)
                for (int64_t y = box->lo[1]; y < box->hi[1]; y++, i += bx) {
                    const int64_t v = box->lo[0] + n[0] * (y + n[1] * z);
                    if (p->probabilities)
                        for (int c = 0; c < C; c++)
                            memcpy(p->probabilities[c] + v, host_probabilities[pb] + c * voxels + i,
                                   sizeof(float) * (size_t)bx);
                    if (p->class_map)
                        memcpy(p->class_map + v, host_class_map[pb] + i, (size_t)bx);
                }
            vl_progress_report(&p->options->progress, "classifying", (double)(pending + 1) / (double)total_tiles);
        }
        pending = t < total_tiles ? t : -1;
    }
done:
    vl_gpu_filters_destroy(filters);
    device_forest_free(&d);
    cudaFree(channels);
    cudaFree(probabilities);
    cudaFree(class_map);
    for (int b = 0; b < 2; b++) {
        cudaFreeHost(host_probabilities[b]);
        cudaFreeHost(host_class_map[b]);
        if (copied[b])
            cudaEventDestroy(copied[b]);
    }
    if (stream)
        cudaStreamDestroy(stream);
    if (pool) {
        uint64_t none = 0;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &none);
        cudaMemPoolTrimTo(pool, 0);
    }
    return status;
}
