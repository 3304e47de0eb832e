/* CPU timings of the thesis's stages (Tables 3.1-3.3): HSV + threshold, erosion + dilation (the thesis's
 * crosses), 4-connected CCL with MATLAB-order labels, plus our shape stage; on 640x480, 800x600 and
 * 1600x1200 colour frames and per slice on a 512x512xN CT-like mask stack. Single-threaded (the thesis
 * ran one core) except the labeller line marked "all cores".
 * usage: stages2d_bench_cpu [--dump DIR] [--slices N] [--repeats R]
 *   --dump DIR writes the inputs (frame_WxH.rgb, ct_512x512xN.u8) for bench/stages2d_bench.py. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stages2d_bench.h"
#include "voxlabel/color.h"
#include "voxlabel/morphology.h"
#include "voxlabel/shape.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_double);
    return values[count / 2];
}

static void check(vl_status status)
{
    if (status != VL_OK) {
        fprintf(stderr, "stages2d_bench_cpu: %s\n", vl_last_error());
        exit(1);
    }
}

static void dump(const char *directory, const char *name, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(data, 1, bytes, file) != bytes || fclose(file) != 0) {
        fprintf(stderr, "stages2d_bench_cpu: cannot write %s\n", path);
        exit(1);
    }
}

/* Labels with the CPU labeller on `threads` threads; returns milliseconds and the component count. */
static double label_ms(vl_volume *mask, int threads, uint32_t *count)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = 4;
    options.device.kind = VL_DEVICE_CPU;
    options.threads = threads;
    vl_volume labels;
    vl_label_result result;
    double start = now_ms();
    check(vl_label_volume(mask, &labels, &options, &result));
    double elapsed = now_ms() - start;
    *count = result.count;
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    return elapsed;
}

int main(int argc, char **argv)
{
    const char *dump_dir = NULL;
    int slices = 400, repeats = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--dump") == 0)
            dump_dir = argv[i + 1];
        else if (strcmp(argv[i], "--slices") == 0)
            slices = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--repeats") == 0)
            repeats = atoi(argv[i + 1]);
    }
    repeats = repeats < 1 ? 1 : repeats > 64 ? 64 : repeats;
    const int sizes[3][2] = {{640, 480}, {800, 600}, {1600, 1200}};
    vl_color_range range;
    vl_color_range_default(&range, VL_COLOR_THESIS); /* hue 0 (red), tolerance 20, S >= 30, V >= 30 */
    printf("# CPU, single thread, median of %d (ms)\n", repeats);
    printf("%-14s %10s %10s %10s %10s %10s %12s %8s\n", "input", "hsv+thr", "ero+dil", "ccl4", "total3", "shapes",
           "ccl4 all-cores", "N");
    for (int s = 0; s < 3; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        int64_t pixels = (int64_t)w * h;
        uint8_t *rgb = malloc((size_t)pixels * 3);
        bench_make_frame(rgb, w, h, (uint64_t)s + 1);
        if (dump_dir) {
            char name[64];
            snprintf(name, sizeof name, "frame_%dx%d.rgb", w, h);
            dump(dump_dir, name, rgb, (size_t)pixels * 3);
        }
        double t_color[64], t_morph[64], t_label[64], t_shape[64], t_label_all[64];
        uint32_t count = 0;
        for (int r = 0; r < repeats; r++) {
            vl_volume mask;
            check(vl_volume_create_uninitialised(&mask, w, h, 1, VL_U8));
            double start = now_ms();
            check(vl_color_threshold(rgb, mask.data, pixels, &range, &(vl_device){.kind = VL_DEVICE_CPU}));
            t_color[r] = now_ms() - start;
            start = now_ms();
            check(vl_morphology_apply(&mask, VL_MORPH_OPEN, VL_SE_THESIS, 0, 1, &(vl_device){.kind = VL_DEVICE_CPU}, NULL));
            t_morph[r] = now_ms() - start;
            t_label[r] = label_ms(&mask, 1, &count);
            t_label_all[r] = label_ms(&mask, 0, &count);
            vl_slice_labels labels;
            check(vl_label_slices(&mask, 4, &(vl_device){.kind = VL_DEVICE_CPU}, &labels));
            vl_shape_table table;
            start = now_ms();
            check(vl_shape_measure(&labels, NULL, NULL, &table));
            t_shape[r] = now_ms() - start;
            vl_shape_table_free(&table);
            vl_slice_labels_free(&labels);
            vl_volume_free(&mask);
        }
        double c = median(t_color, repeats), m = median(t_morph, repeats), l = median(t_label, repeats);
        char name[32];
        snprintf(name, sizeof name, "%dx%d", w, h);
        printf("%-14s %10.2f %10.2f %10.2f %10.2f %10.2f %12.2f %8u\n", name, c, m, l, c + m + l,
               median(t_shape, repeats), median(t_label_all, repeats), count);
        free(rgb);
    }

    vl_volume stack;
    check(vl_volume_create_uninitialised(&stack, 512, 512, slices, VL_U8));
    bench_make_ct_mask(stack.data, 512, 512, slices);
    if (dump_dir) {
        char name[64];
        snprintf(name, sizeof name, "ct_512x512x%d.u8", slices);
        dump(dump_dir, name, stack.data, (size_t)vl_volume_voxels(&stack));
    }
    vl_volume work;
    check(vl_volume_create_uninitialised(&work, 512, 512, slices, VL_U8));
    int stack_repeats = repeats < 3 ? repeats : 3;
    double t_morph[3], t_label[3], t_label_all[3];
    uint32_t count = 0;
    for (int r = 0; r < stack_repeats; r++) {
        memcpy(work.data, stack.data, (size_t)vl_volume_voxels(&stack));
        double start = now_ms();
        check(vl_morphology_apply(&work, VL_MORPH_OPEN, VL_SE_THESIS, 0, 1, &(vl_device){.kind = VL_DEVICE_CPU}, NULL));
        t_morph[r] = now_ms() - start;
        t_label[r] = label_ms(&work, 1, &count);
        t_label_all[r] = label_ms(&work, 0, &count);
    }
    double m = median(t_morph, stack_repeats), l = median(t_label, stack_repeats);
    char name[32];
    snprintf(name, sizeof name, "512x512x%d", slices);
    printf("%-14s %10s %10.1f %10.1f %10.1f %10s %12.1f %8u   (stack total; per slice: ero+dil %.3f, ccl4 %.3f)\n",
           name, "-", m, l, m + l, "-", median(t_label_all, stack_repeats), count, m / slices, l / slices);
    vl_volume_free(&work);
    vl_volume_free(&stack);
    return 0;
}
