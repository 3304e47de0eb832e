/* Labelling in z-slabs: label each slab, join the faces between slabs, renumber once.
 *
 * Why the numbering comes out right: slab s's labels 1..n_s get the provisional ids base_s .. base_s+n_s-1,
 * so ids sort by (slab, label in slab). Under `matlab` and `matlab-xy` a slab's own labels sort by the
 * minimum key of their voxels, and every key in a lower slab is smaller than every key in a higher one,
 * so ids sort exactly like the minimum keys of the pieces they name. A component's minimum key is then
 * that of its smallest id, and uniting toward the smaller id leaves each component rooted at it: the
 * roots in id order are the components in key order. The `size` order (slabs in `matlab` order) and the
 * `size-raster` order (slabs in `matlab-xy` order) sort those by size afterwards, a tie keeping the key order. */
#include <stdlib.h>
#include <string.h>

#include "label/label_slabs.h"
#include "core/parallel.h"
#include "label/size_rank.h"
#include "voxlabel/error.h"
#include "label/union_find.h"

typedef struct slab {
    int64_t z0, depth;
    uint64_t base; /* provisional id of the slab's label 1 */
} slab;

/* Provisional ids and their voxel counts, slab after slab. */
typedef struct slab_table {
    slab *slabs;
    int64_t count, capacity;
    uint64_t *sizes;
    uint32_t *classes; /* multilabel: the class of every id */
    uint64_t ids, size_capacity;
} slab_table;

static void slab_table_free(slab_table *table)
{
    free(table->slabs);
    free(table->sizes);
    free(table->classes);
    memset(table, 0, sizeof *table);
}

static vl_status slab_table_append(slab_table *table, int64_t z0, int64_t depth, uint32_t count, const uint64_t *sizes,
                                   const uint32_t *classes)
{
    if (table->ids + count >= UINT32_MAX)
        return vl_fail(VL_ERR_MEMORY, "label: the slabs hold more than 2^32-1 pieces of components");
    if (table->count == table->capacity) {
        int64_t capacity = table->capacity ? 2 * table->capacity : 16;
        slab *grown = realloc(table->slabs, (size_t)capacity * sizeof *grown);
        if (!grown)
            return vl_fail(VL_ERR_MEMORY, "label: no memory for the slab table");
        table->slabs = grown, table->capacity = capacity;
    }
    if (table->ids + count > table->size_capacity) {
        uint64_t capacity = 2 * (table->ids + count);
        uint64_t *grown = realloc(table->sizes, (size_t)capacity * sizeof *grown);
        if (grown)
            table->sizes = grown;
        uint32_t *grown_classes = NULL;
        if (grown && classes && (grown_classes = realloc(table->classes, (size_t)capacity * sizeof *grown_classes)))
            table->classes = grown_classes;
        if (!grown || (classes && !grown_classes))
            return vl_fail(VL_ERR_MEMORY, "label: no memory for the sizes of %llu pieces of components",
                           (unsigned long long)(table->ids + count));
        table->size_capacity = capacity;
    }
    table->slabs[table->count++] = (slab){z0, depth, table->ids};
    if (count)
        memcpy(table->sizes + table->ids, sizes, count * sizeof *sizes);
    if (count && classes)
        memcpy(table->classes + table->ids, classes, count * sizeof *classes);
    table->ids += count;
    return VL_OK;
}

/* The in-slice steps (dx, dy) from a voxel to its neighbours in the slice below. */
static int steps_below(int connectivity, int steps[9][2])
{
    int count = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            const int reach = (dx != 0) + (dy != 0) + 1; /* axes changed, dz included */
            if ((connectivity == 6 && reach <= 1) || (connectivity == 18 && reach <= 2) || connectivity == 26) {
                steps[count][0] = dx;
                steps[count][1] = dy;
                count++;
            }
        }
    return count; /* 0 for 4 and 8: slices are labelled on their own */
}

/* Unites every piece on slab `s`'s first slice with the pieces of the slice below it that it touches; for a
 * class map (table->classes set) only pieces of the same class. */
