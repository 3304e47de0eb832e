/* GPU prediction: the forest on the device, then slab by slab (whole x rows and y columns, as many z planes as the
 * feature budget allows) the slab's channels (cuda/filters, never the whole feature volume) and one thread per
 * voxel down every tree, as vl_forest_eval does on the CPU (the same float sums in tree order, the same argmax).
 * Only the channels that the trees test are computed (vl_gpu_filters_select). The trees go to the device packed
 * 8 bytes a node, siblings side by side; a forest that fits is walked from shared memory with the block's channels
 * beside it, a larger one through the read-only cache. A slab's results come back to one of
 * two pinned host buffers and the host copies them into place while the device works on the next slab; only the
 * outputs asked for come back. */
#include <cuda_pipeline.h>
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
/* Threads of a prediction block: reading the forest from global memory, nine blocks a multiprocessor (the walk
 * waits on memory: many threads hide it); from shared memory, two blocks of 256 (the forest and the block's
 * channels take about half a multiprocessor's shared memory each). */
const int GLOBAL_PREDICT_THREADS = 128;
const int SHARED_PREDICT_THREADS = 256;

/* A node packed in 8 bytes for the walk, the trees laid out again breadth first from each root so that siblings
 * are neighbours. An inner node: x the threshold's bits, y the feature in the low FEATURE_BITS and above them the
 * index in its tree of its children (left, right = left + 1). A leaf: x a quiet NaN whose payload is its leaf
 * index, so that `value <= threshold` is false for every value and the walk takes the right child, which y names
 * as the leaf itself (feature 0, children index one below the leaf's own): a step from a leaf stays on it, so
 * that the four trees of a thread step together without a test per tree. */
const int FEATURE_BITS = 9;
const uint32_t FEATURE_MASK = (1u << FEATURE_BITS) - 1;
const uint32_t LEAF_TAG = 0x7fc00000u;
const uint32_t LEAF_INDEX_MASK = (1u << 22) - 1;
const int64_t PACKED_INDEX_LIMIT = (int64_t)1 << (32 - FEATURE_BITS);
static_assert(VL_FILTER_MAX_CHANNELS <= (int)FEATURE_MASK + 1, "a feature index must fit FEATURE_BITS");
static_assert(PACKED_INDEX_LIMIT / 2 <= (int64_t)LEAF_INDEX_MASK + 1, "a tree's leaf indices must fit the payload");
/* The forest as predict_shared_kernel copies it into shared memory (shared_forest_image): the nodes, tree after tree
 * as packed, y re-encoded so that a step is one bitwise operation to the tested channel's address and one
 * shift-and-add to the children's: bits SHARED_FEATURE_SHIFT up hold the feature times the byte stride of the
 * block's channel columns (a channel is SHARED_PREDICT_THREADS floats), so that OR-ing in the voxel's column (its
 * byte offset, below that stride) addresses its value; bits SHARED_CHILD_SHIFT up hold the children's byte offset
 * from the tree's first slot. A leaf's payload is the index of its first class fraction in the whole forest. */
const int SHARED_FEATURE_SHIFT = 10;
const int SHARED_CHILD_SHIFT = 17;
const uint32_t SHARED_FEATURE_FIELD = (1u << SHARED_CHILD_SHIFT) - (1u << SHARED_FEATURE_SHIFT);
const int SHARED_MAX_FEATURES = 1 << (SHARED_CHILD_SHIFT - SHARED_FEATURE_SHIFT);
const int64_t SHARED_MAX_TREE_SLOTS = (int64_t)1 << (32 - SHARED_CHILD_SHIFT - 3);
static_assert(SHARED_PREDICT_THREADS * sizeof(float) == (1u << SHARED_FEATURE_SHIFT),
              "a channel column's stride must be the feature field's unit");

/* A slab's channels fit FEATURE_BUDGET, so a channel's offset from a voxel's first one fits 32 bits. */
static_assert(FEATURE_BUDGET / sizeof(float) < ((int64_t)1 << 32), "channel offsets must fit 32 bits");

