/* GPU statistics == CPU reference. Integer label volumes with integer intensities must match bit for bit
 * (every field goes through the same finaliser from exact sums); with F32 intensities the intensity sums may
 * differ in rounding only (relative 1e-9, docs/csv.md). Exits 77 (skipped) without a usable GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "label/label_gpu.h"
#include "voxlabel/threshold.h"
#include "voxlabel/label.h"
#include "voxlabel/phantom.h"
#include "voxlabel/stats.h"
#include "test_check.h"

static vl_component_stats *compute(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                   vl_stats_level level, vl_device_kind device)
{
    vl_stats_options options;
    vl_stats_options_default(&options);
    options.level = level;
    options.device.kind = device;
    options.threads = 2;
    vl_component_stats *stats = NULL;
    CHECK(vl_component_stats_compute(labels, intensity, count, &options, &stats) == VL_OK, "%s statistics failed",
          device == VL_DEVICE_GPU ? "gpu" : "cpu");
    return stats;
}

static int close_enough(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

static void compare(const char *name, const vl_volume *labels, const vl_volume *intensity, uint32_t count)
{
    const int exact = !intensity || intensity->dtype != VL_F32;
    for (int level = VL_STATS_BASIC; level <= VL_STATS_FULL; level++) {
        vl_component_stats *cpu = compute(labels, intensity, count, level, VL_DEVICE_CPU);
        vl_component_stats *gpu = compute(labels, intensity, count, level, VL_DEVICE_GPU);
        int differing = 0;
        for (uint32_t k = 0; cpu && gpu && k < count; k++) {
            const vl_component_stats *a = &cpu[k], *b = &gpu[k];
            int same;
            if (exact)
                same = memcmp(a, b, sizeof *a) == 0;
            else {
                /* Everything but the float-summed intensity fields is still bit-identical. */
                vl_component_stats x = *a, y = *b;
                same = close_enough(x.intensity_mean, y.intensity_mean) && close_enough(x.intensity_sum, y.intensity_sum) &&
                       close_enough(x.intensity_std, y.intensity_std) && x.intensity_min == y.intensity_min &&
                       x.intensity_max == y.intensity_max &&
                       (x.intensity_median == y.intensity_median || (isnan(x.intensity_median) && isnan(y.intensity_median)));
                for (int axis = 0; axis < 3; axis++)
                    same &= close_enough(x.weighted_centroid_voxel[axis], y.weighted_centroid_voxel[axis]) &&
                            close_enough(x.weighted_centroid_lps[axis], y.weighted_centroid_lps[axis]);
                /* Skewness and kurtosis are taken about each backend's mean. */
                same &= close_enough(x.intensity_skewness, y.intensity_skewness) &&
                        close_enough(x.intensity_kurtosis, y.intensity_kurtosis);
                x.intensity_skewness = y.intensity_skewness = x.intensity_kurtosis = y.intensity_kurtosis = 0;
                x.intensity_mean = y.intensity_mean = x.intensity_sum = y.intensity_sum = 0;
                x.intensity_std = y.intensity_std = 0;
                for (int axis = 0; axis < 3; axis++)
                    x.weighted_centroid_voxel[axis] = y.weighted_centroid_voxel[axis] = x.weighted_centroid_lps[axis] =
                        y.weighted_centroid_lps[axis] = 0;
                same &= memcmp(&x, &y, sizeof x) == 0;
            }
            if (!same && differing++ < 3) /* the first few; the CHECK below counts */
                REPORT_FAILURE("%s (%s): label %u differs: cpu voxels %llu mean %.17g median %.17g area %.17g, "
                               "gpu voxels %llu mean %.17g median %.17g area %.17g",
                               name, level ? "full" : "basic", k + 1, (unsigned long long)a->voxels, a->intensity_mean,
                               a->intensity_median, a->surface_area_crofton_mm2, (unsigned long long)b->voxels,
                               b->intensity_mean, b->intensity_median, b->surface_area_crofton_mm2);
        }
        CHECK(differing == 0, "%s (%s): %d of %u components differ", name, level ? "full" : "basic", differing, count);
        if (!differing)
            printf("%s (%s): %u components identical%s\n", name, level ? "full" : "basic", count,
                   exact ? "" : " (F32 intensity sums within 1e-9)");
        vl_component_stats_free(cpu);
        vl_component_stats_free(gpu);
    }
}

static void random_case(const char *name, unsigned seed, int nx, int ny, int nz, uint32_t count, vl_dtype label_type,
                        vl_dtype intensity_type)
{
    srand(seed);
    vl_volume labels, intensity;
    const int allocated = vl_volume_create(&labels, nx, ny, nz, label_type) == VL_OK &&
                          vl_volume_create(&intensity, nx, ny, nz, intensity_type) == VL_OK;
    CHECK(allocated, "%s: cannot allocate", name);
    if (!allocated)
        return;
    labels.geometry.spacing[0] = 0.75;
    labels.geometry.spacing[2] = 1.5;
    uint32_t previous = 0;
    for (int64_t i = 0; i < vl_volume_voxels(&labels); i++) {
        uint32_t value = rand() % 3 == 0 ? 0 : (uint32_t)(rand() % count) + 1;
        if (rand() % 4)
            value = previous; /* runs along x, and runs that cross the lanes' segments */
        previous = value;
        if (label_type == VL_U8) ((uint8_t *)labels.data)[i] = (uint8_t)value;
        else if (label_type == VL_U16) ((uint16_t *)labels.data)[i] = (uint16_t)value;
        else ((uint32_t *)labels.data)[i] = value;
        const int v = rand() % 4000 - 1024;
        if (intensity_type == VL_I16) ((int16_t *)intensity.data)[i] = (int16_t)v;
        else if (intensity_type == VL_U8) ((uint8_t *)intensity.data)[i] = (uint8_t)(v & 255);
        else if (intensity_type == VL_U32) ((uint32_t *)intensity.data)[i] = (uint32_t)rand() % (1u << 20);
        else ((float *)intensity.data)[i] = (float)v * 0.37f;
    }
    compare(name, &labels, NULL, count);
    compare(name, &labels, &intensity, count);
    vl_volume_free(&labels);
    vl_volume_free(&intensity);
}

