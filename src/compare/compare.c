/* Label comparison: identical / same partition with different numbering (and which numbering rule each side
 * follows) / different (with split and merged components and the first differing voxels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/compare.h"

const char *vl_compare_verdict_name(vl_compare_verdict verdict)
{
    switch (verdict) {
    case VL_COMPARE_IDENTICAL: return "identical";
    case VL_COMPARE_SAME_PARTITION: return "same partition, different numbering";
    case VL_COMPARE_DIFFERENT: return "different";
    }
    return "unknown";
}

/* ---- one side: its labels as u32 and a dense numbering 1..count of its distinct nonzero labels ---- */

typedef struct label_side {
    const void *data;      /* the volume's voxels, read through label_at (no converted copy) */
    vl_dtype dtype;
    uint32_t count;        /* distinct nonzero labels */
    uint32_t *table;       /* label value -> dense id, when the largest label is small enough for a table */
    uint32_t table_size;
    uint32_t *values;      /* dense id - 1 -> label value, ascending */
} label_side;

static inline uint32_t label_at(const label_side *side, int64_t i)
{
    switch (side->dtype) {
    case VL_U8: return ((const uint8_t *)side->data)[i];
    case VL_U16: return ((const uint16_t *)side->data)[i];
    case VL_I16: return (uint32_t)((const int16_t *)side->data)[i]; /* checked non-negative in side_init */
    case VL_F32: return (uint32_t)((const float *)side->data)[i];   /* checked integral in side_init */
    default: return ((const uint32_t *)side->data)[i];
    }
}

