#define _POSIX_C_SOURCE 200809L
/* One series' compute and write stages, phase by phase, on the CT phantom (i16) with the bone threshold:
 *   separate   vl_threshold (host), vl_label_volume, vl_component_stats_compute (each GPU stage uploads its own
 *              inputs, labels come back u32): what `voxlabel label` runs
 *   resident   vl_series_label with one engine kept across the repeats: upload, threshold, label (+ sizes),
 *              download (labels narrowed on the device), stats
 *   write      vl_write_volume of the labels as labels.nii.gz: the resident u8/u16 labels and the separate u32
 *              ones, at every thread count from all cores down to 1 (halving)
 * Each line is the mean over the repeats after one warm-up run. DEVICE (default gpu) is the device of both compute
 * paths; cpu runs them on the CPU.
 * usage: cohort_series_bench NX NY NZ REPEATS WORK_DIR [DEVICE] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "voxlabel/io.h"
#include "voxlabel/label.h"
#include "voxlabel/phantom.h"
#include "voxlabel/series.h"
#include "voxlabel/stats.h"
#include "voxlabel/threads.h"
#include "voxlabel/threshold.h"
#include "bench_clock.h"

static int fail(const char *what)
{
    fprintf(stderr, "cohort_series_bench: %s: %s\n", what, vl_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: cohort_series_bench NX NY NZ REPEATS WORK_DIR [DEVICE]\n");
        return 2;
    }
    vl_phantom_options phantom;
    vl_phantom_options_default(&phantom);
    phantom.nx = atoll(argv[1]);
    phantom.ny = atoll(argv[2]);
    phantom.nz = atoll(argv[3]);
    const int repeats = atoi(argv[4]);
    const char *work = argv[5];
    vl_label_options label;
    vl_label_options_default(&label);
    if (vl_device_parse(argc > 6 ? argv[6] : "gpu", &label.device) != VL_OK)
        return fail("device");
    vl_stats_options stats_options;
    vl_stats_options_default(&stats_options);
    stats_options.device = label.device;
    vl_volume ct;
    if (vl_phantom_generate(&phantom, &ct) != VL_OK)
        return fail("phantom");
    printf("series: %lldx%lldx%lld %s, bone (>= 300), device %s, %d repeats after one warm-up\n", (long long)ct.nx,
           (long long)ct.ny, (long long)ct.nz, vl_dtype_name(ct.dtype), argc > 6 ? argv[6] : "gpu", repeats);

    /* separate stages */
    double sums[5] = {0};
    vl_volume wide = {0};
    uint32_t count = 0;
    for (int r = 0; r <= repeats; r++) {
        vl_volume mask, labels;
        vl_label_result result;
        vl_component_stats *stats = NULL;
        const double t0 = now();
        if (vl_threshold(&ct, 300, 1e300, &mask) != VL_OK)
            return fail("threshold");
        const double t1 = now();
        if (vl_label_volume(&mask, &labels, &label, &result) != VL_OK)
            return fail("label");
        const double t2 = now();
        if (vl_component_stats_compute(&labels, &ct, result.count, &stats_options, &stats) != VL_OK)
            return fail("statistics");
        const double t3 = now();
        if (r > 0) {
            sums[0] += t1 - t0, sums[1] += t2 - t1, sums[2] += t3 - t2;
        }
        count = result.count;
        vl_volume_free(&mask);
        vl_component_stats_free(stats);
        vl_label_result_free(&result);
        vl_volume_free(&wide);
        wide = labels;
    }
    printf("separate: threshold %.2f ms, label %.2f ms, stats %.2f ms, compute %.2f ms (N %u)\n",
           1e3 * sums[0] / repeats, 1e3 * sums[1] / repeats, 1e3 * sums[2] / repeats,
           1e3 * (sums[0] + sums[1] + sums[2]) / repeats, count);

    /* resident, one engine */
    vl_series_engine *engine = NULL;
    if (vl_series_engine_create(&engine) != VL_OK)
        return fail("engine");
    memset(sums, 0, sizeof sums);
    double total = 0;
    vl_volume narrow = {0};
    for (int r = 0; r <= repeats; r++) {
        vl_volume labels;
        vl_label_result result;
        vl_component_stats *stats = NULL;
        vl_series_timings timings;
        const vl_series_request request = {300, 1e300, &label, &stats_options, 1};
        const double t0 = now();
        if (vl_series_label(engine, &ct, &request, &labels, &result, &stats, &timings) != VL_OK)
            return fail("series");
        const double t1 = now();
        if (r > 0) {
            sums[0] += timings.upload, sums[1] += timings.threshold, sums[2] += timings.label;
            sums[3] += timings.download, sums[4] += timings.stats, total += t1 - t0;
        }
        vl_component_stats_free(stats);
        vl_label_result_free(&result);
        vl_volume_free(&narrow);
        narrow = labels;
    }
    printf("resident: upload %.2f ms, threshold %.2f ms, label %.2f ms, download %.2f ms, stats %.2f ms, "
           "compute %.2f ms (labels %s)\n",
           1e3 * sums[0] / repeats, 1e3 * sums[1] / repeats, 1e3 * sums[2] / repeats, 1e3 * sums[3] / repeats,
           1e3 * sums[4] / repeats, 1e3 * total / repeats, vl_dtype_name(narrow.dtype));
    vl_series_engine_free(engine);

    /* write */
    char path[4096];
    snprintf(path, sizeof path, "%s/cohort_series_bench.nii.gz", work);
    vl_write_options write;
    vl_write_options_default(&write);
    write.force = 1;
    write.is_label_map = 1;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (long threads = cores; threads >= 1; threads /= 2) {
        vl_set_thread_limit((int)threads);
        for (int w = 0; w < 2; w++) {
            const vl_volume *labels = w ? &wide : &narrow;
            double seconds = 0;
            for (int r = 0; r <= repeats; r++) {
                const double t0 = now();
                if (vl_write_volume(path, labels, &write) != VL_OK)
                    return fail("write");
                if (r > 0)
                    seconds += now() - t0;
            }
            printf("write %s labels, %2ld threads: %.2f ms\n", vl_dtype_name(labels->dtype), threads,
                   1e3 * seconds / repeats);
        }
    }
    remove(path);
    vl_volume_free(&wide);
    vl_volume_free(&narrow);
    vl_volume_free(&ct);
    return 0;
}
