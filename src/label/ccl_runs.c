/* Run table of the CPU labeller: cutting rows into runs, numbering components, writing labels. */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "label/ccl_runs.h"
#include "core/memory.h"
#include "label/size_rank.h"
#include "voxlabel/error.h"

/* ---- extraction ---------------------------------------------------------------------------------- */

/* Rows are read 64 voxels at a time as a bit mask of foreground voxels (SSE2 compares where available).
 * A run starts at a set bit whose left neighbour is clear and ends at a set bit whose right neighbour is
 * clear; starts and ends come in the same order, so the k-th start and the k-th end are run k, and both are
 * found with bit scans instead of a branch per voxel (noise masks have runs of about two voxels). */
static uint64_t foreground_bits(const uint8_t *p)
{
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    uint64_t bits = 0;
    for (int k = 0; k < 4; k++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        const uint32_t is_zero = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero));
        bits |= (uint64_t)(~is_zero & 0xFFFFu) << (16 * k);
    }
    return bits;
#else
    uint64_t bits = 0;
    for (int k = 0; k < 64; k++)
        bits |= (uint64_t)(p[k] != 0) << k;
    return bits;
#endif
}

/* Foreground bits of voxels base..base+63 of a row; voxels past the row's end read as background. */
static uint64_t chunk_bits(const uint8_t *row, int64_t nx, int64_t base)
{
    if (base + 64 <= nx)
        return foreground_bits(row + base);
    uint8_t tail[64] = {0};
    memcpy(tail, row + base, (size_t)(nx - base));
    return foreground_bits(tail);
}

static uint32_t count_runs(const uint8_t *row, int64_t nx)
{
    uint32_t count = 0;
    uint64_t carry = 0; /* 1 when the voxel left of this chunk is foreground */
    for (int64_t base = 0; base < nx; base += 64) {
        const uint64_t bits = chunk_bits(row, nx, base);
        count += (uint32_t)__builtin_popcountll(bits & ~((bits << 1) | carry));
        carry = bits >> 63;
    }
    return count;
}

/* Writes the runs of one row at x0/x1. */
static void cut_row(const uint8_t *row, int64_t nx, uint32_t *x0, uint32_t *x1)
{
    uint32_t starts_found = 0, ends_found = 0;
    uint64_t carry = 0, bits = nx > 0 ? chunk_bits(row, nx, 0) : 0;
    for (int64_t base = 0; base < nx; base += 64) {
        const uint64_t next = base + 64 < nx ? chunk_bits(row, nx, base + 64) : 0;
        uint64_t starts = bits & ~((bits << 1) | carry);
        uint64_t ends = bits & ~((bits >> 1) | (next << 63));
        while (starts) {
            x0[starts_found++] = (uint32_t)(base + __builtin_ctzll(starts));
            starts &= starts - 1;
        }
        while (ends) {
            x1[ends_found++] = (uint32_t)(base + __builtin_ctzll(ends));
            ends &= ends - 1;
        }
        carry = bits >> 63;
        bits = next;
    }
}

/* Two passes over a slab: count the runs of every row, then (once the offsets are known) write them. */
typedef struct extract_job {
    const vl_volume *mask;
    vl_runs *runs;
    int64_t z_begin, z_end;
    int failed; /* class maps: no memory for the row buffer */
} extract_job;

static void *count_slab(void *argument)
{
    const extract_job *job = (const extract_job *)argument;
    const vl_volume *mask = job->mask;
    const uint8_t *data = (const uint8_t *)mask->data;
    for (int64_t row = job->z_begin * mask->ny; row < job->z_end * mask->ny; row++)
        job->runs->row_start[row + 1] = count_runs(data + row * mask->nx, mask->nx);
    return NULL;
}

static void *cut_slab(void *argument)
{
    const extract_job *job = (const extract_job *)argument;
    const vl_volume *mask = job->mask;
    const vl_runs *runs = job->runs;
    const uint8_t *data = (const uint8_t *)mask->data;
    for (int64_t row = job->z_begin * mask->ny; row < job->z_end * mask->ny; row++)
        if (runs->row_start[row + 1] > runs->row_start[row])
            cut_row(data + row * mask->nx, mask->nx, runs->x0 + runs->row_start[row], runs->x1 + runs->row_start[row]);
    return NULL;
}

