/* The feature stage's GPU half against its CPU reference (exit 77 without a usable GPU):
 *   F1  every Gaussian and DoG level within 1e-5 of the CPU on the [0,1] scale (reported: bit-identical or not),
 *       with sigma 1.6 (fused blur) and 4 (wider levels blurred in two passes)
 *   the same keypoints in the same order (x, y, size, angle, response, octave within 1e-4 relative, expected
 *   equal), descriptors within 1 (of 0..255) in at most 0.1 % of entries (expected equal), on one image and on
 *   a volume of I16 slices in HU mode (all slices in one batch, batches of one, batches of a few)
 *   matching: nearest, second-nearest and the ratio-test matches identical (integer distances)
 * usage: features_gpu [quick]   (quick: smaller images, for compute-sanitizer runs) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/features.h"
#include "test_check.h"

/* A textured test image: blobs, bars and noise, values 0..255. */
static void synthetic_image(float *pixels, int64_t w, int64_t h, uint64_t seed)
{
    test_random_state = seed;
    for (int64_t i = 0; i < w * h; i++)
        pixels[i] = 60.f + (float)(test_random() % 16);
    for (int blob = 0; blob < 60; blob++) {
        double cx = (double)(test_random() % (uint64_t)w), cy = (double)(test_random() % (uint64_t)h);
        double r = 2 + (double)(test_random() % 20), amplitude = (double)(test_random() % 160) - 60;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                double d2 = ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (r * r);
                if (d2 < 9)
                    pixels[y * w + x] += (float)(amplitude * exp(-d2));
            }
    }
    for (int64_t i = 0; i < w * h; i++)
        pixels[i] = pixels[i] < 0 ? 0 : pixels[i] > 255 ? 255 : floorf(pixels[i]);
}

static int gpu_usable(void)
{
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why)) {
        printf("SKIP: no usable GPU: %s\n", why);
        return 0;
    }
    return 1;
}

/* sigma 1.6 (the default) keeps every blur kernel within the fused blur's reach; 4 makes the wider levels
 * take the two-pass blur. */
static void check_pyramids(const float *image, int64_t w, int64_t h, double sigma)
{
    vl_sift_options options;
    vl_sift_options_default(&options);
    options.sigma = sigma;
    vl_sift_pyramid cpu, gpu;
    CHECK(vl_sift_pyramid_build(image, w, h, &options, &(vl_device){.kind = VL_DEVICE_CPU}, &cpu) == VL_OK, "cpu pyramid");
    CHECK(vl_sift_pyramid_build(image, w, h, &options, &(vl_device){.kind = VL_DEVICE_GPU}, &gpu) == VL_OK, "gpu pyramid");
    if (failures)
        return;
    double worst_gauss = 0, worst_dog = 0;
    int64_t differing = 0, total = 0;
    for (int level = 0; level < cpu.octaves * cpu.gauss_levels; level++) {
        int64_t n = cpu.level_width[level] * cpu.level_height[level];
        for (int64_t i = 0; i < n; i++) {
            double d = fabs(cpu.gauss[cpu.gauss_offset[level] + i] - gpu.gauss[gpu.gauss_offset[level] + i]) / 255;
            worst_gauss = d > worst_gauss ? d : worst_gauss;
            differing += d != 0;
            total++;
            if (cpu.dog_offset[level] >= 0) {
                d = fabs(cpu.dog[cpu.dog_offset[level] + i] - gpu.dog[gpu.dog_offset[level] + i]) / 255;
                worst_dog = d > worst_dog ? d : worst_dog;
            }
        }
    }
    printf("F1 %lldx%lld sigma %g: %d octaves, max |GPU - CPU| on [0,1]: Gaussian %.3g, DoG %.3g; %lld of %lld "
           "Gaussian samples differ\n", (long long)w, (long long)h, sigma, cpu.octaves, worst_gauss, worst_dog,
           (long long)differing, (long long)total);
    CHECK(worst_gauss <= 1e-5 && worst_dog <= 1e-5, "F1: pyramid levels differ by %g / %g", worst_gauss, worst_dog);
    vl_sift_pyramid_free(&cpu);
    vl_sift_pyramid_free(&gpu);
}

