/* CPU labeller against the flood-fill oracle of tests/label_reference.h: every connectivity, order and
 * thread count on random volumes of odd shapes and densities, plus sizes and the post filters. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "label_reference.h"
#include "voxlabel/label.h"
#include "test_check.h"


static void check_volume(const vl_volume *mask, int connectivity, vl_label_order order, int threads, const char *what)
{
    const int64_t n = vl_volume_voxels(mask);
    uint32_t *expected = malloc((size_t)n * sizeof *expected);
    uint32_t expected_count = reference_label(mask->data, mask->nx, mask->ny, mask->nz, connectivity, order, expected);
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = order;
    options.threads = threads;
    options.device.kind = VL_DEVICE_CPU;
    vl_volume labels;
    vl_label_result result;
    vl_status status = vl_label_volume(mask, &labels, &options, &result);
    CHECK(status == VL_OK, "%s: status %d", what, status);
    if (status != VL_OK) {
        free(expected);
        return;
    }
    CHECK(result.count == expected_count, "%s conn %d order %s threads %d: N %u, expected %u", what, connectivity,
          vl_label_order_name(order), threads, result.count, expected_count);
    const uint32_t *got = labels.data;
    int64_t mismatches = 0;
    uint64_t *sizes = calloc((size_t)result.count + 2, sizeof *sizes);
    for (int64_t i = 0; i < n; i++) {
        mismatches += got[i] != expected[i];
        if (got[i] <= result.count)
            sizes[got[i]]++;
    }
    CHECK(mismatches == 0, "%s %lldx%lldx%lld conn %d order %s threads %d: %lld voxels differ", what,
          (long long)mask->nx, (long long)mask->ny, (long long)mask->nz, connectivity, vl_label_order_name(order),
          threads, (long long)mismatches);
    for (uint32_t l = 1; l <= result.count; l++)
        CHECK(result.sizes[l - 1] == sizes[l], "%s: size of label %u is %" PRIu64 ", counted %" PRIu64, what, l,
              result.sizes[l - 1], sizes[l]);
    free(sizes);
    free(expected);
    vl_volume_free(&labels);
    vl_label_result_free(&result);
}

static void fill_random(vl_volume *mask, double density)
{
    uint8_t *data = mask->data;
    uint64_t threshold = (uint64_t)(density * 18446744073709551615.0);
    for (int64_t i = 0; i < vl_volume_voxels(mask); i++)
        data[i] = test_random() < threshold ? (uint8_t)(1 + test_random() % 3) : 0;
}

static void test_filters(void)
{
    /* Three components of sizes 1, 3, 2 in MATLAB order along x. */
    vl_volume mask;
    vl_volume_create(&mask, 9, 1, 1, VL_U8);
    const uint8_t row[9] = {1, 0, 1, 1, 1, 0, 1, 1, 0};
    for (int i = 0; i < 9; i++)
        ((uint8_t *)mask.data)[i] = row[i];
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    vl_volume labels;
    vl_label_result result;
    CHECK(vl_label_volume(&mask, &labels, &options, &result) == VL_OK, "filters: labelling failed");
    CHECK(result.count == 3, "filters: N %u", result.count);
    vl_label_filter(&labels, &result, 2, 0);
    const uint32_t *l = labels.data;
    CHECK(result.count == 2 && l[0] == 0 && l[2] == 1 && l[6] == 2, "min-size: N %u labels %u %u %u", result.count,
          l[0], l[2], l[6]);
    CHECK(result.sizes[0] == 3 && result.sizes[1] == 2, "min-size sizes");
    vl_label_filter(&labels, &result, 0, 1);
    CHECK(result.count == 1 && l[2] == 1 && l[6] == 0 && result.sizes[0] == 3, "largest 1: N %u", result.count);
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    vl_volume_free(&mask);
}

int main(int argc, char **argv)
{
    test_random_state = argc > 1 ? strtoull(argv[1], NULL, 10) : (uint64_t)time(NULL) * 2654435761u;
    if (test_random_state == 0)
        test_random_state = 1;
    printf("seed %" PRIu64 " (rerun with: label_unit %" PRIu64 ")\n", test_random_state, test_random_state);
    static const int64_t shapes[][3] = {{1, 17, 1}, {17, 1, 1}, {1, 1, 17}, {7, 13, 5}, {13, 7, 5}, {2, 2, 2},
                                        {64, 48, 20}, {100, 3, 3}, {3, 100, 4}, {33, 29, 1}, {9, 64, 31}, {1, 1, 1},
                                        {63, 4, 3},  {65, 4, 3},  {128, 3, 2}, {129, 2, 2}};
    static const int connectivities[] = {4, 8, 6, 18, 26};
    static const double densities[] = {0.05, 0.2, 0.35, 0.5, 0.6, 0.9};
    int volumes = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < sizeof densities / sizeof densities[0]; d++) {
            vl_volume mask;
            vl_volume_create(&mask, shapes[s][0], shapes[s][1], shapes[s][2], VL_U8);
            fill_random(&mask, densities[d]);
            volumes++;
            for (size_t c = 0; c < sizeof connectivities / sizeof connectivities[0]; c++)
                for (int order = VL_ORDER_MATLAB; order <= VL_ORDER_SIZE_RASTER; order++)
                    check_volume(&mask, connectivities[c], (vl_label_order)order, 1 + (int)(test_random() % 4),
                                 "random");
            vl_volume_free(&mask);
        }
    /* Empty and full volumes. */
    for (int fill = 0; fill <= 1; fill++) {
        vl_volume mask;
        vl_volume_create(&mask, 11, 6, 4, VL_U8);
        for (int64_t i = 0; i < vl_volume_voxels(&mask); i++)
            ((uint8_t *)mask.data)[i] = (uint8_t)fill;
        for (size_t c = 0; c < sizeof connectivities / sizeof connectivities[0]; c++)
            check_volume(&mask, connectivities[c], VL_ORDER_MATLAB, 2, fill ? "full" : "empty");
        vl_volume_free(&mask);
        volumes++;
    }
    test_filters();
    printf("label_unit: %d volumes x 5 connectivities x 4 orders\n", volumes);
    return test_finish("label_unit");
}
