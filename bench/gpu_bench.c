/* GPU labelling benchmark (issue 3 item 7, docs/design.md §10): the fixed volumes of bench/make_volumes.c
 * (512^3 Bernoulli 0.5 and 0.2, CT-like phantom 512x512x400 >= 100 HU), conn 6/18/26, on one GPU.
 * Per volume and connectivity, with CUDA events, median of REPEATS runs after 3 warm-ups:
 *   union     union-find (the component forest is complete; no label image yet)
 *   total     union + relabel to 1..N (matlab, matlab-xy, size orders) + sizes: the kernel figure
 *   e2e       vl_label_volume(GPU) from host mask to host labels + sizes (wall clock, median of 5)
 *   floor     one pass that reads the u8 mask and writes u32 (bench/gpu_floor.cu), same run
 * usage: gpu_bench [--write DIR] [--only NAME CONN] [--quick] [--order ORDER] [REPEATS]
 *   --write  also stores the masks as DIR/<name>.raw for the CuPy peer (bench/gpu_cupy_peer.py)
 *   --quick  one order only (--order), no e2e (the other columns read 0): for comparing builds in one run
 *   --only   one labelling call of one volume and connectivity, for a profiler
 *   --order  the order of --quick and --only (default matlab)
 * Output: one tab-separated RESULT line per (volume, conn), then a readable table. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "label/ccl_gpu.h"
#include "label/label_gpu.h"
#include "voxlabel/threshold.h"
#include "voxlabel/label.h"
#include "voxlabel/phantom.h"

float vl_bench_floor_ms(const uint8_t *mask, uint32_t *labels, int64_t voxels);

enum { kWarmup = 3, kEndToEndRuns = 5 };

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_floats);
    return count % 2 ? values[count / 2] : 0.5f * (values[count / 2 - 1] + values[count / 2]);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int make_noise(vl_volume *mask, double density, uint64_t seed)
{
    if (vl_volume_create(mask, 512, 512, 512, VL_U8) != VL_OK)
        return 0;
    uint8_t *m = mask->data;
    const uint64_t threshold = (uint64_t)(density * 18446744073709551615.0);
    for (int64_t i = 0; i < vl_volume_voxels(mask); i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        m[i] = seed < threshold;
    }
    return 1;
}

static int make_ct(vl_volume *mask)
{
    vl_phantom_options options;
    vl_phantom_options_default(&options);
    options.nx = 512, options.ny = 512, options.nz = 400;
    options.pixel_spacing_mm = 0.7;
    options.slice_spacing_mm = 1.0;
    vl_volume hu;
    if (vl_phantom_generate(&options, &hu) != VL_OK)
        return 0;
    vl_status status = vl_threshold(&hu, 100, 1e9, mask);
    vl_volume_free(&hu);
    return status == VL_OK;
}

static int check(cudaError_t error, const char *what)
{
    if (error != cudaSuccess) {
        fprintf(stderr, "gpu_bench: %s: %s\n", what, cudaGetErrorString(error));
        return 0;
    }
    return 1;
}

typedef struct order_time {
    float union_ms, total_ms;
    uint32_t count;
    size_t scratch;
} order_time;

static int time_order(const uint8_t *mask, uint32_t *labels, const vl_volume *v, int conn, vl_label_order order,
                      int repeats, order_time *out)
{
    float *unions = malloc(sizeof(float) * (size_t)repeats), *totals = malloc(sizeof(float) * (size_t)repeats);
    int ok = unions && totals;
    for (int r = -kWarmup; r < repeats && ok; r++) {
        vl_gpu_label_run run;
        if (vl_gpu_label_device(mask, labels, v->nx, v->ny, v->nz, conn, order, NULL, 1, &run) != VL_OK) {
            fprintf(stderr, "gpu_bench: %s\n", vl_last_error());
            ok = 0;
            break;
        }
        if (r >= 0) {
            unions[r] = run.union_ms;
            totals[r] = run.total_ms;
        }
        out->count = run.count;
        out->scratch = run.scratch_bytes;
        vl_gpu_label_run_free(&run);
    }
    if (ok) {
        out->union_ms = median(unions, repeats);
        out->total_ms = median(totals, repeats);
    }
    free(unions);
    free(totals);
    return ok;
}

static float time_end_to_end(const vl_volume *mask, int conn)
{
    float times[kEndToEndRuns];
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = conn;
    options.device.kind = VL_DEVICE_GPU;
    for (int r = -1; r < kEndToEndRuns; r++) {
        vl_volume labels;
        vl_label_result result;
        double start = now_ms();
        if (vl_label_volume(mask, &labels, &options, &result) != VL_OK) {
            fprintf(stderr, "gpu_bench: %s\n", vl_last_error());
            return -1;
        }
        double elapsed = now_ms() - start;
        if (r >= 0)
            times[r] = (float)elapsed;
        vl_volume_free(&labels);
        vl_label_result_free(&result);
    }
    return median(times, kEndToEndRuns);
}

int main(int argc, char **argv)
{
    const char *write_directory = NULL, *only = NULL;
    int repeats = 20, only_conn = 0, quick = 0;
    vl_label_order quick_order = VL_ORDER_MATLAB;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--write") == 0 && i + 1 < argc)
            write_directory = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 2 < argc) {
            only = argv[++i];
            only_conn = atoi(argv[++i]);
        }
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--order") == 0 && i + 1 < argc && vl_label_order_parse(argv[i + 1], &quick_order) == VL_OK)
            i++;
        else if (atoi(argv[i]) > 0)
            repeats = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: gpu_bench [--write DIR] [--only NAME CONN] [--quick] [--order ORDER] [REPEATS]\n");
            return 2;
        }
    }
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why)) {
        fprintf(stderr, "gpu_bench: no usable GPU: %s\n", why);
        return 77;
    }
    /* Keep freed scratch in the stream-ordered pool between runs (the library allocates per call). */
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess)
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    char device[128];
    vl_device_gpu_name(0, device, sizeof device);
    printf("device: %s; median of %d after %d warm-ups (CUDA events)\n", device, repeats, kWarmup);

    const char *names[] = {"noise50", "noise20", "ct"};
    printf("%-8s %4s %9s %9s %9s %9s %9s %8s %8s %9s %9s %10s\n", "volume", "conn", "N", "union", "matlab",
           "matlab-xy", "size", "Gvox/s", "xfloor", "floor", "e2e", "scratch");
    for (int v = 0; v < 3; v++) {
        if (only && strcmp(only, names[v]) != 0)
            continue;
        vl_volume mask;
        int made = v == 0 ? make_noise(&mask, 0.5, 0x9E3779B97F4A7C15ull)
                 : v == 1 ? make_noise(&mask, 0.2, 0xD1B54A32D192ED03ull)
                          : make_ct(&mask);
        if (!made) {
            fprintf(stderr, "gpu_bench: cannot make %s: %s\n", names[v], vl_last_error());
            return 1;
        }
        const int64_t voxels = vl_volume_voxels(&mask);
        if (write_directory) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.raw", write_directory, names[v]);
            FILE *file = fopen(path, "wb");
            if (!file || fwrite(mask.data, 1, (size_t)voxels, file) != (size_t)voxels || fclose(file) != 0) {
                fprintf(stderr, "gpu_bench: cannot write %s\n", path);
                return 1;
            }
        }
        uint8_t *d_mask = NULL;
        uint32_t *d_labels = NULL;
        if (!check(cudaMalloc((void **)&d_mask, (size_t)voxels), "mask") ||
            !check(cudaMalloc((void **)&d_labels, (size_t)voxels * 4), "labels") ||
            !check(cudaMemcpy(d_mask, mask.data, (size_t)voxels, cudaMemcpyHostToDevice), "upload"))
            return 1;
        float floors[64];
        const int floor_runs = repeats < 64 ? repeats : 64;
        for (int r = -kWarmup; r < floor_runs; r++) {
            float ms = vl_bench_floor_ms(d_mask, d_labels, voxels);
            if (r >= 0)
                floors[r] = ms;
        }
        const float floor_ms = median(floors, floor_runs);
        if (only) {
            vl_gpu_label_run run;
            if (vl_gpu_label_device(d_mask, d_labels, mask.nx, mask.ny, mask.nz, only_conn, quick_order, NULL, 1,
                                    &run) != VL_OK) {
                fprintf(stderr, "gpu_bench: %s\n", vl_last_error());
                return 1;
            }
            printf("%s conn %d order %s: %u components, %.3f ms union, %.3f ms total, floor %.4f ms\n", names[v],
                   only_conn, vl_label_order_name(quick_order), run.count, run.union_ms, run.total_ms, floor_ms);
            vl_gpu_label_run_free(&run);
            return 0;
        }
        static const int conns[] = {6, 18, 26};
        for (int c = 0; c < 3; c++) {
            order_time t[3] = {{0}};
            for (int o = 0; o < 3; o++)
                if ((!quick || o == (int)quick_order) &&
                    !time_order(d_mask, d_labels, &mask, conns[c], (vl_label_order)o, repeats, &t[o]))
                    return 1;
            const float e2e = quick ? 0 : time_end_to_end(&mask, conns[c]);
            /* N, union, Gvox/s, xfloor and scratch: of the matlab order, or of the one --quick timed. */
            const order_time *first = &t[quick ? quick_order : VL_ORDER_MATLAB];
            printf("RESULT\t%s\t%d\t%u\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.3f\t%zu\n", names[v], conns[c], first->count,
                   first->union_ms, t[0].total_ms, t[1].total_ms, t[2].total_ms, floor_ms, e2e, first->scratch);
            printf("%-8s %4d %9u %9.3f %9.3f %9.3f %9.3f %8.1f %8.2f %9.4f %9.2f %8.2fMB\n", names[v], conns[c],
                   first->count, first->union_ms, t[0].total_ms, t[1].total_ms, t[2].total_ms,
                   voxels / (first->total_ms * 1e6), first->total_ms / floor_ms, floor_ms, e2e, first->scratch / 1e6);
            fflush(stdout);
        }
        cudaFree(d_mask);
        cudaFree(d_labels);
        vl_volume_free(&mask);
    }
    return 0;
}