/* The CT phantom labelled at soft-tissue noise level: a giant component beside many singletons. */
static void phantom_case(void)
{
    vl_phantom_options options;
    vl_phantom_options_default(&options);
    options.nx = 256;
    options.ny = 256;
    options.nz = 96;
    vl_volume hu, mask, labels;
    vl_label_options label_options;
    vl_label_options_default(&label_options);
    label_options.device.kind = VL_DEVICE_CPU;
    vl_label_result result;
    const int ready = vl_phantom_generate(&options, &hu) == VL_OK && vl_threshold(&hu, 64, 1e9, &mask) == VL_OK &&
                      vl_label_volume_cpu(&mask, &labels, &label_options, &result) == VL_OK;
    CHECK(ready, "phantom: generating, thresholding or labelling failed");
    if (!ready)
        return;
    compare("phantom 256x256x96 HU>=64", &labels, &hu, result.count);
    vl_label_result_free(&result);
    vl_volume_free(&labels);
    vl_volume_free(&mask);
    vl_volume_free(&hu);
}

/* One component filling the whole volume: the worst case for atomics on one address. */
static void giant_case(void)
{
    vl_volume labels, intensity;
    vl_volume_create(&labels, 200, 100, 50, VL_U8);
    vl_volume_create(&intensity, 200, 100, 50, VL_I16);
    memset(labels.data, 1, (size_t)vl_volume_voxels(&labels));
    for (int64_t i = 0; i < vl_volume_voxels(&labels); i++)
        ((int16_t *)intensity.data)[i] = (int16_t)(i % 1999 - 999);
    compare("giant 200x100x50", &labels, &intensity, 1);
    vl_volume_free(&labels);
    vl_volume_free(&intensity);
}

static void bad_label_case(void)
{
    vl_volume labels;
    vl_volume_create(&labels, 40, 30, 20, VL_U32);
    ((uint32_t *)labels.data)[1234] = 9;
    ((uint32_t *)labels.data)[5000] = 7;
    vl_stats_options options;
    vl_stats_options_default(&options);
    options.device.kind = VL_DEVICE_GPU;
    vl_component_stats *stats = NULL;
    CHECK(vl_component_stats_compute(&labels, NULL, 5, &options, &stats) == VL_ERR_INPUT && !stats &&
              strstr(vl_last_error(), "voxel 1234 "),
          "bad label: expected VL_ERR_INPUT naming voxel 1234");
    vl_volume_free(&labels);
}

/* The Euler number at 6-connectivity from the GPU kernel equals the CPU's on random labels (26 is in every
 * compare above). */
static void euler_six_case(void)
{
    vl_volume labels;
    CHECK(vl_volume_create(&labels, 41, 33, 27, VL_U16) == VL_OK, "euler: cannot allocate");
    srand(19);
    for (int64_t i = 0; i < vl_volume_voxels(&labels); i++)
        ((uint16_t *)labels.data)[i] = rand() % 3 ? 0 : (uint16_t)(1 + rand() % 40);
    int64_t euler[2][40];
    for (int d = 0; d < 2; d++) {
        vl_stats_options options;
        vl_stats_options_default(&options);
        options.level = VL_STATS_FULL;
        options.extras = VL_STATS_EXTRA_EULER;
        options.connectivity = 6;
        options.device.kind = d ? VL_DEVICE_GPU : VL_DEVICE_CPU;
        vl_component_stats *stats = NULL;
        CHECK(vl_component_stats_compute(&labels, NULL, 40, &options, &stats) == VL_OK, "euler 6: %s failed",
              d ? "gpu" : "cpu");
        for (int k = 0; k < 40; k++)
            euler[d][k] = stats ? (int64_t)stats[k].euler_number : 0;
        vl_component_stats_free(stats);
    }
    CHECK(memcmp(euler[0], euler[1], sizeof euler[0]) == 0, "euler 6: GPU and CPU Euler numbers differ");
    printf("euler numbers at 6-connectivity: 40 components identical\n");
    vl_volume_free(&labels);
}

/* With --quick (for compute-sanitizer runs) the 6-million-voxel phantom case is left out. */
int main(int argc, char **argv)
{
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("stats_gpu: no usable GPU: %s", why);
    random_case("random u8 labels 37x29x23 i16", 1, 37, 29, 23, 9, VL_U8, VL_I16);
    random_case("random u16 labels 512x7x5 f32", 2, 512, 7, 5, 300, VL_U16, VL_F32);
    random_case("random u32 labels 1000x3x4 u8", 3, 1000, 3, 4, 5000, VL_U32, VL_U8);
    random_case("random u32 labels 1x50x40 i16", 4, 1, 50, 40, 30, VL_U32, VL_I16);
    /* 13 label bits + 20 value bits: the median's 64-bit keys for an integer type (sums of squares stay exact). */
    random_case("random u32 labels 600x9x17 u32", 5, 600, 9, 17, 5000, VL_U32, VL_U32);
    if (!quick)
        phantom_case();
    giant_case();
    euler_six_case();
    bad_label_case();
    return test_finish("stats_gpu");
}
