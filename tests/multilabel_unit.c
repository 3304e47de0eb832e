/* The multilabel labeller (vl_label_multilabel_cpu) against an oracle built from the binary flood fill of
 * tests/label_reference.h: every class labelled on its own as a mask, the pieces of all classes merged
 * by their minimum key (or size, then key), exactly the rule of docs/design.md §4. Fresh random class
 * maps every run (seed printed): 2 to 200 classes, odd shapes, classes that touch, u8/u16/u32/i16 maps,
 * every connectivity, order and thread count. Also: the per-class filter, the cleaned class map (both
 * fills) and the refusals of a float class map and of negative classes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "label_reference.h"
#include "voxlabel/label.h"
#include "test_check.h"

typedef struct piece {
    uint64_t key, size;
    uint32_t cls, label; /* label within its class's reference labelling */
} piece;

static vl_label_order sort_order;

static int compare_pieces(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    if (vl_label_order_by_size(sort_order) && x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* The oracle: labels (u32, n) and the class of every label; returns N. */
static uint32_t reference_multilabel(const uint32_t *classes, int64_t nx, int64_t ny, int64_t nz, int connectivity,
                                     vl_label_order order, uint32_t *labels, uint32_t **label_class)
{
    const int64_t n = nx * ny * nz;
    const int raster = vl_label_order_is_raster(order);
    uint8_t *mask = malloc((size_t)n);
    uint32_t *class_labels = malloc((size_t)n * sizeof *class_labels);
    uint32_t *piece_of = calloc((size_t)n, sizeof *piece_of); /* 1-based piece index */
    piece *pieces = NULL;
    size_t piece_count = 0;
    memset(labels, 0, (size_t)n * sizeof *labels);
    /* The distinct classes, in any order: each one's pieces get their keys from its own labelling. */
    uint32_t *seen = malloc((size_t)n * sizeof *seen);
    size_t distinct = 0;
    for (int64_t i = 0; i < n; i++) {
        int known = !classes[i];
        for (size_t k = 0; k < distinct && !known; k++)
            known = seen[k] == classes[i];
        if (!known)
            seen[distinct++] = classes[i];
    }
    for (size_t k = 0; k < distinct; k++) {
        for (int64_t i = 0; i < n; i++)
            mask[i] = classes[i] == seen[k];
        const uint32_t count = reference_label(mask, nx, ny, nz, connectivity,
                                               raster ? VL_ORDER_MATLAB_XY : VL_ORDER_MATLAB, class_labels);
        const size_t first = piece_count;
        pieces = realloc(pieces, (piece_count + count) * sizeof *pieces);
        for (uint32_t l = 0; l < count; l++)
            pieces[first + l] = (piece){UINT64_MAX, 0, seen[k], l + 1};
        piece_count += count;
        for (int64_t i = 0; i < n; i++)
            if (class_labels[i]) {
                const int64_t x = i % nx, y = i / nx % ny, z = i / (nx * ny);
                const uint64_t key = (uint64_t)(raster ? z * nx * ny + y * nx + x : z * nx * ny + x * ny + y);
                piece *p = &pieces[first + class_labels[i] - 1];
                p->key = key < p->key ? key : p->key;
                p->size++;
                piece_of[i] = (uint32_t)(first + class_labels[i]);
            }
    }
    sort_order = order;
    uint32_t *final = malloc((piece_count + 1) * sizeof *final);
    piece *sorted = malloc((piece_count + 1) * sizeof *sorted);
    memcpy(sorted, pieces, piece_count * sizeof *pieces);
    qsort(sorted, piece_count, sizeof *sorted, compare_pieces);
    /* Keys are unique (one voxel belongs to one piece): find each sorted piece's index by its key. */
    *label_class = malloc((piece_count + 1) * sizeof **label_class);
    for (size_t r = 0; r < piece_count; r++)
        for (size_t p = 0; p < piece_count; p++)
            if (pieces[p].key == sorted[r].key) {
                final[p] = (uint32_t)r + 1;
                (*label_class)[r] = pieces[p].cls;
                break;
            }
    for (int64_t i = 0; i < n; i++)
        if (piece_of[i])
            labels[i] = final[piece_of[i] - 1];
    free(mask);
    free(class_labels);
    free(piece_of);
    free(pieces);
    free(seen);
    free(final);
    free(sorted);
    return (uint32_t)piece_count;
}

static uint32_t value_at(const vl_volume *v, int64_t i)
{
    switch (v->dtype) {
    case VL_U8: return ((const uint8_t *)v->data)[i];
    case VL_I16:
    case VL_U16: return ((const uint16_t *)v->data)[i];
    default: return ((const uint32_t *)v->data)[i];
    }
}

static void set_value(vl_volume *v, int64_t i, uint32_t value)
{
    switch (v->dtype) {
    case VL_U8: ((uint8_t *)v->data)[i] = (uint8_t)value; break;
    case VL_I16:
    case VL_U16: ((uint16_t *)v->data)[i] = (uint16_t)value; break;
    default: ((uint32_t *)v->data)[i] = value; break;
    }
}

/* A random class map: `classes` values (spread over the type's range), in blobs grown from seeds so that
 * classes touch along faces, edges and corners, with a share of background and of single-voxel noise. */
static void fill_class_map(vl_volume *map, uint32_t class_count)
{
    const int64_t n = vl_volume_voxels(map);
    const uint32_t top = map->dtype == VL_U8 ? 255 : map->dtype == VL_U32 ? 4000000000u : 32767;
    uint32_t *values = malloc((size_t)class_count * sizeof *values);
    for (uint32_t k = 0; k < class_count; k++)
        values[k] = 1 + (uint32_t)(test_random() % top);
    const int blobby = test_random() % 3 != 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t value = test_random() % 4 == 0 ? 0 : values[test_random() % class_count];
        /* Blobs: copy a backward neighbour's class most of the time. */
        if (blobby && i > 0 && test_random() % 4 != 0) {
            const int64_t back[3] = {1, map->nx, map->nx * map->ny};
            const int64_t j = i - back[test_random() % 3];
            if (j >= 0)
                value = value_at(map, j);
        }
        set_value(map, i, value);
    }
    free(values);
}

static void check_map(const vl_volume *map, int connectivity, vl_label_order order, int threads, const char *what)
{
    const int64_t n = vl_volume_voxels(map);
    uint32_t *wide = malloc((size_t)n * sizeof *wide), *expected = malloc((size_t)n * sizeof *expected);
    for (int64_t i = 0; i < n; i++)
        wide[i] = value_at(map, i);
    uint32_t *expected_class = NULL;
    const uint32_t expected_count =
        reference_multilabel(wide, map->nx, map->ny, map->nz, connectivity, order, expected, &expected_class);
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = order;
    options.threads = threads;
    options.device.kind = VL_DEVICE_CPU;
    vl_volume labels;
    vl_label_result result;
    const vl_status status = vl_label_multilabel(map, &labels, &options, &result);
    CHECK(status == VL_OK, "%s: status %d", what, (int)status);
    if (status == VL_OK) {
        CHECK(result.count == expected_count, "%s: N %u, expected %u", what, result.count, expected_count);
        int64_t mismatches = 0, first = -1;
        uint64_t *sizes = calloc((size_t)result.count + 2, sizeof *sizes);
        const uint32_t *got = labels.data;
        for (int64_t i = 0; i < n; i++) {
            if (got[i] != expected[i] && first < 0)
                first = i;
            mismatches += got[i] != expected[i];
            if (got[i] <= result.count)
                sizes[got[i]]++;
        }
        CHECK(mismatches == 0, "%s: %" PRId64 " voxels differ, first %" PRId64 " (%u, expected %u)", what, mismatches,
              first, first >= 0 ? got[first] : 0, first >= 0 ? expected[first] : 0);
        for (uint32_t l = 1; l <= result.count && l <= expected_count && mismatches == 0; l++) {
            CHECK(result.sizes[l - 1] == sizes[l], "%s: size of %u is %" PRIu64 ", counted %" PRIu64, what, l,
                  result.sizes[l - 1], sizes[l]);
            CHECK(result.classes[l - 1] == expected_class[l - 1], "%s: class of %u is %u, expected %u", what, l,
                  result.classes[l - 1], expected_class[l - 1]);
        }
        free(sizes);
        vl_volume_free(&labels);
        vl_label_result_free(&result);
    }
    free(expected_class);
    free(wide);
    free(expected);
}

/* The per-class filter against the rule applied by hand; the cleaned class map against the survivors. */
static void check_filter_and_clean(const vl_volume *map, int connectivity, const char *what)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.device.kind = VL_DEVICE_CPU;
    vl_volume labels, before;
    vl_label_result result, original;
    if (vl_label_multilabel(map, &labels, &options, &result) != VL_OK ||
        vl_label_multilabel(map, &before, &options, &original) != VL_OK) {
        CHECK(0, "%s: labelling failed", what);
        return;
    }
    const uint64_t min_size = 1 + test_random() % 4;
    const uint32_t largest = (uint32_t)(test_random() % 3); /* 0 = all */
    CHECK(vl_label_filter_per_class(&labels, &result, min_size, largest) == VL_OK, "%s: filter failed", what);
    /* Expected survivors: size >= min_size and fewer than `largest` survivors of its class are larger (or as
     * large with a lower label). */
    uint32_t *expected_new = calloc((size_t)original.count + 1, sizeof *expected_new);
    uint32_t next = 0;
    for (uint32_t l = 1; l <= original.count; l++) {
        if (original.sizes[l - 1] < min_size)
            continue;
        uint32_t ahead = 0;
        for (uint32_t m = 1; m <= original.count; m++)
            ahead += m != l && original.classes[m - 1] == original.classes[l - 1] && original.sizes[m - 1] >= min_size &&
                     (original.sizes[m - 1] > original.sizes[l - 1] ||
                      (original.sizes[m - 1] == original.sizes[l - 1] && m < l));
        if (largest == 0 || ahead < largest)
            expected_new[l] = ++next;
    }
    CHECK(result.count == next, "%s (min %" PRIu64 ", largest %u): %u survivors, expected %u", what, min_size, largest,
          result.count, next);
    const uint32_t *got = labels.data, *was = before.data;
    int64_t wrong = 0;
    for (int64_t i = 0; i < vl_volume_voxels(map); i++)
        wrong += got[i] != expected_new[was[i]];
    CHECK(wrong == 0, "%s: %" PRId64 " voxels filtered wrongly", what, wrong);
    for (uint32_t l = 1; l <= original.count && wrong == 0 && result.count == next; l++)
        if (expected_new[l])
            CHECK(result.classes[expected_new[l] - 1] == original.classes[l - 1] &&
                      result.sizes[expected_new[l] - 1] == original.sizes[l - 1],
                  "%s: class or size of survivor %u", what, expected_new[l]);

    vl_volume cleaned, filled;
    CHECK(vl_class_map_clean(map, &labels, VL_FILL_BACKGROUND, connectivity, &cleaned) == VL_OK, "%s: clean", what);
    CHECK(vl_class_map_clean(map, &labels, VL_FILL_NEIGHBOUR, connectivity, &filled) == VL_OK, "%s: fill", what);
    int64_t bad_clean = 0, bad_fill = 0;
    for (int64_t i = 0; i < vl_volume_voxels(map); i++) {
        bad_clean += value_at(&cleaned, i) != (got[i] ? value_at(map, i) : 0);
        if (got[i] || !value_at(map, i)) {
            bad_fill += value_at(&filled, i) != value_at(&cleaned, i);
            continue;
        }
        /* A removed voxel never keeps its own class (test_fill_rule checks which class it takes). */
        bad_fill += value_at(&filled, i) == value_at(map, i);
    }
    CHECK(bad_clean == 0 && bad_fill == 0, "%s: cleaned map: %" PRId64 " wrong, filled map: %" PRId64 " wrong", what,
          bad_clean, bad_fill);
    vl_volume_free(&cleaned);
    vl_volume_free(&filled);
    free(expected_new);
    vl_volume_free(&labels);
    vl_volume_free(&before);
    vl_label_result_free(&result);
    vl_label_result_free(&original);
}

