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

void vl_runs_free(vl_runs *runs)
{
    free(runs->row_start);
    free(runs->x0);
    free(runs->x1);
    memset(runs, 0, sizeof *runs);
}

vl_status vl_runs_extract(const vl_volume *mask, int threads, vl_runs *runs)
{
    memset(runs, 0, sizeof *runs);
    if (mask->nx > UINT32_MAX - 2)
        return vl_fail(VL_ERR_ARGUMENT, "label: rows longer than %u voxels are not supported", UINT32_MAX - 2);
    runs->nx = mask->nx;
    runs->ny = mask->ny;
    runs->nz = mask->nz;
    const int64_t rows = mask->ny * mask->nz;
    runs->row_start = calloc((size_t)rows + 1, sizeof *runs->row_start);
    if (!runs->row_start)
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate the row table for %lld rows", (long long)rows);

    extract_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (extract_job){mask, runs, mask->nz * t / threads, mask->nz * (t + 1) / threads};
    vl_run_parallel(count_slab, jobs, sizeof jobs[0], threads);

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
    if (!runs->x0 || !runs->x1) {
        vl_runs_free(runs);
        return vl_fail(VL_ERR_MEMORY, "label: cannot allocate %llu runs", (unsigned long long)total);
    }
    vl_run_parallel(cut_slab, jobs, sizeof jobs[0], threads);
    return VL_OK;
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
