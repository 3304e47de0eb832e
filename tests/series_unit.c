/* vl_series_label on the CPU == the three calls `voxlabel label` makes (vl_threshold, vl_label_volume,
 * vl_component_stats_compute with the CT as intensity): the same labels (u32), N, sizes and statistics, byte for
 * byte, with an engine and without; where it ran is recorded for both stages; an empty or NaN range is refused
 * before anything is made. Also: the statistics of u8 labels equal those of the same labels as u32 (the GPU half
 * measures its narrowed labels' CPU groups). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "voxlabel/phantom.h"
#include "voxlabel/series.h"
#include "voxlabel/threshold.h"
#include "test_check.h"

static void compare(vl_series_engine *engine, const vl_volume *ct, double lo, double hi, int connectivity,
                    vl_label_order order, vl_stats_level level)
{
    vl_label_options label;
    vl_label_options_default(&label);
    label.connectivity = connectivity;
    label.order = order;
    label.device.kind = VL_DEVICE_CPU;
    vl_stats_options stats_options;
    vl_stats_options_default(&stats_options);
    stats_options.level = level;
    stats_options.device.kind = VL_DEVICE_CPU;
    stats_options.connectivity = connectivity;

    vl_volume mask, labels[2];
    vl_label_result result[2];
    vl_component_stats *stats[2] = {NULL, NULL};
    const int separate = vl_threshold(ct, lo, hi, &mask) == VL_OK &&
                         vl_label_volume(&mask, &labels[0], &label, &result[0]) == VL_OK &&
                         vl_component_stats_compute(&labels[0], ct, result[0].count, &stats_options, &stats[0]) == VL_OK;
    CHECK(separate, "the separate stages failed");
    vl_device_outcome stats_outcome = {0};
    stats_options.outcome = &stats_outcome;
    const vl_series_request request = {lo, hi, &label, &stats_options, 1};
    vl_series_timings timings;
    const int series = vl_series_label(engine, ct, &request, &labels[1], &result[1], &stats[1], &timings) == VL_OK;
    CHECK(series, "vl_series_label failed");
    if (separate && series) {
        const uint32_t n = result[0].count;
        CHECK(result[1].count == n, "N %u, separate %u", result[1].count, n);
        CHECK(labels[1].dtype == VL_U32 && memcmp(labels[0].data, labels[1].data, 4 * (size_t)vl_volume_voxels(ct)) == 0,
              "labels differ");
        CHECK(result[1].count != n || memcmp(result[0].sizes, result[1].sizes, n * sizeof *result[0].sizes) == 0,
              "sizes differ");
        CHECK(result[1].count != n || n == 0 || memcmp(stats[0], stats[1], n * sizeof *stats[0]) == 0,
              "statistics differ");
        CHECK(result[1].outcome.used == VL_DEVICE_CPU && stats_outcome.used == VL_DEVICE_CPU,
              "the outcome does not say cpu");
        CHECK(timings.upload == 0 && timings.download == 0 && timings.threshold >= 0 && timings.label >= 0,
              "timings");
        printf("[%g, %g] conn %d %s %s: N %u identical\n", lo, hi, connectivity, vl_label_order_name(order),
               level == VL_STATS_FULL ? "full" : "basic", n);
    }
    if (separate && result[0].count <= UINT8_MAX) {
        /* The GPU half hands the statistics' CPU groups narrowed labels: they must measure the same. */
        vl_volume narrow;
        vl_component_stats *narrow_stats = NULL;
        CHECK(vl_volume_create_uninitialised(&narrow, ct->nx, ct->ny, ct->nz, VL_U8) == VL_OK, "narrow labels");
        narrow.geometry = labels[0].geometry;
        for (int64_t i = 0; i < vl_volume_voxels(ct); i++)
            ((uint8_t *)narrow.data)[i] = (uint8_t)((const uint32_t *)labels[0].data)[i];
        stats_options.outcome = NULL;
        CHECK(vl_component_stats_compute(&narrow, ct, result[0].count, &stats_options, &narrow_stats) == VL_OK &&
                  (result[0].count == 0 || memcmp(stats[0], narrow_stats, result[0].count * sizeof *stats[0]) == 0),
              "statistics of u8 labels differ from those of the same u32 labels");
        vl_component_stats_free(narrow_stats);
        vl_volume_free(&narrow);
    }
    for (int k = 0; k < 2; k++) {
        vl_component_stats_free(stats[k]);
        if (k == 0 ? separate : series) {
            vl_label_result_free(&result[k]);
            vl_volume_free(&labels[k]);
        }
    }
    if (separate)
        vl_volume_free(&mask);
}

int main(void)
{
    vl_phantom_options options;
    vl_phantom_options_default(&options);
    options.nx = 97;
    options.ny = 83;
    options.nz = 31;
    vl_volume ct;
    CHECK(vl_phantom_generate(&options, &ct) == VL_OK, "phantom");
    vl_series_engine *engine = NULL;
    CHECK(vl_series_engine_create(&engine) == VL_OK, "engine");
    compare(engine, &ct, 300, INFINITY, 26, VL_ORDER_MATLAB, VL_STATS_FULL);
    compare(engine, &ct, -100, 200, 6, VL_ORDER_SIZE, VL_STATS_BASIC);
    compare(NULL, &ct, -INFINITY, -900, 8, VL_ORDER_MATLAB_XY, VL_STATS_BASIC);
    compare(engine, &ct, 40000, INFINITY, 18, VL_ORDER_SIZE_RASTER, VL_STATS_FULL); /* selects nothing */

    vl_label_options label;
    vl_label_options_default(&label);
    label.device.kind = VL_DEVICE_CPU;
    vl_volume labels;
    vl_label_result result;
    vl_component_stats *stats = NULL;
    const vl_series_request empty = {5, 4, &label, NULL, 1}, not_a_number = {NAN, 4, &label, NULL, 1};
    CHECK(vl_series_label(engine, &ct, &empty, &labels, &result, &stats, NULL) == VL_ERR_ARGUMENT && !labels.data &&
              !stats && strstr(vl_last_error(), "empty"),
          "an empty range is refused");
    CHECK(vl_series_label(engine, &ct, &not_a_number, &labels, &result, &stats, NULL) == VL_ERR_ARGUMENT,
          "a NaN range is refused");
    vl_series_engine_free(engine);
    vl_volume_free(&ct);
    return test_finish("series_unit");
}
