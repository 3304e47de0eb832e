/* The feature stage's bench: SIFT (keypoints + descriptors) on a CT-like phantom of textured 8-bit slices.
 * usage: features_bench WIDTH HEIGHT SLICES cpu|gpu THREADS REPEATS [DUMP.u8]
 *   SLICES 1 times one image (vl_sift_image, its rows split among THREADS); more times the volume
 *   (vl_sift_volume: slices among THREADS on the CPU, batches on the GPU). GPU runs start after one
 *   warm-up run (context creation, first allocations). Prints the median wall time, ms per slice and
 *   keypoints per slice; DUMP.u8 receives the slices (x fastest) for bench/features_peers.py. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "voxlabel/features.h"
#include "voxlabel/threads.h"
#include "bench_clock.h"

static uint64_t state = 0x2545f4914f6cdd1dull;

static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* Soft-tissue background with noise, bright and dark blobs of many sizes (organs, vessels, bone), all
 * local so that a 300-slice volume is quick to make; slices drift slowly like a real stack. */
static void phantom_slice(uint8_t *out, int64_t w, int64_t h, int64_t z)
{
    float *acc = malloc(sizeof(float) * (size_t)(w * h));
    for (int64_t i = 0; i < w * h; i++)
        acc[i] = 90.f + (float)(next_random() % 12);
    uint64_t saved = state;
    state = 0x9e3779b97f4a7c15ull;  /* the same anatomy on every slice, shifted with z */
    for (int blob = 0; blob < 160; blob++) {
        double cx = (double)(next_random() % (uint64_t)w) + 6 * sin(0.02 * (double)z + blob);
        double cy = (double)(next_random() % (uint64_t)h) + 6 * cos(0.03 * (double)z + blob);
        double r = 1.5 + (double)(next_random() % 24), amplitude = (double)(next_random() % 200) - 80;
        int64_t x0 = (int64_t)fmax(0, cx - 3 * r), x1 = (int64_t)fmin((double)w - 1, cx + 3 * r);
        int64_t y0 = (int64_t)fmax(0, cy - 3 * r), y1 = (int64_t)fmin((double)h - 1, cy + 3 * r);
        for (int64_t y = y0; y <= y1; y++)
            for (int64_t x = x0; x <= x1; x++) {
                double d2 = ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (r * r);
                acc[y * w + x] += (float)(amplitude * exp(-d2));
            }
    }
    state = saved;
    for (int64_t i = 0; i < w * h; i++)
        out[i] = (uint8_t)(acc[i] < 0 ? 0 : acc[i] > 255 ? 255 : acc[i]);
    free(acc);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: features_bench WIDTH HEIGHT SLICES cpu|gpu THREADS REPEATS [DUMP.u8]\n");
        return 2;
    }
    int64_t w = atoll(argv[1]), h = atoll(argv[2]), slices = atoll(argv[3]);
    int gpu = strcmp(argv[4], "gpu") == 0, threads = atoi(argv[5]), repeats = atoi(argv[6]);
    if (w < 16 || h < 16 || slices < 1 || repeats < 1 || repeats > 100) {
        fprintf(stderr, "features_bench: bad sizes or repeats\n");
        return 2;
    }
    vl_volume volume;
    if (vl_volume_create(&volume, w, h, slices, VL_U8) != VL_OK) {
        fprintf(stderr, "features_bench: %s\n", vl_last_error());
        return 5;
    }
    for (int64_t z = 0; z < slices; z++)
        phantom_slice((uint8_t *)volume.data + z * w * h, w, h, z);
    if (argc > 7) {
        FILE *dump = fopen(argv[7], "wb");
        if (!dump || fwrite(volume.data, 1, (size_t)(w * h * slices), dump) != (size_t)(w * h * slices) ||
            fclose(dump) != 0) {
            fprintf(stderr, "features_bench: cannot write %s\n", argv[7]);
            return 4;
        }
    }
    float *image = malloc(sizeof(float) * (size_t)(w * h));
    for (int64_t i = 0; i < w * h; i++)
        image[i] = ((const uint8_t *)volume.data)[i];
    vl_set_thread_limit(threads);
    vl_sift_options options;
    vl_sift_options_default(&options);
    options.threads = threads;
    vl_device device = {.kind = gpu ? VL_DEVICE_GPU : VL_DEVICE_CPU};
    double times[100];
    int64_t keypoints = 0;
    for (int run = -gpu; run < repeats; run++) {
        vl_sift_features features;
        double start = now();
        vl_status status = slices == 1 ? vl_sift_image(image, w, h, &options, &device, &features, NULL)
                                       : vl_sift_volume(&volume, &options, &device, NULL, &features, NULL);
        double elapsed = now() - start;
        if (status != VL_OK) {
            fprintf(stderr, "features_bench: %s\n", vl_last_error());
            return status == VL_ERR_DEVICE ? 77 : 5;
        }
        keypoints = features.count;
        vl_sift_features_free(&features);
        if (run >= 0)
            times[run] = elapsed;
    }
    qsort(times, (size_t)repeats, sizeof times[0], by_value);
    double median = times[repeats / 2];
    printf("voxlabel SIFT %s threads %d: %lldx%lldx%lld  median %.2f ms  = %.3f ms/slice  keypoints/slice %.0f\n",
           gpu ? "gpu" : "cpu", threads, (long long)w, (long long)h, (long long)slices, 1e3 * median,
           1e3 * median / (double)slices, (double)keypoints / (double)slices);
    free(image);
    vl_volume_free(&volume);
    return 0;
}