/* Two islands of class 2 inside class 1 and class 3: the fill gives each the class it touches most. */
static void test_fill_rule(void)
{
    vl_volume map, labels, filled;
    vl_volume_create(&map, 7, 1, 1, VL_U8);
    /* 1 1 2 1 3 2 3 : the first 2 touches 1 twice; the second touches 3 twice. Both are 1 voxel. */
    const uint8_t row[7] = {1, 1, 2, 1, 3, 2, 3};
    memcpy(map.data, row, sizeof row);
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    vl_label_result result;
    CHECK(vl_label_multilabel(&map, &labels, &options, &result) == VL_OK, "fill rule: labelling");
    CHECK(result.count == 6, "fill rule: N %u, expected 6 (1 1 | 2 | 1 | 3 | 2 | 3)", result.count);
    CHECK(vl_label_filter_per_class(&labels, &result, 2, 0) == VL_OK, "fill rule: filter");
    CHECK(result.count == 1 && result.classes[0] == 1, "fill rule: only the 1 1 pair survives min-size 2");
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    /* Keep every class but 2: label, drop class 2's pieces by hand, fill. */
    CHECK(vl_label_multilabel(&map, &labels, &options, &result) == VL_OK, "fill rule: labelling");
    uint32_t *l = labels.data;
    for (int i = 0; i < 7; i++)
        if (row[i] == 2)
            l[i] = 0;
    CHECK(vl_class_map_clean(&map, &labels, VL_FILL_NEIGHBOUR, 26, &filled) == VL_OK, "fill rule: fill");
    const uint8_t *f = filled.data;
    CHECK(f[2] == 1 && f[5] == 3, "fill rule: islands became %u and %u, expected 1 and 3", f[2], f[5]);
    vl_volume_free(&filled);
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    vl_volume_free(&map);
}