__device__ __forceinline__ bool all_leaves(const uint2 (&node)[TREES_AT_ONCE])
{
    uint32_t x = LEAF_TAG;
#pragma unroll
    for (int u = 0; u < TREES_AT_ONCE; u++)
        x &= node[u].x;
    return x == LEAF_TAG;
}

/* Voxel i's probabilities (written when asked for) and class from its class sums over the trees (sum[c] for
 * c < N, then the probabilities buffer for the classes beyond): the same float operations as vl_forest_eval and
 * vl_forest_argmax, the sums divided by the tree count, ties to the lower class. */
template <int N>
__device__ __forceinline__ void finish_voxel(const float (&sum)[N], int classes, int trees, int64_t voxels, int64_t i,
                                             float *probabilities, uint8_t *class_map)
{
    int best = 0;
    float top = 0;
    for (int c = 0; c < classes; c++) {
        float p = 0;
#pragma unroll
        for (int k = 0; k < N; k++)
            if (k == c)
                p = sum[k];
        if (c >= N)
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

/* Voxel i down every tree, the forest and the channels read through the read-only cache (any forest): the class
 * fractions of its leaves summed in tree order, as the CPU's vl_forest_eval does. */
__device__ __forceinline__ void predict_voxel_global(const uint2 *nodes, const float *fractions,
                                                     const uint32_t *tree_start, const int64_t *tree_leaf_start,
                                                     int trees, int classes, const float *voxel, uint32_t stride,
                                                     int64_t voxels, int64_t i, float *probabilities,
                                                     uint8_t *class_map)
{
    float sum[REGISTER_CLASSES];
#pragma unroll
    for (int c = 0; c < REGISTER_CLASSES; c++)
        sum[c] = 0;
    for (int c = REGISTER_CLASSES; c < classes; c++)
        probabilities[c * voxels + i] = 0;
    for (int t0 = 0; t0 < trees; t0 += TREES_AT_ONCE) {
        uint32_t first[TREES_AT_ONCE]; /* the tree's first slot; its root is the next one */
        uint2 node[TREES_AT_ONCE];
#pragma unroll
        for (int u = 0; u < TREES_AT_ONCE; u++) {
            first[u] = __ldg(tree_start + (t0 + u < trees ? t0 + u : t0));
            node[u] = __ldg(nodes + first[u] + 1);
        }
        while (!all_leaves(node))
#pragma unroll
            for (int u = 0; u < TREES_AT_ONCE; u++) {
                const float v = voxel[(node[u].y & FEATURE_MASK) * stride];
                node[u] = __ldg(nodes + first[u] + (node[u].y >> FEATURE_BITS) +
                                (v <= __uint_as_float(node[u].x) ? 0 : 1));
            }
#pragma unroll
        for (int u = 0; u < TREES_AT_ONCE; u++) {
            if (t0 + u >= trees)
                break;
            const int64_t leaf = (__ldg(tree_leaf_start + t0 + u) + (node[u].x & LEAF_INDEX_MASK)) * classes;
#pragma unroll
            for (int c = 0; c < REGISTER_CLASSES; c++)
                if (c < classes)
                    sum[c] += __ldg(fractions + leaf + c);
            for (int c = REGISTER_CLASSES; c < classes; c++)
                probabilities[c * voxels + i] += __ldg(fractions + leaf + c);
        }
    }
    finish_voxel(sum, classes, trees, voxels, i, probabilities, class_map);
}

struct predict_args {
    const uint2 *forest;
    const uint32_t *tree_start;
    const float *leaf_values;
    const int64_t *tree_leaf_start;
    int trees, classes, features;
    const float *channels; /* channel after channel, `voxels` apart */
    int64_t voxels;
    float *probabilities;
    uint8_t *class_map;
};

/* One thread per voxel, the forest and the channels read from global memory: any forest. */
__global__ void __launch_bounds__(GLOBAL_PREDICT_THREADS, 9) predict_kernel(predict_args a)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.voxels; i += (int64_t)gridDim.x * blockDim.x) {
        predict_voxel_global(a.forest, a.leaf_values, a.tree_start, a.tree_leaf_start, a.trees, a.classes,
                             a.channels + i, (uint32_t)a.voxels, a.voxels, i, a.probabilities, a.class_map);
    }
}