/* ---- class runs (multilabel) --------------------------------------------------------------------- */

/* A row of a class map widened to u32, so that one scan serves u8, u16 and u32 maps. */
static void widen_row(const vl_volume *classes, int64_t row, uint32_t *out)
{
    const int64_t nx = classes->nx;
    switch (classes->dtype) {
    case VL_U8: {
        const uint8_t *in = (const uint8_t *)classes->data + row * nx;
        for (int64_t x = 0; x < nx; x++)
            out[x] = in[x];
        break;
    }
    case VL_I16: /* vl_class_map_check: no negative voxel, so the bits read as u16 are the class */
    case VL_U16: {
        const uint16_t *in = (const uint16_t *)classes->data + row * nx;
        for (int64_t x = 0; x < nx; x++)
            out[x] = in[x];
        break;
    }
    default:
        memcpy(out, (const uint32_t *)classes->data + row * nx, (size_t)nx * sizeof *out);
        break;
    }
}

/* A class run starts where a nonzero class differs from its left neighbour's. */
static uint32_t count_class_runs(const uint32_t *row, int64_t nx)
{
    uint32_t count = 0, previous = 0;
    for (int64_t x = 0; x < nx; x++) {
        count += (row[x] != 0) & (row[x] != previous);
        previous = row[x];
    }
    return count;
}

static void cut_class_row(const uint32_t *row, int64_t nx, uint32_t *x0, uint32_t *x1, uint32_t *run_class)
{
    uint32_t previous = 0, k = 0;
    for (int64_t x = 0; x < nx; x++) {
        const uint32_t c = row[x];
        if (c == previous)
            continue;
        if (previous)
            x1[k++] = (uint32_t)(x - 1);
        if (c) {
            x0[k] = (uint32_t)x;
            run_class[k] = c;
        }
        previous = c;
    }
    if (previous)
        x1[k] = (uint32_t)(nx - 1);
}

static void *count_class_slab(void *argument)
{
    extract_job *job = (extract_job *)argument;
    const vl_volume *classes = job->mask;
    uint32_t *wide = malloc((size_t)classes->nx * sizeof *wide);
    if (!wide) {
        job->failed = 1;
        return NULL;
    }
    for (int64_t row = job->z_begin * classes->ny; row < job->z_end * classes->ny; row++) {
        widen_row(classes, row, wide);
        job->runs->row_start[row + 1] = count_class_runs(wide, classes->nx);
    }
    free(wide);
    return NULL;
}

static void *cut_class_slab(void *argument)
{
    extract_job *job = (extract_job *)argument;
    const vl_volume *classes = job->mask;
    const vl_runs *runs = job->runs;
    uint32_t *wide = malloc((size_t)classes->nx * sizeof *wide);
    if (!wide) {
        job->failed = 1;
        return NULL;
    }
    for (int64_t row = job->z_begin * classes->ny; row < job->z_end * classes->ny; row++) {
        if (runs->row_start[row + 1] == runs->row_start[row])
            continue;
        widen_row(classes, row, wide);
        const uint32_t first = runs->row_start[row];
        cut_class_row(wide, classes->nx, runs->x0 + first, runs->x1 + first, runs->run_class + first);
    }
    free(wide);
    return NULL;
}

void vl_runs_free(vl_runs *runs)
{
    free(runs->row_start);
    free(runs->x0);
    free(runs->x1);
    free(runs->run_class);
    memset(runs, 0, sizeof *runs);
}

/* Runs every job of `work` and reports whether one failed. */
static int run_slabs(void *(*work)(void *), extract_job *jobs, int threads)
{
    vl_run_parallel(work, jobs, sizeof jobs[0], threads);
    int failed = 0;
    for (int t = 0; t < threads; t++)
        failed |= jobs[t].failed;
    return failed;
}

/* The two passes shared by masks and class maps: count the runs of every row, turn the counts into row
 * offsets, allocate the table and cut the rows. */