static void side_free(label_side *side)
{
    free(side->table);
    free(side->values);
    memset(side, 0, sizeof *side);
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static vl_status side_init(label_side *side, const vl_volume *v, const char *what)
{
    memset(side, 0, sizeof *side);
    const int64_t n = vl_volume_voxels(v);
    side->data = v->data;
    side->dtype = v->dtype;
    for (int64_t i = 0; (v->dtype == VL_I16 || v->dtype == VL_F32) && i < n; i++) {
        double value = v->dtype == VL_I16 ? ((const int16_t *)v->data)[i] : ((const float *)v->data)[i];
        if (!(value >= 0.0) || value > 4294967295.0 || value != (double)(uint32_t)value) {
            int64_t x = i % v->nx, y = (i / v->nx) % v->ny, z = i / (v->nx * v->ny);
            return vl_fail(VL_ERR_INPUT, "%s: voxel (%lld,%lld,%lld) holds %g, which is not a label (labels are "
                                         "non-negative integers)",
                           what, (long long)x, (long long)y, (long long)z, value);
        }
    }
    uint32_t max_label = 0;
    for (int64_t i = 0; i < n; i++)
        if (label_at(side, i) > max_label)
            max_label = label_at(side, i);
    const uint64_t table_limit = (uint64_t)n + (1u << 24);
    if (max_label < table_limit) {
        side->table_size = max_label + 1;
        side->table = calloc(side->table_size, sizeof(uint32_t));
        if (!side->table) {
            side_free(side);
            return vl_fail(VL_ERR_MEMORY, "compare: cannot allocate a label table");
        }
        for (int64_t i = 0; i < n; i++)
            side->table[label_at(side, i)] = 1;
        for (uint32_t value = 1; value <= max_label; value++)
            side->count += side->table[value];
        side->values = malloc(((size_t)side->count + 1) * sizeof(uint32_t));
        if (!side->values) {
            side_free(side);
            return vl_fail(VL_ERR_MEMORY, "compare: cannot allocate a label table");
        }
        uint32_t next = 0;
        side->table[0] = 0;
        for (uint32_t value = 1; value <= max_label; value++)
            if (side->table[value]) {
                side->values[next] = value;
                side->table[value] = ++next;
            }
    } else {
        /* Sparse huge label values: sort the distinct ones and look them up by bisection. */
        side->values = malloc((size_t)n * sizeof(uint32_t));
        if (!side->values) {
            side_free(side);
            return vl_fail(VL_ERR_MEMORY, "compare: cannot allocate a label list");
        }
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            if (label_at(side, i))
                side->values[m++] = label_at(side, i);
        qsort(side->values, (size_t)m, sizeof(uint32_t), compare_u32);
        int64_t unique = 0;
        for (int64_t i = 0; i < m; i++)
            if (unique == 0 || side->values[unique - 1] != side->values[i])
                side->values[unique++] = side->values[i];
        side->count = (uint32_t)unique;
    }
    return VL_OK;
}

static uint32_t dense_of(const label_side *side, uint32_t value)
{
    if (value == 0)
        return 0;
    if (side->table)
        return side->table[value];
    uint32_t lo = 0, hi = side->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (side->values[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo + 1;
}

/* ---- numbering rules: labels 1..N in ascending order of each component's minimum key ---- */

typedef struct numbering_rule {
    int raster;     /* 0: column-major (matlab) key z*nx*ny + x*ny + y; 1: raster (matlab-xy) z*nx*ny + y*nx + x */
    int by_size;    /* descending size, ties by the key above: `size` (matlab) or `size-raster` (ITK's relabel) */
    int flip_y, flip_z;
} numbering_rule;

static const numbering_rule rules[] = {
    {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 1, 0, 0}, {0, 0, 0, 1}, {1, 0, 0, 1},
    {0, 0, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 1}, {1, 0, 1, 1},
};

static void rule_name(const numbering_rule *rule, char *out, size_t size)
{
    const char *base = rule->by_size ? (rule->raster ? "size-raster (ITK relabel)" : "size")
                       : rule->raster ? "raster (matlab-xy)"
                                      : "column-major (matlab)";
    const char *flip = rule->flip_y && rule->flip_z ? ", y and z reversed"
                       : rule->flip_z             ? ", z reversed"
                       : rule->flip_y             ? ", y reversed"
                                                  : "";
    snprintf(out, size, "%s%s", base, flip);
}

typedef struct component_key {
    uint64_t key;
    uint64_t size;
    uint32_t dense;
} component_key;

static int compare_keys(const void *a, const void *b)
{
    const component_key *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

static int compare_sizes(const void *a, const void *b)
{
    const component_key *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return (x->key > y->key) - (x->key < y->key);
}

/* canonical[dense] = the label the rule gives the component `dense` of `side` (dense ids 1..count). */
static vl_status canonical_numbering(const vl_volume *v, const label_side *side, const numbering_rule *rule,
                                     uint32_t *canonical)
{
    component_key *keys = malloc(((size_t)side->count + 1) * sizeof *keys);
    if (!keys)
        return vl_fail(VL_ERR_MEMORY, "compare: cannot allocate component keys");
    for (uint32_t d = 0; d <= side->count; d++) {
        keys[d].key = UINT64_MAX;
        keys[d].size = 0;
        keys[d].dense = d;
    }
    const int64_t nx = v->nx, ny = v->ny, nz = v->nz;
    int64_t i = 0;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++, i++) {
                uint32_t value = label_at(side, i);
                if (!value)
                    continue;
                uint32_t d = dense_of(side, value);
                int64_t yy = rule->flip_y ? ny - 1 - y : y, zz = rule->flip_z ? nz - 1 - z : z;
                uint64_t key = (uint64_t)(zz * nx * ny) + (uint64_t)(rule->raster ? yy * nx + x : x * ny + yy);
                if (key < keys[d].key)
                    keys[d].key = key;
                keys[d].size++;
            }
    qsort(keys + 1, side->count, sizeof *keys, rule->by_size ? compare_sizes : compare_keys);
    for (uint32_t rank = 1; rank <= side->count; rank++)
        canonical[keys[rank].dense] = rank;
    free(keys);
    return VL_OK;
}

/* Finds the rules that number `ours` and the reference (through ours_to_reference) as they are. */
static vl_status identify_rules(const vl_volume *v, const label_side *ours, const label_side *reference,
                                const uint32_t *ours_to_reference, vl_compare_result *result)
{
    uint32_t *canonical = malloc(((size_t)ours->count + 1) * sizeof(uint32_t));
    if (!canonical)
        return vl_fail(VL_ERR_MEMORY, "compare: cannot allocate a numbering");
    int ours_found = 0, reference_found = 0;
    for (size_t r = 0; r < sizeof rules / sizeof rules[0] && !(ours_found && reference_found); r++) {
        vl_status status = canonical_numbering(v, ours, &rules[r], canonical);
        if (status != VL_OK) {
            free(canonical);
            return status;
        }
        int ours_match = !ours_found, reference_match = !reference_found;
        for (uint32_t d = 1; d <= ours->count && (ours_match || reference_match); d++) {
            ours_match &= ours->values[d - 1] == canonical[d];
            reference_match &= reference->values[ours_to_reference[d] - 1] == canonical[d];
        }
        if (ours_match) {
            rule_name(&rules[r], result->ours_rule, sizeof result->ours_rule);
            ours_found = 1;
        }
        if (reference_match) {
            rule_name(&rules[r], result->reference_rule, sizeof result->reference_rule);
            reference_found = 1;
        }
    }
    free(canonical);
    if (!ours_found)
        snprintf(result->ours_rule, sizeof result->ours_rule, "arbitrary permutation");
    if (!reference_found)
        snprintf(result->reference_rule, sizeof result->reference_rule, "arbitrary permutation");
    if (ours_found && reference_found)
        snprintf(result->mapping_rule, sizeof result->mapping_rule, "%s vs %s order", result->ours_rule,
                 result->reference_rule);
    else
        snprintf(result->mapping_rule, sizeof result->mapping_rule, "arbitrary permutation (ours: %s; reference: %s)",
                 result->ours_rule, result->reference_rule);
    return VL_OK;
}

/* ---- overlaps of (ours, reference) component pairs, for the "different" verdict ---- */

typedef struct pair_table {
    uint64_t *keys;   /* ours_dense << 32 | reference_dense; UINT64_MAX = empty */
    uint64_t *counts;
    size_t capacity, used;
} pair_table;

static uint64_t hash_key(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return key;
}

static int pair_table_init(pair_table *t, size_t capacity)
{
    t->capacity = capacity;
    t->used = 0;
    t->keys = malloc(capacity * sizeof(uint64_t));
    t->counts = calloc(capacity, sizeof(uint64_t));
    if (!t->keys || !t->counts)
        return 0;
    memset(t->keys, 0xff, capacity * sizeof(uint64_t));
    return 1;
}

static void pair_table_free(pair_table *t)
{
    free(t->keys);
    free(t->counts);
}

static int pair_table_add(pair_table *t, uint64_t key, uint64_t count)
{
    if (2 * (t->used + 1) > t->capacity) {
        pair_table bigger;
        if (!pair_table_init(&bigger, t->capacity * 2)) {
            pair_table_free(&bigger);
            return 0;
        }
        for (size_t i = 0; i < t->capacity; i++)
            if (t->keys[i] != UINT64_MAX)
                pair_table_add(&bigger, t->keys[i], t->counts[i]);
        pair_table_free(t);
        *t = bigger;
    }
    size_t slot = hash_key(key) & (t->capacity - 1);
    while (t->keys[slot] != UINT64_MAX && t->keys[slot] != key)
        slot = (slot + 1) & (t->capacity - 1);
    if (t->keys[slot] == UINT64_MAX) {
        t->keys[slot] = key;
        t->used++;
    }
    t->counts[slot] += count;
    return 1;
}

static vl_status analyse_differences(const vl_volume *v, const label_side *ours, const label_side *reference,
                                     vl_compare_result *result)
{
    const int64_t n = vl_volume_voxels(v);
    pair_table table;
    vl_status status = VL_OK;
    uint32_t *best_reference = calloc((size_t)ours->count + 1, sizeof(uint32_t));
    uint32_t *best_ours = calloc((size_t)reference->count + 1, sizeof(uint32_t));
    uint64_t *best_reference_count = calloc((size_t)ours->count + 1, sizeof(uint64_t));
    uint64_t *best_ours_count = calloc((size_t)reference->count + 1, sizeof(uint64_t));
    uint32_t *ours_partners = calloc((size_t)ours->count + 1, sizeof(uint32_t));
    uint32_t *reference_partners = calloc((size_t)reference->count + 1, sizeof(uint32_t));
    if (!pair_table_init(&table, 1 << 12) || !best_reference || !best_ours || !best_reference_count ||
        !best_ours_count || !ours_partners || !reference_partners)
        status = vl_fail(VL_ERR_MEMORY, "compare: cannot allocate the overlap table");
    /* Runs of equal pairs are common (components are contiguous along x): add them in one step. */
    uint64_t run_key = UINT64_MAX, run = 0;
    for (int64_t i = 0; i < n && status == VL_OK; i++) {
        uint64_t key = (uint64_t)dense_of(ours, label_at(ours, i)) << 32 | dense_of(reference, label_at(reference, i));
        if (key == run_key) {
            run++;
            continue;
        }
        if (run && !pair_table_add(&table, run_key, run))
            status = vl_fail(VL_ERR_MEMORY, "compare: cannot grow the overlap table");
        run_key = key;
        run = 1;
    }
    if (status == VL_OK && run && !pair_table_add(&table, run_key, run))
        status = vl_fail(VL_ERR_MEMORY, "compare: cannot grow the overlap table");
    if (status == VL_OK) {
        for (size_t s = 0; s < table.capacity; s++) {
            if (table.keys[s] == UINT64_MAX)
                continue;
            uint32_t a = (uint32_t)(table.keys[s] >> 32), b = (uint32_t)table.keys[s];
            uint64_t count = table.counts[s];
            if (count > best_reference_count[a] || (count == best_reference_count[a] && b < best_reference[a])) {
                best_reference_count[a] = count;
                best_reference[a] = b;
            }
            if (count > best_ours_count[b] || (count == best_ours_count[b] && a < best_ours[b])) {
                best_ours_count[b] = count;
                best_ours[b] = a;
            }
            if (a && b) {
                ours_partners[a]++;
                reference_partners[b]++;
            }
        }
        for (uint32_t a = 1; a <= ours->count; a++)
            result->ours_merged += ours_partners[a] >= 2;
        for (uint32_t b = 1; b <= reference->count; b++)
            result->reference_split += reference_partners[b] >= 2;
        for (uint32_t a = 1; a <= ours->count; a++) {
            uint32_t b = best_reference[a];
            result->ours_unmatched += !(b != 0 && best_ours[b] == a);
        }
        for (uint32_t b = 1; b <= reference->count; b++) {
            uint32_t a = best_ours[b];
            result->reference_unmatched += !(a != 0 && best_reference[a] == b);
        }
        int64_t i = 0;
        for (int64_t z = 0; z < v->nz; z++)
            for (int64_t y = 0; y < v->ny; y++)
                for (int64_t x = 0; x < v->nx; x++, i++) {
                    uint32_t a = dense_of(ours, label_at(ours, i)), b = dense_of(reference, label_at(reference, i));
                    if (best_reference[a] == b && best_ours[b] == a)
                        continue;
                    result->unmatched_voxels++;
                    if (result->shown < VL_COMPARE_MAX_SHOWN) {
                        vl_compare_difference *d = &result->first[result->shown++];
                        d->x = x;
                        d->y = y;
                        d->z = z;
                        d->ours = label_at(ours, i);
                        d->reference = label_at(reference, i);
                    }
                }
    }
    pair_table_free(&table);
    free(best_reference);
    free(best_ours);
    free(best_reference_count);
    free(best_ours_count);
    free(ours_partners);
    free(reference_partners);
    return status;
}

/* ---- the comparison ---- */

static vl_status check_dimensions(const vl_volume *ours, const vl_volume *reference)
{
    if (ours->nx == reference->nx && ours->ny == reference->ny && ours->nz == reference->nz)
        return VL_OK;
    const char *hint = "";
    if (ours->nx == reference->ny && ours->ny == reference->nx && ours->nz == reference->nz)
        hint = " (x and y are swapped: for a MATLAB array, switch between --order matlab and --order matlab-xy)";
    return vl_fail(VL_ERR_INPUT, "compare: dimensions differ: ours %lldx%lldx%lld, reference %lldx%lldx%lld%s",
                   (long long)ours->nx, (long long)ours->ny, (long long)ours->nz, (long long)reference->nx,
                   (long long)reference->ny, (long long)reference->nz, hint);
}

vl_status vl_compare_labels(const vl_volume *ours_volume, const vl_volume *reference_volume, vl_compare_result *result)
{
    memset(result, 0, sizeof *result);
    if (!ours_volume || !reference_volume || !ours_volume->data || !reference_volume->data)
        return vl_fail(VL_ERR_ARGUMENT, "vl_compare_labels: two label volumes are required");
    vl_status status = check_dimensions(ours_volume, reference_volume);
    if (status != VL_OK)
        return status;
    label_side ours, reference;
    status = side_init(&ours, ours_volume, "ours");
    if (status != VL_OK)
        return status;
    status = side_init(&reference, reference_volume, "reference");
    if (status != VL_OK) {
        side_free(&ours);
        return status;
    }
    const int64_t n = vl_volume_voxels(ours_volume);
    result->voxels = n;
    result->ours_components = ours.count;
    result->reference_components = reference.count;

    /* One pass: numeric differences, background mismatches, and whether a bijection of components exists. */
    uint32_t *ours_to_reference = calloc((size_t)ours.count + 1, sizeof(uint32_t));
    uint32_t *reference_to_ours = calloc((size_t)reference.count + 1, sizeof(uint32_t));
    if (!ours_to_reference || !reference_to_ours) {
        free(ours_to_reference);
        free(reference_to_ours);
        side_free(&ours);
        side_free(&reference);
        return vl_fail(VL_ERR_MEMORY, "compare: cannot allocate component maps");
    }
    int same_partition = ours.count == reference.count;
    uint32_t last_a = 0, last_b = 0, last_da = 0, last_db = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t a = label_at(&ours, i), b = label_at(&reference, i);
        if (a == b && a == 0)
            continue;
        if (a != b) {
            result->differing_voxels++;
            if (result->shown < VL_COMPARE_MAX_SHOWN) {
                vl_compare_difference *d = &result->first[result->shown++];
                d->x = i % ours_volume->nx;
                d->y = (i / ours_volume->nx) % ours_volume->ny;
                d->z = i / (ours_volume->nx * ours_volume->ny);
                d->ours = a;
                d->reference = b;
            }
        }
        if ((a == 0) != (b == 0)) {
            result->foreground_mismatch++;
            same_partition = 0;
            continue;
        }
        if (!same_partition)
            continue;
        if (a != last_a || b != last_b) {
            last_a = a;
            last_b = b;
            last_da = dense_of(&ours, a);
            last_db = dense_of(&reference, b);
        }
        if (!ours_to_reference[last_da])
            ours_to_reference[last_da] = last_db;
        if (!reference_to_ours[last_db])
            reference_to_ours[last_db] = last_da;
        if (ours_to_reference[last_da] != last_db || reference_to_ours[last_db] != last_da)
            same_partition = 0;
    }
    if (result->differing_voxels == 0) {
        result->verdict = VL_COMPARE_IDENTICAL;
    } else if (same_partition) {
        result->verdict = VL_COMPARE_SAME_PARTITION;
        status = identify_rules(ours_volume, &ours, &reference, ours_to_reference, result);
    } else {
        result->verdict = VL_COMPARE_DIFFERENT;
        result->shown = 0;
        status = analyse_differences(ours_volume, &ours, &reference, result);
    }
    free(ours_to_reference);
    free(reference_to_ours);
    side_free(&ours);
    side_free(&reference);
    return status;
}