/* The forest laid out for predict_shared_kernel, copied into a block's shared memory as it is (16-byte words): the
 * nodes (see SHARED_FEATURE_SHIFT), then each tree's first slot's byte offset (the trees padded to a multiple of
 * TREES_AT_ONCE with trees whose root is a leaf of zero fractions: adding 0 changes no sum), then the leaves' class
 * fractions (the zero leaf's last), each part starting on a word. */
struct shared_forest {
    const uint4 *image;
    int64_t words;             /* of the image */
    int64_t firsts, fractions; /* byte offsets of the parts */
    int groups;                /* of TREES_AT_ONCE trees */
};

static_assert(TREES_AT_ONCE == 4, "a group's first slots are one 16-byte read");

/* One thread per voxel, the forest (shared_forest) and the block's channels in shared memory: a block copies the
 * forest once, then for each run of SHARED_PREDICT_THREADS voxels their channels (coalesced), each voxel's channels
 * a column, so that the threads' reads fall in different banks. CLASSES: the forest's class count, at most
 * REGISTER_CLASSES (one kernel each: the sums take no test per class). */
template <int CLASSES>
__global__ void __launch_bounds__(SHARED_PREDICT_THREADS, 2) predict_shared_kernel(predict_args a, shared_forest f)
{
    extern __shared__ uint4 shared_image[];
    for (int64_t k = threadIdx.x; k < f.words; k += SHARED_PREDICT_THREADS)
        shared_image[k] = __ldg(f.image + k);
    const char *nodes = (const char *)shared_image;
    const uint4 *firsts = (const uint4 *)(nodes + f.firsts);
    const float *fractions = (const float *)(nodes + f.fractions);
    float *columns = (float *)(shared_image + f.words);
    for (int64_t run = blockIdx.x * (int64_t)SHARED_PREDICT_THREADS; run < a.voxels;
         run += (int64_t)gridDim.x * SHARED_PREDICT_THREADS) {
        const int64_t i = run + threadIdx.x;
        __syncthreads(); /* the previous run's walks are done with the columns (and the forest is in place) */
        /* copied without passing through registers, every channel's copy in flight at once */
        if (i < a.voxels) {
            for (int c = 0; c < a.features; c++)
                __pipeline_memcpy_async(columns + c * SHARED_PREDICT_THREADS + threadIdx.x,
                                        a.channels + c * a.voxels + i, sizeof(float));
            __pipeline_commit();
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        if (i >= a.voxels)
            continue;
        /* opaque to the compiler, so that a read ORs the channel's offset into the column's rather than computing
         * the address from the thread index again */
        uint32_t column = threadIdx.x * (uint32_t)sizeof(float);
        asm("" : "+r"(column));
        const char *values = (const char *)columns;
        float sum[CLASSES];
#pragma unroll
        for (int c = 0; c < CLASSES; c++)
            sum[c] = 0;
        for (int g = 0; g < f.groups; g++) {
            const uint4 group = firsts[g];
            const uint32_t first[TREES_AT_ONCE] = {group.x, group.y, group.z, group.w};
            uint2 node[TREES_AT_ONCE];
#pragma unroll
            for (int u = 0; u < TREES_AT_ONCE; u++)
                node[u] = *(const uint2 *)(nodes + first[u] + sizeof(uint2));
            while (!all_leaves(node))
#pragma unroll
                for (int u = 0; u < TREES_AT_ONCE; u++) {
                    const float v = *(const float *)(values + ((node[u].y & SHARED_FEATURE_FIELD) | column));
                    node[u] = *(const uint2 *)(nodes + first[u] + (node[u].y >> SHARED_CHILD_SHIFT) +
                                               (v <= __uint_as_float(node[u].x) ? 0u : (uint32_t)sizeof(uint2)));
                }
            /* the leaves' fractions added in tree order, as the CPU does */
#pragma unroll
            for (int u = 0; u < TREES_AT_ONCE; u++) {
                const float *leaf = fractions + (node[u].x & LEAF_INDEX_MASK);
#pragma unroll
                for (int c = 0; c < CLASSES; c++)
                    sum[c] += leaf[c];
            }
        }
        finish_voxel(sum, CLASSES, a.trees, a.voxels, i, a.probabilities, a.class_map);
    }
}

/* predict_shared_kernel for each class count up to REGISTER_CLASSES */
void (*const shared_kernels[])(predict_args, shared_forest) = {
    NULL, predict_shared_kernel<1>, predict_shared_kernel<2>, predict_shared_kernel<3>, predict_shared_kernel<4>,
    predict_shared_kernel<5>, predict_shared_kernel<6>, predict_shared_kernel<7>, predict_shared_kernel<8>};
static_assert(sizeof shared_kernels / sizeof shared_kernels[0] == REGISTER_CLASSES + 1,
              "a kernel for each class count");

/* Shared memory predict_shared_kernel needs for the forest and a block's channels; 0 when the forest has no shared
 * image or two blocks do not fit a multiprocessor (predict_kernel then reads the forest from global memory). */
size_t shared_predict_bytes(const shared_forest &f, int features, int device)
{
    int per_block = 0, per_multiprocessor = 0;
    if (f.words == 0 ||
        cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&per_multiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) !=
            cudaSuccess)
        return 0;
    const double bytes = (double)sizeof(uint4) * (double)f.words + 4.0 * (double)features * SHARED_PREDICT_THREADS;
    /* each block also holds 1 KiB the runtime reserves */
    return bytes <= per_block && 2 * (bytes + 1024) <= per_multiprocessor ? (size_t)bytes : 0;
}