static void join_face(uint32_t *parent, const vl_volume *labels, const slab_table *table, const slab *below,
                      const slab *above, int steps[9][2], int step_count)
{
    const int64_t nx = labels->nx, ny = labels->ny, slice = nx * ny;
    const uint32_t *lower = (const uint32_t *)labels->data + (above->z0 - 1) * slice;
    const uint32_t *upper = (const uint32_t *)labels->data + above->z0 * slice;
    const uint32_t *classes = table->classes;
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            const uint32_t a = upper[x + nx * y];
            if (!a)
                continue;
            const uint64_t id_a = above->base + a - 1;
            for (int n = 0; n < step_count; n++) {
                const int64_t xb = x + steps[n][0], yb = y + steps[n][1];
                if (xb < 0 || xb >= nx || yb < 0 || yb >= ny)
                    continue;
                const uint32_t b = lower[xb + nx * yb];
                if (!b)
                    continue;
                const uint64_t id_b = below->base + b - 1;
                if (!classes || classes[id_b] == classes[id_a])
                    vl_unite(parent, (uint32_t)id_a, (uint32_t)id_b);
            }
        }
}

/* parent[id] := final label of id (1..N) in place, result->sizes of the N components. Ids are visited in
 * ascending order and every non-root points at a smaller id, whose final label is then already stored. */
static vl_status number_components(uint32_t *parent, const slab_table *table, vl_label_order order,
                                   vl_label_result *result)
{
    uint32_t components = 0;
    for (uint64_t id = 0; id < table->ids; id++)
        components += parent[id] == id;
    result->sizes = calloc((size_t)components + 1, sizeof *result->sizes);
    if (table->classes)
        result->classes = malloc(((size_t)components + 1) * sizeof *result->classes);
    if (!result->sizes || (table->classes && !result->classes))
        return vl_fail(VL_ERR_MEMORY, "label: no memory for the sizes of %u components", components);
    uint32_t next = 0;
    for (uint64_t id = 0; id < table->ids; id++) {
        parent[id] = parent[id] == id ? ++next : parent[parent[id]];
        result->sizes[parent[id] - 1] += table->sizes[id];
        if (table->classes)
            result->classes[parent[id] - 1] = table->classes[id];
    }
    result->count = components;
    if (!vl_label_order_by_size(order) || components == 0)
        return VL_OK;
    vl_ranked_label *ranked = malloc((size_t)components * sizeof *ranked);
    uint32_t *rank = malloc(((size_t)components + 1) * sizeof *rank);
    if (!ranked || !rank) {
        free(ranked);
        free(rank);
        return vl_fail(VL_ERR_MEMORY, "label: no memory to order %u components by size", components);
    }
    for (uint32_t k = 0; k < components; k++)
        ranked[k] = (vl_ranked_label){result->sizes[k], k + 1};
    qsort(ranked, components, sizeof *ranked, vl_compare_larger_first);
    uint32_t *classes = table->classes ? malloc(((size_t)components + 1) * sizeof *classes) : NULL;
    if (table->classes && !classes) {
        free(ranked);
        free(rank);
        return vl_fail(VL_ERR_MEMORY, "label: no memory to order %u components by size", components);
    }
    for (uint32_t position = 0; position < components; position++) {
        rank[ranked[position].label] = position + 1;
        result->sizes[position] = ranked[position].size;
        if (classes)
            classes[position] = result->classes[ranked[position].label - 1];
    }
    if (classes) {
        free(result->classes);
        result->classes = classes;
    }
    for (uint64_t id = 0; id < table->ids; id++)
        parent[id] = rank[parent[id]];
    free(ranked);
    free(rank);
    return VL_OK;
}

typedef struct renumber_job {
    uint32_t *labels;
    const uint32_t *final_label;
    const slab_table *table;
    int64_t slice, z_begin, z_end;
} renumber_job;

static void *renumber_slices(void *argument)
{
    const renumber_job *job = argument;
    int64_t s = 0;
    for (int64_t z = job->z_begin; z < job->z_end; z++) {
        while (z >= job->table->slabs[s].z0 + job->table->slabs[s].depth)
            s++;
        const uint64_t first = job->table->slabs[s].base;
        uint32_t *voxel = job->labels + z * job->slice;
        for (int64_t i = 0; i < job->slice; i++)
            if (voxel[i])
                voxel[i] = job->final_label[first + voxel[i] - 1];
    }
    return NULL;
}