static int near(float a, float b)
{
    return fabsf(a - b) <= 1e-4f * (1 + fabsf(b));
}

static void compare_features(const char *what, const vl_sift_features *cpu, const vl_sift_features *gpu)
{
    CHECK(cpu->count == gpu->count, "%s: %lld keypoints on the CPU, %lld on the GPU", what, (long long)cpu->count,
          (long long)gpu->count);
    int64_t count = cpu->count < gpu->count ? cpu->count : gpu->count, exact = 0, entries_off = 0;
    float worst = 0;
    for (int64_t i = 0; i < count; i++) {
        const vl_sift_keypoint *a = &cpu->keypoints[i], *b = &gpu->keypoints[i];
        int same = near(a->x, b->x) && near(a->y, b->y) && near(a->size, b->size) && near(a->angle, b->angle) &&
                   near(a->response, b->response) && a->octave == b->octave && a->slice == b->slice;
        CHECK(same, "%s: keypoint %lld differs: CPU (%g,%g) size %g angle %g, GPU (%g,%g) size %g angle %g", what,
              (long long)i, a->x, a->y, a->size, a->angle, b->x, b->y, b->size, b->angle);
        exact += memcmp(a, b, sizeof *a) == 0;
        for (int k = 0; k < VL_SIFT_DESCRIPTOR_SIZE; k++) {
            float d = fabsf(cpu->descriptors[i * 128 + k] - gpu->descriptors[i * 128 + k]);
            worst = d > worst ? d : worst;
            entries_off += d != 0;
        }
    }
    for (int64_t z = 0; z <= cpu->slices && cpu->slices == gpu->slices; z++)
        CHECK(cpu->slice_start[z] == gpu->slice_start[z], "%s: slice %lld starts differ", what, (long long)z);
    printf("%s: %lld keypoints, %lld bit-identical; descriptor entries differing: %lld (max %g)\n", what,
           (long long)count, (long long)exact, (long long)entries_off, worst);
    CHECK(worst <= 1 && entries_off * 1000 <= count * 128, "%s: descriptors differ in %lld entries (max %g)", what,
          (long long)entries_off, worst);
}

static void check_image(const float *image, int64_t w, int64_t h)
{
    vl_sift_features cpu, gpu;
    CHECK(vl_sift_image(image, w, h, NULL, &(vl_device){.kind = VL_DEVICE_CPU}, &cpu, NULL) == VL_OK, "cpu sift");
    CHECK(vl_sift_image(image, w, h, NULL, &(vl_device){.kind = VL_DEVICE_GPU}, &gpu, NULL) == VL_OK, "gpu sift");
    if (failures)
        return;
    compare_features("image", &cpu, &gpu);
    /* Run to run: the GPU again gives the same bytes. */
    vl_sift_features again;
    CHECK(vl_sift_image(image, w, h, NULL, &(vl_device){.kind = VL_DEVICE_GPU}, &again, NULL) == VL_OK, "gpu sift");
    CHECK(again.count == gpu.count && !memcmp(again.keypoints, gpu.keypoints, sizeof *gpu.keypoints * gpu.count) &&
              !memcmp(again.descriptors, gpu.descriptors, sizeof(float) * 128 * gpu.count),
          "two GPU runs differ");
    /* Matching: the GPU's nearest/second and the ratio test equal the CPU's. */
    vl_feature_match *mc = NULL, *mg = NULL;
    int64_t nc = 0, ng = 0;
    int64_t half = cpu.count / 2;
    CHECK(vl_match_descriptors(cpu.descriptors, half, cpu.descriptors + half * 128, cpu.count - half, 0.9,
                               &(vl_device){.kind = VL_DEVICE_CPU}, &mc, &nc, NULL) == VL_OK, "cpu match");
    CHECK(vl_match_descriptors(cpu.descriptors, half, cpu.descriptors + half * 128, cpu.count - half, 0.9,
                               &(vl_device){.kind = VL_DEVICE_GPU}, &mg, &ng, NULL) == VL_OK, "gpu match");
    CHECK(nc == ng && (nc == 0 || !memcmp(mc, mg, sizeof *mc * nc)), "matches differ: %lld CPU, %lld GPU",
          (long long)nc, (long long)ng);
    printf("matching: %lld x %lld descriptors, %lld ratio-test matches, GPU == CPU: %s\n", (long long)half,
           (long long)(cpu.count - half), (long long)nc, nc == ng && (nc == 0 || !memcmp(mc, mg, sizeof *mc * nc)) ? "yes" : "no");
    free(mc);
    free(mg);
    vl_sift_features_free(&again);
    vl_sift_features_free(&cpu);
    vl_sift_features_free(&gpu);
}