struct device_forest {
    uint2 *packed;
    uint32_t *tree_start;
    int64_t *tree_leaf_start;
    float *leaf_values;
    shared_forest shared; /* words 0 (image NULL): none */
};

void device_forest_free(device_forest *d)
{
    cudaFree(d->packed);
    cudaFree(d->tree_start);
    cudaFree(d->tree_leaf_start);
    cudaFree(d->leaf_values);
    cudaFree((void *)d->shared.image);
}

/* The forest's trees packed (see FEATURE_BITS) breadth first from each root, so that the children of a node are
 * neighbours. Tree t takes count + 1 slots from tree_start[t]: an unused one, then its nodes, so that every leaf's
 * children index (its own slot less one) is a slot of the tree. 0 when a tree is not a tree (a node reached twice,
 * a child out of range, a NaN threshold) or exceeds the packing. */
int forest_pack(const vl_forest *f, uint2 *packed, uint32_t *tree_start, int32_t *order)
{
    for (int t = 0; t < f->tree_count; t++) {
        const vl_forest_node *tree = f->nodes + f->tree_node_start[t];
        const int64_t count = f->tree_node_start[t + 1] - f->tree_node_start[t];
        if (count < 1 || count + 1 >= PACKED_INDEX_LIMIT)
            return 0;
        tree_start[t] = (uint32_t)(f->tree_node_start[t] + t);
        uint2 *out = packed + tree_start[t];
        out[0] = make_uint2(0, 0);
        /* order[k]: the old index of the node in slot k + 1; a node's children get the next two slots */
        int64_t placed = 1;
        order[0] = 0;
        for (int64_t k = 0; k < placed; k++) {
            const vl_forest_node *n = &tree[order[k]];
            if (n->feature < 0) {
                if (n->left < 0 || n->left > (int32_t)LEAF_INDEX_MASK)
                    return 0;
                out[k + 1] = make_uint2(LEAF_TAG | (uint32_t)n->left, (uint32_t)k << FEATURE_BITS);
                continue;
            }
            if (n->feature > (int32_t)FEATURE_MASK || n->left < 0 || n->left >= count || n->right < 0 ||
                n->right >= count || placed + 2 > count || n->threshold != n->threshold)
                return 0;
            uint32_t bits;
            memcpy(&bits, &n->threshold, sizeof bits);
            out[k + 1] = make_uint2(bits, ((uint32_t)(placed + 1) << FEATURE_BITS) | (uint32_t)n->feature);
            order[placed++] = n->left;
            order[placed++] = n->right;
        }
    }
    return 1;
}