static vl_status extract(const vl_volume *volume, int threads, int with_class, void *(*count)(void *),
                         void *(*cut)(void *), vl_runs *runs)
{
    memset(runs, 0, sizeof *runs);
    if (volume->nx > UINT32_MAX - 2)
        return vl_fail(VL_ERR_ARGUMENT, "label: rows longer than %u voxels are not supported", UINT32_MAX - 2);
    runs->nx = volume->nx;
    runs->ny = volume->ny;
    runs->nz = volume->nz;
    const int64_t rows = volume->ny * volume->nz;
    runs->row_start = calloc((size_t)rows + 1, sizeof *runs->row_start);
    if (!runs->row_start)
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate the row table for %lld rows", (long long)rows);

    extract_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (extract_job){volume, runs, volume->nz * t / threads, volume->nz * (t + 1) / threads, 0};
    if (run_slabs(count, jobs, threads)) {
        vl_runs_free(runs);
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate a row buffer of %lld voxels", (long long)volume->nx);
    }

    uint64_t total = 0;
    for (int64_t row = 0; row < rows; row++) {
        total += runs->row_start[row + 1];
        if (total > UINT32_MAX - 2) {
            vl_runs_free(runs);
            return vl_fail(VL_ERR_ARGUMENT, "label: more than %u runs exceed the CPU labeller's limit", UINT32_MAX - 2);
        }
        runs->row_start[row + 1] = (uint32_t)total;
    }
    runs->count = (uint32_t)total;
    runs->x0 = vl_allocate_large(((size_t)total + 1) * sizeof *runs->x0);
    runs->x1 = vl_allocate_large(((size_t)total + 1) * sizeof *runs->x1);
    if (with_class)
        runs->run_class = vl_allocate_large(((size_t)total + 1) * sizeof *runs->run_class);
    if (!runs->x0 || !runs->x1 || (with_class && !runs->run_class)) {
        vl_runs_free(runs);
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate %llu runs", (unsigned long long)total);
    }
    if (run_slabs(cut, jobs, threads)) {
        vl_runs_free(runs);
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate a row buffer of %lld voxels", (long long)volume->nx);
    }
    return VL_OK;
}

vl_status vl_runs_extract(const vl_volume *mask, int threads, vl_runs *runs)
{
    return extract(mask, threads, 0, count_slab, cut_slab, runs);
}

vl_status vl_runs_extract_classes(const vl_volume *classes, int threads, vl_runs *runs)
{
    return extract(classes, threads, 1, count_class_slab, cut_class_slab, runs);
}

/* ---- numbering ----------------------------------------------------------------------------------- */

/* Stable counting sort of `items` by digit(key) in [0, radix). */
static void counting_sort(uint32_t *items, uint32_t *scratch, size_t n, const uint64_t *key, uint64_t divisor,
                          uint64_t radix, uint32_t *histogram)
{
    memset(histogram, 0, (size_t)(radix + 1) * sizeof *histogram);
    for (size_t i = 0; i < n; i++)
        histogram[(key[items[i]] / divisor) % radix + 1]++;
    for (uint64_t d = 0; d < radix; d++)
        histogram[d + 1] += histogram[d];
    for (size_t i = 0; i < n; i++)
        scratch[histogram[(key[items[i]] / divisor) % radix]++] = items[i];
    memcpy(items, scratch, n * sizeof *items);
}

/* Orders components whose roots share one slice by their in-slice key x*ny + y: insertion sort for a
 * few, else two stable counting passes (by y, then by x), linear in the slice's components. */
static void sort_slice_components(uint32_t *items, uint32_t *scratch, size_t n, const uint64_t *key, int64_t nx,
                                  int64_t ny, uint32_t *histogram)
{
    if (n < 64) {
        for (size_t i = 1; i < n; i++) {
            uint32_t item = items[i];
            size_t j = i;
            while (j > 0 && key[items[j - 1]] > key[item]) {
                items[j] = items[j - 1];
                j--;
            }
            items[j] = item;
        }
        return;
    }
    counting_sort(items, scratch, n, key, 1, (uint64_t)ny, histogram);
    counting_sort(items, scratch, n, key, (uint64_t)ny, (uint64_t)nx, histogram);
}

