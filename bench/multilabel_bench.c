/* CPU multilabel benchmark (issue 17): labelling a class map and the per-class clean-up, on one thread by
 * default, median of REPEATS runs. bench/multilabel_bench.sh runs it beside cc3d (bench/multilabel_peers.py).
 *   label       vl_label_multilabel_cpu: components of every class, matlab order, sizes and classes
 *   dust        label + vl_label_filter_per_class(min-size) + vl_class_map_clean (cc3d.dust's job)
 *   largest     label + vl_label_filter_per_class(largest 1 per class) + vl_class_map_clean
 * usage: multilabel_bench MAP.raw NX NY NZ u8|u16|u32 REPEATS [THREADS [MIN_SIZE]]
 * Output: "label SECONDS CPU_SECONDS N", "dust ...", "largest ..." (wall clock and the process's CPU time:
 * on one thread the CPU time is the work, and stays meaningful on a loaded machine). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "voxlabel/label.h"
#include "voxlabel/threads.h"

static double clock_seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run: label, then (mode 1) min-size or (mode 2) largest-per-class and the cleaned map; returns the
 * wall seconds and sets *cpu_seconds. */
static double run(const vl_volume *map, const vl_label_options *options, int mode, uint64_t min_size, uint32_t *count,
                  double *cpu_seconds)
{
    vl_volume labels, cleaned;
    vl_label_result result;
    const double start = clock_seconds(CLOCK_MONOTONIC), cpu_start = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
    if (vl_label_multilabel_cpu(map, &labels, options, &result) != VL_OK) {
        fprintf(stderr, "multilabel_bench: %s\n", vl_last_error());
        exit(1);
    }
    if (mode) {
        if (vl_label_filter_per_class(&labels, &result, mode == 1 ? min_size : 0, mode == 2 ? 1 : 0) != VL_OK ||
            vl_class_map_clean(map, &labels, VL_FILL_BACKGROUND, options->connectivity, &cleaned) != VL_OK) {
            fprintf(stderr, "multilabel_bench: %s\n", vl_last_error());
            exit(1);
        }
    }
    const double seconds = clock_seconds(CLOCK_MONOTONIC) - start;
    *cpu_seconds = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
    *count = result.count;
    if (mode)
        vl_volume_free(&cleaned);
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    return seconds;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: multilabel_bench MAP.raw NX NY NZ u8|u16|u32 REPEATS [THREADS [MIN_SIZE]]\n");
        return 2;
    }
    const vl_dtype dtype = !strcmp(argv[5], "u8") ? VL_U8 : !strcmp(argv[5], "u16") ? VL_U16 : VL_U32;
    const int repeats = atoi(argv[6]) > 0 ? atoi(argv[6]) : 1;
    vl_volume map;
    if (vl_volume_create(&map, atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), dtype) != VL_OK)
        return 2;
    FILE *in = fopen(argv[1], "rb");
    const size_t bytes = (size_t)vl_volume_voxels(&map) * vl_dtype_size(dtype);
    if (!in || fread(map.data, 1, bytes, in) != bytes) {
        fprintf(stderr, "multilabel_bench: cannot read %zu bytes from %s\n", bytes, argv[1]);
        return 2;
    }
    fclose(in);
    vl_label_options options;
    vl_label_options_default(&options);
    options.threads = argc > 7 ? atoi(argv[7]) : 1;
    vl_set_thread_limit(options.threads); /* the filter's remap too */
    const uint64_t min_size = argc > 8 ? strtoull(argv[8], NULL, 10) : 100;
    static const char *const names[] = {"label", "dust", "largest"};
    double *times = malloc((size_t)repeats * sizeof *times), *cpu = malloc((size_t)repeats * sizeof *cpu);
    for (int mode = 0; mode < 3; mode++) {
        uint32_t count = 0;
        for (int r = 0; r < repeats; r++)
            times[r] = run(&map, &options, mode, min_size, &count, &cpu[r]);
        qsort(times, (size_t)repeats, sizeof *times, compare_doubles);
        qsort(cpu, (size_t)repeats, sizeof *cpu, compare_doubles);
        printf("%s %.4f %.4f %u\n", names[mode], times[repeats / 2], cpu[repeats / 2], count);
        fflush(stdout);
    }
    free(times);
    free(cpu);
    vl_volume_free(&map);
    return 0;
}