static void check_volume(int64_t w, int64_t h, int64_t slices)
{
    vl_volume volume;
    CHECK(vl_volume_create(&volume, w, h, slices, VL_I16) == VL_OK, "volume");
    float *image = malloc(sizeof(float) * w * h);
    int16_t *hu = volume.data;
    for (int64_t z = 0; z < slices; z++) {
        synthetic_image(image, w, h, 1000 + (uint64_t)z);
        for (int64_t i = 0; i < w * h; i++)
            hu[z * w * h + i] = (int16_t)(image[i] * 4 - 400); /* about -400..620 HU */
    }
    free(image);
    vl_sift_options options;
    vl_sift_options_default(&options);
    options.value_offset = 40 - 0.5 - 399 / 2.0; /* window 40:400 as float HU */
    options.value_range = 399;
    vl_sift_features cpu, gpu;
    CHECK(vl_sift_volume(&volume, &options, &(vl_device){.kind = VL_DEVICE_CPU}, NULL, &cpu, NULL) == VL_OK, "cpu");
    CHECK(vl_sift_volume(&volume, &options, &(vl_device){.kind = VL_DEVICE_GPU}, NULL, &gpu, NULL) == VL_OK, "gpu");
    if (!failures) {
        char what[80];
        snprintf(what, sizeof what, "volume %lldx%lldx%lld HU", (long long)w, (long long)h, (long long)slices);
        compare_features(what, &cpu, &gpu);
        /* A memory budget below one slice's needs makes batches of one slice: the same result. */
        vl_sift_features small;
        vl_device budget = {.kind = VL_DEVICE_GPU, .gpu_memory = (uint64_t)(w * h) * 4 * 4 * 8 * 2};
        CHECK(vl_sift_volume(&volume, &options, &budget, NULL, &small, NULL) == VL_OK, "gpu in small batches");
        if (!failures) {
            snprintf(what, sizeof what, "volume %lldx%lldx%lld HU, batches of 1", (long long)w, (long long)h,
                     (long long)slices);
            compare_features(what, &cpu, &small);
            vl_sift_features_free(&small);
        }
        /* Eight times that budget: batches of a few slices, two in flight (one batch when it holds them all). */
        budget.gpu_memory *= 8;
        CHECK(vl_sift_volume(&volume, &options, &budget, NULL, &small, NULL) == VL_OK, "gpu in batches of a few");
        if (!failures) {
            snprintf(what, sizeof what, "volume %lldx%lldx%lld HU, batches of a few", (long long)w, (long long)h,
                     (long long)slices);
            compare_features(what, &cpu, &small);
            vl_sift_features_free(&small);
        }
        vl_sift_features_free(&cpu);
        vl_sift_features_free(&gpu);
    }
    vl_volume_free(&volume);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    if (!gpu_usable())
        return TEST_SKIP_CODE;
    int64_t w = quick ? 96 : 512, h = quick ? 83 : 397;
    float *image = malloc(sizeof(float) * w * h);
    synthetic_image(image, w, h, 21);
    check_pyramids(image, w, h, 1.6);
    check_pyramids(image, w, h, 4.0);
    check_image(image, w, h);
    free(image);
    check_volume(quick ? 64 : 256, quick ? 64 : 256, quick ? 3 : 12);
    return test_finish("features_gpu");
}