typedef struct size_order_entry {
    uint64_t size, key;
    uint32_t component;
} size_order_entry;

static int compare_size_order(const void *a, const void *b)
{
    const size_order_entry *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* rank[c] = 0-based position of component c (components indexed in raster order of their roots, which
 * lie in slice root_slice[c]). */
static vl_status rank_components(const vl_runs *runs, const uint32_t *component_of_run, const uint32_t *root_slice,
                                 uint32_t components, vl_label_order order, const uint64_t *sizes, uint32_t *rank)
{
    if (order == VL_ORDER_MATLAB_XY) {
        for (uint32_t c = 0; c < components; c++)
            rank[c] = c;
        return VL_OK;
    }
    if (order == VL_ORDER_SIZE_RASTER) {
        /* c is already the rank by the raster key: sort by size, ties by c. */
        vl_ranked_label *ranked = malloc(((size_t)components + 1) * sizeof *ranked);
        if (!ranked)
            return vl_fail(VL_ERR_MEMORY, "label: cannot allocate the order table for %u components", components);
        for (uint32_t c = 0; c < components; c++)
            ranked[c] = (vl_ranked_label){sizes[c], c};
        qsort(ranked, components, sizeof *ranked, vl_compare_larger_first);
        for (uint32_t position = 0; position < components; position++)
            rank[ranked[position].label] = position;
        free(ranked);
        return VL_OK;
    }
    const int64_t nx = runs->nx, ny = runs->ny, slice = nx * ny;
    /* key[c]: the in-slice part x*ny + y of component c's MATLAB key, over the runs of its root's slice. */
    uint64_t *key = malloc(((size_t)components + 1) * sizeof *key);
    uint32_t *items = malloc(((size_t)components + 1) * sizeof *items);
    uint32_t *scratch = malloc(((size_t)components + 1) * sizeof *scratch);
    uint32_t *histogram = malloc(((size_t)(nx > ny ? nx : ny) + 1) * sizeof *histogram);
    size_order_entry *entries = order == VL_ORDER_SIZE ? malloc(((size_t)components + 1) * sizeof *entries) : NULL;
    vl_status status = VL_OK;
    if (!key || !items || !scratch || !histogram || (order == VL_ORDER_SIZE && !entries)) {
        status = vl_fail(VL_ERR_MEMORY, "label: cannot allocate the order tables for %u components", components);
        goto done;
    }
    for (uint32_t c = 0; c < components; c++)
        key[c] = UINT64_MAX;
    for (int64_t z = 0; z < runs->nz; z++)
        for (int64_t y = 0; y < ny; y++) {
            const int64_t row = y + ny * z;
            for (uint32_t i = runs->row_start[row]; i < runs->row_start[row + 1]; i++) {
                const uint32_t c = component_of_run[i];
                const uint64_t candidate = (uint64_t)runs->x0[i] * (uint64_t)ny + (uint64_t)y;
                if (root_slice[c] == (uint32_t)z && candidate < key[c])
                    key[c] = candidate;
            }
        }
    /* Components are already grouped by their root's slice in ascending order: sort inside each group. */
    for (uint32_t c = 0; c < components; c++)
        items[c] = c;
    for (uint32_t begin = 0; begin < components;) {
        uint32_t end = begin + 1;
        while (end < components && root_slice[end] == root_slice[begin])
            end++;
        sort_slice_components(items + begin, scratch, end - begin, key, nx, ny, histogram);
        begin = end;
    }
    if (order == VL_ORDER_MATLAB) {
        for (uint32_t position = 0; position < components; position++)
            rank[items[position]] = position;
    } else {
        for (uint32_t c = 0; c < components; c++)
            entries[c] = (size_order_entry){sizes[c], (uint64_t)root_slice[c] * (uint64_t)slice + key[c], c};
        qsort(entries, components, sizeof *entries, compare_size_order);
        for (uint32_t position = 0; position < components; position++)
            rank[entries[position].component] = position;
    }
done:
    free(key);
    free(items);
    free(scratch);
    free(histogram);
    free(entries);
    return status;
}

vl_status vl_runs_number_components(const vl_runs *runs, uint32_t *parent, vl_label_order order,
                                    vl_label_result *result)
{
    uint32_t components = 0;
    for (uint32_t i = 0; i < runs->count; i++)
        components += parent[i] == i;
    uint64_t *sizes = calloc((size_t)components + 1, sizeof *sizes);
    uint32_t *root_slice = malloc(((size_t)components + 1) * sizeof *root_slice);
    uint32_t *rank = malloc(((size_t)components + 1) * sizeof *rank);
    result->sizes = malloc(((size_t)components + 1) * sizeof *result->sizes);
    vl_status status = VL_OK;
    if (!sizes || !root_slice || !rank || !result->sizes) {
        status = vl_fail(VL_ERR_MEMORY, "label: cannot allocate tables for %u components", components);
        goto done;
    }
    /* One forward pass flattens the forest and numbers components in raster order of their roots, in place:
     * parent[i] <= i, so parent[parent[i]] already holds the component of i's root when i is reached. */
    uint32_t next = 0;
    for (int64_t z = 0; z < runs->nz; z++) {
        const uint32_t slice_end = runs->row_start[(z + 1) * runs->ny];
        for (uint32_t i = runs->row_start[z * runs->ny]; i < slice_end; i++) {
            if (parent[i] == i) {
                root_slice[next] = (uint32_t)z;
                parent[i] = next++;
            } else {
                parent[i] = parent[parent[i]];
            }
            sizes[parent[i]] += (uint64_t)(runs->x1[i] - runs->x0[i]) + 1;
        }
    }
    if ((status = rank_components(runs, parent, root_slice, components, order, sizes, rank)) != VL_OK)
        goto done;
    for (uint32_t c = 0; c < components; c++)
        result->sizes[rank[c]] = sizes[c];
    result->count = components;
    for (uint32_t i = 0; i < runs->count; i++)
        parent[i] = rank[parent[i]] + 1;
done:
    if (status != VL_OK) {
        free(result->sizes);
        result->sizes = NULL;
    }
    free(sizes);
    free(root_slice);
    free(rank);
    return status;
}

vl_status vl_runs_component_classes(const vl_runs *runs, const uint32_t *label_of_run, vl_label_result *result)
{
    result->classes = malloc(((size_t)result->count + 1) * sizeof *result->classes);
    if (!result->classes)
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate the classes of %u components", result->count);
    for (uint32_t i = 0; i < runs->count; i++)
        result->classes[label_of_run[i] - 1] = runs->run_class[i];
    return VL_OK;
}

/* ---- output -------------------------------------------------------------------------------------- */

typedef struct write_job {
    const vl_runs *runs;
    const uint32_t *label_of_run;
    uint32_t *out;
    int64_t z_begin, z_end;
} write_job;

static void *write_slab(void *argument)
{
    const write_job *job = (const write_job *)argument;
    const vl_runs *runs = job->runs;
    for (int64_t row = job->z_begin * runs->ny; row < job->z_end * runs->ny; row++) {
        uint32_t *out = job->out + row * runs->nx;
        /* Zeroing the whole row once is cheaper than one small memset per gap when gaps are short. */
        memset(out, 0, (size_t)runs->nx * sizeof *out);
        for (uint32_t i = runs->row_start[row]; i < runs->row_start[row + 1]; i++) {
            const uint32_t label = job->label_of_run[i];
            for (int64_t v = runs->x0[i]; v <= (int64_t)runs->x1[i]; v++)
                out[v] = label;
        }
    }
    return NULL;
}

vl_status vl_runs_write_labels(const vl_runs *runs, const uint32_t *label_of_run, const vl_volume *mask, int threads,
                               vl_volume *labels)
{
    vl_status status = vl_volume_create_uninitialised(labels, mask->nx, mask->ny, mask->nz, VL_U32);
    if (status != VL_OK)
        return status;
    labels->geometry = mask->geometry;
    write_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (write_job){runs, label_of_run, (uint32_t *)labels->data, runs->nz * t / threads,
                              runs->nz * (t + 1) / threads};
    vl_run_parallel(write_slab, jobs, sizeof jobs[0], threads);
    return VL_OK;
}