static void test_refusals(void)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    vl_volume map, labels;
    vl_label_result result;
    vl_volume_create(&map, 4, 3, 2, VL_F32);
    ((float *)map.data)[5] = 1.5f;
    CHECK(vl_label_multilabel(&map, &labels, &options, &result) == VL_ERR_ARGUMENT, "a float class map is accepted");
    CHECK(strstr(vl_last_error(), "f32") != NULL, "float refusal does not name the type: %s", vl_last_error());
    CHECK(labels.data == NULL && result.sizes == NULL, "a refused float map left outputs behind");
    vl_volume_free(&map);
    vl_volume_create(&map, 4, 3, 2, VL_I16);
    ((int16_t *)map.data)[3] = 7;
    ((int16_t *)map.data)[1 + 4 * 2 + 12] = -2;
    CHECK(vl_label_multilabel(&map, &labels, &options, &result) == VL_ERR_ARGUMENT, "a negative class is accepted");
    CHECK(strstr(vl_last_error(), "(1, 2, 1)") != NULL && strstr(vl_last_error(), "-2") != NULL,
          "negative refusal does not name the voxel and value: %s", vl_last_error());
    CHECK(labels.data == NULL && result.sizes == NULL, "a refused negative map left outputs behind");
    ((int16_t *)map.data)[1 + 4 * 2 + 12] = 0;
    CHECK(vl_label_multilabel(&map, &labels, &options, &result) == VL_OK && result.count == 1 && result.classes[0] == 7,
          "an i16 class map without negatives is labelled");
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    vl_volume_free(&map);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : (uint64_t)time(NULL) ^ (uint64_t)clock();
    if (!seed)
        seed = 1;
    test_random_state = seed;
    printf("seed %" PRIu64 " (rerun: multilabel_unit %" PRIu64 ")\n", seed, seed);
    static const int connectivities[] = {6, 18, 26, 4, 8};
    static const vl_label_order orders[] = {VL_ORDER_MATLAB, VL_ORDER_MATLAB_XY, VL_ORDER_SIZE, VL_ORDER_SIZE_RASTER};
    static const vl_dtype dtypes[] = {VL_U8, VL_U16, VL_U32, VL_I16};
    int maps = 0;
    for (int c = 0; c < 160; c++) {
        const int64_t nx = 1 + (int64_t)(test_random() % 19), ny = 1 + (int64_t)(test_random() % 17),
                      nz = 1 + (int64_t)(test_random() % 13);
        const uint32_t class_count = 2 + (uint32_t)(test_random() % 199);
        const vl_dtype dtype = dtypes[c % 4];
        vl_volume map;
        if (vl_volume_create(&map, nx, ny, nz, dtype) != VL_OK)
            return test_finish("multilabel_unit");
        fill_class_map(&map, class_count);
        const int connectivity = connectivities[c % 5];
        const vl_label_order order = orders[c / 5 % 4];
        const int threads = 1 + (int)(test_random() % 4);
        char what[200];
        snprintf(what, sizeof what, "map %d %lldx%lldx%lld %s, %u classes, conn %d, order %s, %d threads", c,
                 (long long)nx, (long long)ny, (long long)nz, vl_dtype_name(dtype), class_count, connectivity,
                 vl_label_order_name(order), threads);
        check_map(&map, connectivity, order, threads, what);
        if (c % 4 == 0)
            check_filter_and_clean(&map, connectivity, what);
        vl_volume_free(&map);
        maps++;
    }
    test_fill_rule();
    test_refusals();
    printf("multilabel_unit: %d random class maps\n", maps);
    return test_finish("multilabel_unit");
}