int64_t words_for(int64_t bytes) { return (bytes + (int64_t)sizeof(uint4) - 1) / (int64_t)sizeof(uint4); }

/* The shared image (see shared_forest) of the packed trees, in `image` (malloc'd; NULL, and sf->words 0, when the
 * forest does not fit the encoding: more than REGISTER_CLASSES classes, SHARED_MAX_FEATURES features or
 * SHARED_MAX_TREE_SLOTS slots a tree, or fractions beyond the leaf payload). 0 when out of memory. */
int shared_forest_image(const vl_forest *f, const uint2 *packed, const uint32_t *tree_start, int64_t slots,
                        uint4 **image, shared_forest *sf)
{
    const int C = f->class_count, trees = f->tree_count;
    const int64_t leaves = f->tree_leaf_start[trees];
    memset(sf, 0, sizeof *sf);
    *image = NULL;
    int64_t largest = 0;
    for (int t = 0; t < trees; t++)
        if (f->tree_node_start[t + 1] - f->tree_node_start[t] + 1 > largest)
            largest = f->tree_node_start[t + 1] - f->tree_node_start[t] + 1;
    if (C > REGISTER_CLASSES || f->feature_count > SHARED_MAX_FEATURES || largest > SHARED_MAX_TREE_SLOTS ||
        (leaves + 1) * C > (int64_t)LEAF_INDEX_MASK + 1)
        return 1;
    /* the padding trees: one of two slots (an unused one, then a leaf of the zero fractions) */
    const int64_t zero_tree = slots, zero_leaf = leaves * C;
    sf->groups = (trees + TREES_AT_ONCE - 1) / TREES_AT_ONCE;
    sf->firsts = sizeof(uint4) * words_for(sizeof(uint2) * (slots + 2));
    sf->fractions = sf->firsts + sizeof(uint4) * words_for(sizeof(uint32_t) * (int64_t)sf->groups * TREES_AT_ONCE);
    sf->words = sf->fractions / (int64_t)sizeof(uint4) + words_for(sizeof(float) * (leaves + 1) * C);
    *image = (uint4 *)calloc((size_t)sf->words, sizeof(uint4));
    if (!*image)
        return 0;
    uint2 *nodes = (uint2 *)*image;
    uint32_t *firsts = (uint32_t *)((char *)*image + sf->firsts);
    float *fractions = (float *)((char *)*image + sf->fractions);
    for (int t = 0; t < trees; t++) {
        const int64_t count = f->tree_node_start[t + 1] - f->tree_node_start[t];
        for (int64_t k = tree_start[t] + 1; k <= tree_start[t] + count; k++) {
            uint32_t x = packed[k].x;
            const uint32_t y = packed[k].y;
            if ((x & LEAF_TAG) == LEAF_TAG)
                x = LEAF_TAG | (uint32_t)((f->tree_leaf_start[t] + (x & LEAF_INDEX_MASK)) * C);
            nodes[k] = make_uint2(x, (y >> FEATURE_BITS) * (uint32_t)sizeof(uint2) << SHARED_CHILD_SHIFT |
                                         (y & FEATURE_MASK) << SHARED_FEATURE_SHIFT);
        }
    }
    nodes[zero_tree + 1] = make_uint2(LEAF_TAG | (uint32_t)zero_leaf, 0);
    for (int t = 0; t < sf->groups * TREES_AT_ONCE; t++)
        firsts[t] = (uint32_t)(sizeof(uint2) * (t < trees ? tree_start[t] : zero_tree));
    memcpy(fractions, f->leaf_values, sizeof(float) * (size_t)(leaves * C));
    return 1;
}

