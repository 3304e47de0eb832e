/* GPU multilabel benchmark (issue 17) on one class map, CUDA events, median of REPEATS after 3 warm-ups:
 *   multilabel   vl_gpu_multilabel_device: union-find + labels 1..N (matlab, size) + sizes + classes
 *   binary       vl_gpu_label_device on the foreground (class > 0) as a mask: our binary labelling of the
 *                same voxels, the yardstick of the multilabel path's cost
 *   e2e          vl_label_multilabel(GPU) host map -> host labels + per-class largest kept + cleaned map
 *                (wall clock, median of 5): the post-processing a segmentation user runs
 * usage: multilabel_gpu_bench MAP.raw NX NY NZ CONN REPEATS [ONLY]   (u8 class map)
 *   ONLY  multilabel or binary: that labelling alone, `matlab` order, no end to end (for a profiler)
 * Output: "multilabel_ORDER UNION_MS TOTAL_MS N", "binary_ORDER UNION_MS TOTAL_MS N", "e2e SECONDS KEPT". */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "label/ccl_gpu.h"
#include "label/ccl_multilabel_gpu.h"
#include "voxlabel/label.h"
#include "bench_clock.h"

enum { kWarmup = 3, kEndToEndRuns = 5 };

static int compare_floats(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void fail(const char *what)
{
    fprintf(stderr, "multilabel_gpu_bench: %s: %s\n", what, vl_last_error());
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: multilabel_gpu_bench MAP.raw NX NY NZ CONN REPEATS [multilabel|binary]\n");
        return 2;
    }
    const int64_t nx = atoll(argv[2]), ny = atoll(argv[3]), nz = atoll(argv[4]), voxels = nx * ny * nz;
    const int connectivity = atoi(argv[5]), repeats = atoi(argv[6]) > 0 ? atoi(argv[6]) : 1;
    const char *only = argc > 7 ? argv[7] : NULL;
    if (only && strcmp(only, "multilabel") != 0 && strcmp(only, "binary") != 0) {
        fprintf(stderr, "multilabel_gpu_bench: ONLY is multilabel or binary, not %s\n", only);
        return 2;
    }
    vl_volume map;
    if (vl_volume_create(&map, nx, ny, nz, VL_U8) != VL_OK)
        return 2;
    FILE *in = fopen(argv[1], "rb");
    if (!in || fread(map.data, 1, (size_t)voxels, in) != (size_t)voxels) {
        fprintf(stderr, "multilabel_gpu_bench: cannot read %lld bytes from %s\n", (long long)voxels, argv[1]);
        return 2;
    }
    fclose(in);
    uint8_t *mask = malloc((size_t)voxels);
    for (int64_t i = 0; i < voxels; i++)
        mask[i] = ((const uint8_t *)map.data)[i] != 0;
    void *device_map = NULL, *device_mask = NULL;
    uint32_t *device_labels = NULL;
    if (cudaMalloc(&device_map, (size_t)voxels) != cudaSuccess || cudaMalloc(&device_mask, (size_t)voxels) != cudaSuccess ||
        cudaMalloc((void **)&device_labels, (size_t)voxels * sizeof(uint32_t)) != cudaSuccess ||
        cudaMemcpy(device_map, map.data, (size_t)voxels, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(device_mask, mask, (size_t)voxels, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "multilabel_gpu_bench: no device memory for a %lld-voxel map\n", (long long)voxels);
        return 1;
    }
    float *union_ms = malloc((size_t)repeats * sizeof *union_ms), *total_ms = malloc((size_t)repeats * sizeof *total_ms);
    static const vl_label_order orders[] = {VL_ORDER_MATLAB, VL_ORDER_SIZE};
    for (int o = 0; o < (only ? 1 : 2); o++)
        for (int binary = 0; binary < 2; binary++) {
            if (only && binary != (strcmp(only, "binary") == 0))
                continue;
            uint32_t count = 0;
            for (int r = -kWarmup; r < repeats; r++) {
                float u = 0, t = 0;
                if (binary) {
                    vl_gpu_label_run run;
                    if (vl_gpu_label_device(device_mask, device_labels, nx, ny, nz, connectivity, orders[o], NULL, 1,
                                            &run) != VL_OK)
                        fail("binary labelling");
                    u = run.union_ms, t = run.total_ms, count = run.count;
                    vl_gpu_label_run_free(&run);
                } else {
                    vl_gpu_multilabel_run run;
                    if (vl_gpu_multilabel_device(device_map, VL_U8, device_labels, nx, ny, nz, connectivity, orders[o],
                                                 NULL, 1, &run) != VL_OK)
                        fail("multilabel labelling");
                    u = run.union_ms, t = run.total_ms, count = run.count;
                    vl_gpu_multilabel_run_free(&run);
                }
                if (r >= 0)
                    union_ms[r] = u, total_ms[r] = t;
            }
            qsort(union_ms, (size_t)repeats, sizeof *union_ms, compare_floats);
            qsort(total_ms, (size_t)repeats, sizeof *total_ms, compare_floats);
            printf("%s_%s %.3f %.3f %u\n", binary ? "binary" : "multilabel", vl_label_order_name(orders[o]),
                   union_ms[repeats / 2], total_ms[repeats / 2], count);
            fflush(stdout);
        }
    cudaFree(device_map);
    cudaFree(device_mask);
    cudaFree(device_labels);
    if (only) {
        free(union_ms);
        free(total_ms);
        free(mask);
        vl_volume_free(&map);
        return 0;
    }

    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.device.kind = VL_DEVICE_GPU;
    double e2e[kEndToEndRuns];
    uint32_t kept = 0;
    for (int r = 0; r < kEndToEndRuns; r++) {
        vl_volume labels, cleaned;
        vl_label_result result;
        const double start = now();
        if (vl_label_multilabel(&map, &labels, &options, &result) != VL_OK ||
            vl_label_filter_per_class(&labels, &result, 0, 1) != VL_OK ||
            vl_class_map_clean(&map, &labels, VL_FILL_BACKGROUND, connectivity, &cleaned) != VL_OK)
            fail("end to end");
        e2e[r] = now() - start;
        kept = result.count;
        vl_volume_free(&labels);
        vl_volume_free(&cleaned);
        vl_label_result_free(&result);
    }
    for (int i = 1; i < kEndToEndRuns; i++)
        for (int j = i; j > 0 && e2e[j - 1] > e2e[j]; j--) {
            const double t = e2e[j];
            e2e[j] = e2e[j - 1];
            e2e[j - 1] = t;
        }
    printf("e2e %.4f %u\n", e2e[kEndToEndRuns / 2], kept);
    free(union_ms);
    free(total_ms);
    free(mask);
    vl_volume_free(&map);
    return 0;
}