static vl_status merge_slabs(const slab_table *table, int connectivity, vl_label_order order, int threads,
                             vl_volume *labels, vl_label_result *result)
{
    uint32_t *parent = malloc(((size_t)table->ids + 1) * sizeof *parent);
    if (!parent)
        return vl_fail(VL_ERR_MEMORY, "label: no memory to join %llu pieces of components",
                       (unsigned long long)table->ids);
    for (uint64_t id = 0; id < table->ids; id++)
        parent[id] = (uint32_t)id;
    int steps[9][2];
    const int step_count = steps_below(connectivity, steps);
    for (int64_t s = 1; s < table->count && step_count; s++)
        join_face(parent, labels, table, &table->slabs[s - 1], &table->slabs[s], steps, step_count);
    vl_status status = number_components(parent, table, order, result);
    if (status == VL_OK) {
        threads = vl_cpu_thread_count(threads);
        if (threads > labels->nz)
            threads = (int)labels->nz;
        renumber_job jobs[VL_MAX_THREADS];
        for (int t = 0; t < threads; t++)
            jobs[t] = (renumber_job){labels->data, parent, table, labels->nx * labels->ny,
                                     labels->nz * t / threads, labels->nz * (t + 1) / threads};
        vl_run_parallel(renumber_slices, jobs, sizeof jobs[0], threads);
    }
    free(parent);
    return status;
}

vl_status vl_label_in_slabs(const vl_volume *mask, int multilabel, vl_volume *labels, const vl_label_options *options,
                            int64_t depth, vl_slab_labeller label_slab, void *context, vl_label_result *result,
                            int64_t *slabs)
{
    memset(result, 0, sizeof *result);
    *slabs = 0;
    if (depth < 1)
        depth = 1;
    vl_status status = vl_volume_create_uninitialised(labels, mask->nx, mask->ny, mask->nz, VL_U32);
    if (status != VL_OK)
        return status;
    labels->geometry = mask->geometry;
    const int64_t slice = mask->nx * mask->ny;
    /* Slabs are numbered in an order whose ids sort like keys; `size` and `size-raster` sort after the merge. */
    const vl_label_order slab_order = vl_label_order_is_raster(options->order) ? VL_ORDER_MATLAB_XY : VL_ORDER_MATLAB;
    slab_table table = {0};
    for (int64_t z0 = 0; z0 < mask->nz;) {
        const int64_t d = depth < mask->nz - z0 ? depth : mask->nz - z0;
        const int whole = z0 == 0 && d == mask->nz;
        vl_volume view = *mask;
        view.nz = d;
        view.data = (char *)mask->data + z0 * slice * (int64_t)vl_dtype_size(mask->dtype);
        uint32_t count = 0;
        uint64_t *sizes = NULL;
        uint32_t *classes = NULL;
        status = label_slab(context, &view, (uint32_t *)labels->data + z0 * slice, whole ? options->order : slab_order,
                            &count, &sizes, multilabel ? &classes : NULL);
        if (status == VL_ERR_MEMORY && d > 1) {
            depth = d / 2;
            continue;
        }
        if (status == VL_OK && whole) {
            result->count = count;
            result->sizes = sizes;
            result->classes = classes;
            *slabs = 1;
            return VL_OK;
        }
        if (status == VL_OK)
            status = slab_table_append(&table, z0, d, count, sizes, classes);
        free(sizes);
        free(classes);
        if (status != VL_OK)
            break;
        z0 += d;
        vl_progress_report(&options->progress, "labelling in z-slabs", (double)z0 / (double)mask->nz);
    }
    if (status == VL_OK)
        status = merge_slabs(&table, options->connectivity, options->order, options->threads, labels, result);
    *slabs = table.count;
    slab_table_free(&table);
    if (status != VL_OK) {
        vl_label_result_free(result);
        vl_volume_free(labels);
    }
    return status;
}