cudaError_t device_forest_upload(const vl_forest *f, device_forest *d, int *packable)
{
    memset(d, 0, sizeof *d);
    const int64_t nodes = f->tree_node_start[f->tree_count], leaves = f->tree_leaf_start[f->tree_count];
    const int64_t slots = nodes + f->tree_count;
    uint2 *packed = (uint2 *)malloc(sizeof(uint2) * (size_t)slots);
    uint32_t *tree_start = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)f->tree_count);
    int32_t *order = (int32_t *)malloc(sizeof(int32_t) * (size_t)nodes + 1);
    uint4 *image = NULL;
    cudaError_t error = packed && tree_start && order ? cudaSuccess : cudaErrorMemoryAllocation;
    *packable = error == cudaSuccess && slots < ((int64_t)1 << 32) && forest_pack(f, packed, tree_start, order);
    if (*packable && !shared_forest_image(f, packed, tree_start, slots, &image, &d->shared))
        error = cudaErrorMemoryAllocation;
    const size_t sizes[5] = {sizeof(uint2) * (size_t)slots, sizeof(uint32_t) * (size_t)f->tree_count,
                             sizeof(int64_t) * (size_t)(f->tree_count + 1),
                             sizeof(float) * (size_t)(leaves * f->class_count),
                             sizeof(uint4) * (size_t)d->shared.words};
    void **targets[5] = {(void **)&d->packed, (void **)&d->tree_start, (void **)&d->tree_leaf_start,
                         (void **)&d->leaf_values, (void **)&d->shared.image};
    const void *sources[5] = {packed, tree_start, f->tree_leaf_start, f->leaf_values, image};
    for (int k = 0; k < 5 && error == cudaSuccess && *packable; k++) {
        if (sizes[k] == 0)
            continue;
        error = cudaMalloc(targets[k], sizes[k]);
        if (error == cudaSuccess)
            error = cudaMemcpy(*targets[k], sources[k], sizes[k], cudaMemcpyHostToDevice);
    }
    free(packed);
    free(tree_start);
    free(order);
    free(image);
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
    predict_args base_args = {};
    size_t shared_bytes = 0; /* predict_shared_kernel's, or 0 to read the forest from global memory */
    unsigned shared_blocks = 0;
    void (*shared_kernel)(predict_args, shared_forest) = NULL;
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
    base_args = predict_args{d.packed, d.tree_start, d.leaf_values, d.tree_leaf_start,
                             forest->tree_count, C, F, channels, 0, probabilities, class_map};
    if ((shared_bytes = shared_predict_bytes(d.shared, F, device)) != 0) {
        int per_multiprocessor = 0, multiprocessors = 0;
        shared_kernel = shared_kernels[C];
        error = cudaFuncSetAttribute(shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_bytes);
        if (error == cudaSuccess)
            error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, shared_kernel,
                                                                  SHARED_PREDICT_THREADS, shared_bytes);
        if (error == cudaSuccess)
            error = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
        if (error != cudaSuccess) {
            status = vl_cuda_failure(error, "forest prediction in shared memory");
            goto done;
        }
        shared_blocks = (unsigned)((per_multiprocessor > 0 ? per_multiprocessor : 1) * multiprocessors);
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
            predict_args args = base_args;
            args.voxels = voxels;
            if (shared_bytes) {
                shared_kernel<<<shared_blocks, SHARED_PREDICT_THREADS, shared_bytes, stream>>>(args, d.shared);
            } else {
                const int64_t blocks = (voxels + GLOBAL_PREDICT_THREADS - 1) / GLOBAL_PREDICT_THREADS;
                predict_kernel<<<(unsigned)(blocks > 65535 * 16 ? 65535 * 16 : blocks), GLOBAL_PREDICT_THREADS, 0,
                                 stream>>>(args);
            }
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
