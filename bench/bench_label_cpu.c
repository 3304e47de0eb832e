/* Times the CPU labeller (label + bwlabeln-order relabel + sizes) on a mask read from a raw u8 file.
 * usage: bench_label_cpu MASK.raw NX NY NZ CONN THREADS REPEATS
 * Prints one line: median seconds, N. The peers run in the same bench/run invocation on the same file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "voxlabel/label.h"
#include "bench_clock.h"

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: bench_label_cpu MASK.raw NX NY NZ CONN THREADS REPEATS\n");
        return 2;
    }
    vl_volume mask;
    if (vl_volume_create(&mask, atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), VL_U8) != VL_OK) {
        fprintf(stderr, "%s\n", vl_last_error());
        return 1;
    }
    FILE *file = fopen(argv[1], "rb");
    if (!file || fread(mask.data, 1, (size_t)vl_volume_voxels(&mask), file) != (size_t)vl_volume_voxels(&mask)) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(file);
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    options.connectivity = atoi(argv[5]);
    options.threads = atoi(argv[6]);
    int repeats = atoi(argv[7]);
    double times[64];
    uint32_t count = 0;
    for (int r = 0; r < repeats && r < 64; r++) {
        vl_volume labels;
        vl_label_result result;
        double start = now();
        if (vl_label_volume(&mask, &labels, &options, &result) != VL_OK) {
            fprintf(stderr, "%s\n", vl_last_error());
            return 1;
        }
        times[r] = now() - start;
        count = result.count;
        vl_volume_free(&labels);
        vl_label_result_free(&result);
    }
    qsort(times, (size_t)repeats, sizeof times[0], compare_double);
    printf("%.4f %u\n", times[repeats / 2], count);
    vl_volume_free(&mask);
    return 0;
}
