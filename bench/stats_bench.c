/* Times component statistics on the labels of the CT-like phantom (docs/design.md §10).
 * usage: stats_bench [NX NY NZ [THRESHOLD [THREADS [REPEATS [DEVICE [RAW_PREFIX]]]]]]
 *   defaults 512 512 400, HU >= 150, all cores, 3 repeats, cpu; DEVICE is cpu or gpu.
 * RAW_PREFIX writes PREFIX_labels.u32 and PREFIX_hu.i16 (x fastest) for the peers in bench/stats_peers.py.
 * Prints one line per measurement. With DEVICE gpu it also prints the device times of the statistics pass and
 * of the median (CUDA events on the device-resident volume, i.e. without the uploads) next to the end-to-end
 * time of vl_component_stats_compute (uploads, pass, download, finalising on the host). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats/stats_gpu.h"
#include "voxlabel/threshold.h"
#include "voxlabel/label.h"
#include "voxlabel/phantom.h"
#include "voxlabel/stats.h"
#include "bench_clock.h"

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int write_raw(const char *path, const void *data, size_t bytes)
{
    FILE *out = fopen(path, "wb");
    int ok = out && fwrite(data, 1, bytes, out) == bytes;
    if (out)
        ok &= fclose(out) == 0;
    return ok;
}

static int fail(const char *what)
{
    fprintf(stderr, "stats_bench: %s: %s\n", what, vl_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    vl_phantom_options phantom;
    vl_phantom_options_default(&phantom);
    phantom.nx = argc > 1 ? atoll(argv[1]) : 512;
    phantom.ny = argc > 2 ? atoll(argv[2]) : 512;
    phantom.nz = argc > 3 ? atoll(argv[3]) : 400;
    const double threshold = argc > 4 ? atof(argv[4]) : 150;
    const int threads = argc > 5 ? atoi(argv[5]) : 0;
    const int repeats = argc > 6 ? atoi(argv[6]) : 3;
    const vl_device_kind device = argc > 7 && strcmp(argv[7], "gpu") == 0 ? VL_DEVICE_GPU : VL_DEVICE_CPU;
    const char *raw_prefix = argc > 8 ? argv[8] : NULL;

    vl_volume hu, mask, labels;
    if (vl_phantom_generate(&phantom, &hu) != VL_OK)
        return fail("phantom");
    if (vl_threshold(&hu, threshold, 1e9, &mask) != VL_OK)
        return fail("threshold");
    vl_label_options label_options;
    vl_label_options_default(&label_options);
    label_options.device.kind = VL_DEVICE_CPU;
    vl_label_result result;
    if (vl_label_volume_cpu(&mask, &labels, &label_options, &result) != VL_OK)
        return fail("label");
    uint64_t foreground = 0, largest = 0, singletons = 0;
    for (uint32_t k = 0; k < result.count; k++) {
        foreground += result.sizes[k];
        largest = result.sizes[k] > largest ? result.sizes[k] : largest;
        singletons += result.sizes[k] == 1;
    }
    printf("volume %lldx%lldx%lld threshold %g: %u components, foreground %.1f%%, singletons %.1f%%, largest %.1f%% of "
           "foreground\n",
           (long long)hu.nx, (long long)hu.ny, (long long)hu.nz, threshold, result.count,
           100.0 * (double)foreground / (double)vl_volume_voxels(&hu),
           100.0 * (double)singletons / (double)(result.count ? result.count : 1),
           100.0 * (double)largest / (double)(foreground ? foreground : 1));
    if (raw_prefix) {
        char path[4096];
        snprintf(path, sizeof path, "%s_labels.u32", raw_prefix);
        if (!write_raw(path, labels.data, sizeof(uint32_t) * (size_t)vl_volume_voxels(&labels)))
            return fail(path);
        snprintf(path, sizeof path, "%s_hu.i16", raw_prefix);
        if (!write_raw(path, hu.data, sizeof(int16_t) * (size_t)vl_volume_voxels(&hu)))
            return fail(path);
    }
    static const struct {
        const char *name;
        vl_stats_level level;
        int intensity;
        unsigned extras;
    } cases[] = {
        {"basic (count, bbox, centroid)", VL_STATS_BASIC, 0, 0},
        {"basic + HU mean/min/max", VL_STATS_BASIC, 1, 0},
        {"full without intensity", VL_STATS_FULL, 0, 0},
        {"full with HU (exact median)", VL_STATS_FULL, 1, 0},
        {"full with HU + Euler", VL_STATS_FULL, 1, VL_STATS_EXTRA_EULER},
        {"full with HU + skewness/kurtosis/border", VL_STATS_FULL, 1, VL_STATS_EXTRA_VOXEL},
        {"full with HU + hull/Feret/box", VL_STATS_FULL, 1, VL_STATS_EXTRA_HULL},
        {"full with HU, every column", VL_STATS_FULL, 1, VL_STATS_EXTRA_ALL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        vl_stats_options options;
        vl_stats_options_default(&options);
        options.level = cases[c].level;
        options.extras = cases[c].extras;
        options.threads = threads;
        options.device.kind = device;
        double times[64];
        int n = 0;
        for (int r = 0; r < repeats && r < 64; r++) {
            vl_component_stats *stats = NULL;
            const double start = now();
            if (vl_component_stats_compute(&labels, cases[c].intensity ? &hu : NULL, result.count, &options, &stats) !=
                VL_OK)
                return fail(cases[c].name);
            times[n++] = now() - start;
            vl_component_stats_free(stats);
        }
        qsort(times, (size_t)n, sizeof times[0], compare_double);
        printf("%s %s: %.4f s end to end (median of %d, %u components)\n", device == VL_DEVICE_GPU ? "gpu" : "cpu",
               cases[c].name, times[n / 2], n, result.count);
        if (device != VL_DEVICE_GPU)
            continue;
        const size_t count = result.count;
        vl_stats_sums *sums = malloc(sizeof *sums * count);
        vl_stats_shape_sums *shape = malloc(sizeof *shape * count);
        double *medians = malloc(sizeof *medians * count);
        double pass[64], median[64], transfer[64];
        n = 0;
        for (int r = 0; r < repeats && r < 64; r++) {
            vl_stats_gpu_timing timing;
            if (vl_stats_sums_gpu(&labels, cases[c].intensity ? &hu : NULL, result.count, &options, sums, shape,
                                  medians, NULL, &timing) != VL_OK)
                return fail("gpu sums");
            pass[n] = timing.pass_ms;
            median[n] = timing.median_ms;
            transfer[n++] = timing.transfer_ms;
        }
        qsort(pass, (size_t)n, sizeof pass[0], compare_double);
        qsort(median, (size_t)n, sizeof median[0], compare_double);
        qsort(transfer, (size_t)n, sizeof transfer[0], compare_double);
        printf("gpu %s: device pass %.3f ms + median %.3f ms = %.3f ms (uploads %.1f ms, not included)\n",
               cases[c].name, pass[n / 2], median[n / 2], pass[n / 2] + median[n / 2], transfer[n / 2]);
        free(sums);
        free(shape);
        free(medians);
    }
    vl_label_result_free(&result);
    vl_volume_free(&labels);
    vl_volume_free(&mask);
    vl_volume_free(&hu);
    return 0;
}
