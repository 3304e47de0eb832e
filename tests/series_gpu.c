/* vl_series_label on the GPU (device-resident: threshold, labels and statistics on the device) == its CPU
 * reference (vl_threshold, vl_label_volume_cpu, vl_component_stats_compute_cpu): the same N, sizes and label
 * values (the GPU's narrowed u8/u16 labels widened back), statistics bit-identical for integer CTs and within
 * relative 1e-9 in the intensity sums for f32 CTs (docs/csv.md). One engine serves every case in turn, so its
 * buffers are reused, grown and kept while series shrink; the separate-stages path (a --gpu-memory too small for
 * the resident buffers, labels in z-slabs), a call without an engine and a CT in host memory pinned through the
 * engine are checked the same way.
 * usage: series_gpu [--quick]   (--quick: small volumes only, for compute-sanitizer). Exits 77 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/device.h"
#include "voxlabel/label.h"
#include "voxlabel/phantom.h"
#include "voxlabel/series.h"
#include "voxlabel/stats.h"
#include "test_check.h"

static int close_enough(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

/* Equal statistics: every byte, or for f32 intensities every field but the float-summed ones, which agree
 * within the tolerance. */
static int same_stats(const vl_component_stats *a, const vl_component_stats *b, int exact)
{
    if (exact)
        return memcmp(a, b, sizeof *a) == 0;
    vl_component_stats x = *a, y = *b;
    int same = close_enough(x.intensity_mean, y.intensity_mean) && close_enough(x.intensity_sum, y.intensity_sum) &&
               close_enough(x.intensity_std, y.intensity_std) && close_enough(x.intensity_skewness, y.intensity_skewness) &&
               close_enough(x.intensity_kurtosis, y.intensity_kurtosis);
    for (int axis = 0; axis < 3; axis++)
        same &= close_enough(x.weighted_centroid_voxel[axis], y.weighted_centroid_voxel[axis]) &&
                close_enough(x.weighted_centroid_lps[axis], y.weighted_centroid_lps[axis]);
    x.intensity_mean = y.intensity_mean = x.intensity_sum = y.intensity_sum = 0;
    x.intensity_std = y.intensity_std = x.intensity_skewness = y.intensity_skewness = 0;
    x.intensity_kurtosis = y.intensity_kurtosis = 0;
    for (int axis = 0; axis < 3; axis++)
        x.weighted_centroid_voxel[axis] = y.weighted_centroid_voxel[axis] = x.weighted_centroid_lps[axis] =
            y.weighted_centroid_lps[axis] = 0;
    return same && memcmp(&x, &y, sizeof x) == 0;
}

static uint32_t label_at(const vl_volume *labels, int64_t i)
{
    switch (labels->dtype) {
    case VL_U8: return ((const uint8_t *)labels->data)[i];
    case VL_U16: return ((const uint16_t *)labels->data)[i];
    default: return ((const uint32_t *)labels->data)[i];
    }
}

typedef struct series_case {
    const char *name;
    double lo, hi;
    int connectivity;
    vl_label_order order;
    vl_stats_level level;
    int narrow;
    uint64_t gpu_memory; /* 0: what is free */
} series_case;

static void run_case(vl_series_engine *engine, const vl_volume *ct, const series_case *c)
{
    vl_label_options label_options[2];
    vl_stats_options stats_options[2];
    vl_device_outcome stats_outcome[2];
    vl_volume labels[2];
    vl_label_result result[2];
    vl_component_stats *stats[2] = {NULL, NULL};
    vl_status status[2];
    for (int d = 0; d < 2; d++) { /* 0: cpu, 1: gpu */
        vl_label_options_default(&label_options[d]);
        label_options[d].connectivity = c->connectivity;
        label_options[d].order = c->order;
        label_options[d].threads = 2;
        label_options[d].device.kind = d ? VL_DEVICE_GPU : VL_DEVICE_CPU;
        label_options[d].device.gpu_memory = c->gpu_memory;
        vl_stats_options_default(&stats_options[d]);
        stats_options[d].level = c->level;
        stats_options[d].threads = 2;
        stats_options[d].connectivity = c->connectivity;
        stats_options[d].outcome = &stats_outcome[d];
        const vl_series_request request = {c->lo, c->hi, &label_options[d], &stats_options[d], c->narrow};
        status[d] = vl_series_label(d ? engine : NULL, ct, &request, &labels[d], &result[d], &stats[d], NULL);
        CHECK(status[d] == VL_OK, "%s: the %s run failed", c->name, d ? "gpu" : "cpu");
    }
    if (status[0] != VL_OK || status[1] != VL_OK)
        goto done;
    CHECK(result[1].outcome.used == VL_DEVICE_GPU && stats_outcome[1].used == VL_DEVICE_GPU,
          "%s: the gpu run did not record the gpu", c->name);
    CHECK(result[0].count == result[1].count, "%s: N cpu %u, gpu %u", c->name, result[0].count, result[1].count);
    const uint32_t n = result[0].count < result[1].count ? result[0].count : result[1].count;
    CHECK(n == 0 || memcmp(result[0].sizes, result[1].sizes, n * sizeof *result[0].sizes) == 0,
          "%s: component sizes differ", c->name);
    const vl_dtype expected = !c->narrow || result[1].slabs > 1 ? VL_U32
                              : n <= UINT8_MAX                  ? VL_U8
                              : n <= UINT16_MAX                 ? VL_U16
                                                                : VL_U32;
    CHECK(labels[0].dtype == VL_U32 && labels[1].dtype == expected, "%s: labels are %s on the gpu, expected %s",
          c->name, vl_dtype_name(labels[1].dtype), vl_dtype_name(expected));
    int64_t first_wrong = -1;
    for (int64_t i = 0; i < vl_volume_voxels(ct) && first_wrong < 0; i++)
        if (label_at(&labels[0], i) != label_at(&labels[1], i))
            first_wrong = i;
    CHECK(first_wrong < 0, "%s: labels differ first at voxel %lld (cpu %u, gpu %u)", c->name, (long long)first_wrong,
          first_wrong < 0 ? 0 : label_at(&labels[0], first_wrong), first_wrong < 0 ? 0 : label_at(&labels[1], first_wrong));
    CHECK(memcmp(&labels[0].geometry, &labels[1].geometry, sizeof labels[0].geometry) == 0, "%s: geometry differs",
          c->name);
    uint32_t differing = 0;
    for (uint32_t k = 0; k < n && stats[0] && stats[1]; k++)
        differing += !same_stats(&stats[0][k], &stats[1][k], ct->dtype != VL_F32);
    CHECK(differing == 0, "%s: statistics of %u of %u components differ", c->name, differing, n);
    CHECK((n == 0) == (stats[0] == NULL) && (n == 0) == (stats[1] == NULL), "%s: statistics missing", c->name);
    if (first_wrong < 0 && differing == 0)
        printf("%s: N %u, %s labels, %s statistics identical%s\n", c->name, n, vl_dtype_name(labels[1].dtype),
               c->level == VL_STATS_FULL ? "full" : "basic", ct->dtype == VL_F32 ? " (f32 sums within 1e-9)" : "");
done:
    for (int d = 0; d < 2; d++) {
        if (status[d] != VL_OK)
            continue;
        vl_component_stats_free(stats[d]);
        vl_label_result_free(&result[d]);
        vl_volume_free(&labels[d]);
    }
}

/* The CT phantom, converted to `dtype` (u8, u16, u32: HU + 1024 clamped to the type; f32: HU * 0.37 + 0.25). */
static int make_ct(int nx, int ny, int nz, unsigned seed, vl_dtype dtype, vl_volume *ct)
{
    vl_phantom_options options;
    vl_phantom_options_default(&options);
    options.nx = nx;
    options.ny = ny;
    options.nz = nz;
    options.seed = seed;
    vl_volume hu;
    if (vl_phantom_generate(&options, &hu) != VL_OK)
        return 0;
    if (hu.dtype == dtype) {
        *ct = hu;
        return 1;
    }
    if (vl_volume_create(ct, nx, ny, nz, dtype) != VL_OK) {
        vl_volume_free(&hu);
        return 0;
    }
    ct->geometry = hu.geometry;
    for (int64_t i = 0; i < vl_volume_voxels(&hu); i++) {
        const int v = ((const int16_t *)hu.data)[i] + 1024;
        const int clamped = v < 0 ? 0 : v;
        switch (dtype) {
        case VL_U8: ((uint8_t *)ct->data)[i] = (uint8_t)(clamped > 255 ? 255 : clamped); break;
        case VL_U16: ((uint16_t *)ct->data)[i] = (uint16_t)clamped; break;
        case VL_U32: ((uint32_t *)ct->data)[i] = (uint32_t)clamped * 3u; break;
        case VL_F32: ((float *)ct->data)[i] = (float)(v - 1024) * 0.37f + 0.25f; break;
        default: break;
        }
    }
    vl_volume_free(&hu);
    return 1;
}

/* Noise: i16 values uniform in [0, 1000), so that a threshold keeps a chosen fraction and gives many small
 * components (N beyond u8, or beyond u16 on the larger volume). */
static int make_noise(int nx, int ny, int nz, vl_volume *ct)
{
    if (vl_volume_create(ct, nx, ny, nz, VL_I16) != VL_OK)
        return 0;
    test_random_state = 0x5eed5eedull + (uint64_t)nz;
    for (int64_t i = 0; i < vl_volume_voxels(ct); i++)
        ((int16_t *)ct->data)[i] = (int16_t)(test_random() % 1000);
    return 1;
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    vl_series_engine *engine = NULL;
    CHECK(vl_series_engine_create(&engine) == VL_OK, "cannot create an engine");

    const vl_dtype dtypes[] = {VL_I16, VL_U16, VL_U8, VL_U32, VL_F32};
    const vl_label_order orders[] = {VL_ORDER_MATLAB, VL_ORDER_MATLAB_XY, VL_ORDER_SIZE, VL_ORDER_SIZE_RASTER};
    const int connectivities[] = {26, 6, 18, 8, 4};
    char name[160];
    for (int t = 0; t < 5; t++) {
        vl_volume ct;
        /* Sizes that grow and shrink from case to case, odd ones included. */
        const int nx = quick ? 61 + 8 * t : 131 + 40 * t, ny = quick ? 47 + 4 * t : 97 + 21 * t,
                  nz = quick ? 9 + 3 * (t % 2) : 23 + 17 * (t % 3);
        if (!make_ct(nx, ny, nz, 11u + (unsigned)t, dtypes[t], &ct)) {
            CHECK(0, "cannot make a %s phantom", vl_dtype_name(dtypes[t]));
            continue;
        }
        /* Bone, soft tissue and air as the CT type holds them; f32 also a fractional range. */
        const double shift = dtypes[t] == VL_I16 || dtypes[t] == VL_F32 ? 0 : 1024;
        const double scale = dtypes[t] == VL_U32 ? 3 : dtypes[t] == VL_F32 ? 0.37 : 1;
        const double ranges[][2] = {{(300 + shift) * scale, INFINITY},
                                    {(-100 + shift) * scale, (200 + shift) * scale},
                                    {-INFINITY, (-900 + shift) * scale},
                                    {dtypes[t] == VL_F32 ? 40.125 : 70000.5, INFINITY}}; /* f32: fractional; else empty */
        for (int r = 0; r < 4; r++) {
            const int k = t * 4 + r;
            series_case c = {name, ranges[r][0], ranges[r][1], connectivities[k % 5], orders[k % 4],
                             k % 3 == 0 ? VL_STATS_FULL : VL_STATS_BASIC, k % 2 == 0 || r == 0, 0};
            snprintf(name, sizeof name, "%s %dx%dx%d [%g, %g] conn %d %s%s", vl_dtype_name(dtypes[t]), nx, ny, nz,
                     c.lo, c.hi, c.connectivity, vl_label_order_name(c.order), c.narrow ? ", narrowed" : "");
            run_case(engine, &ct, &c);
        }
        if (t == 0) { /* separate stages: a budget too small for the resident buffers, labels in z-slabs */
            series_case c = {name, 300, INFINITY, 26, VL_ORDER_MATLAB, VL_STATS_FULL, 1,
                             (uint64_t)nx * ny * 4 * 21 / 4};
            snprintf(name, sizeof name, "i16 %dx%dx%d bone, --gpu-memory of 4 slices (separate stages)", nx, ny, nz);
            run_case(engine, &ct, &c);
            c.gpu_memory = 0;
            snprintf(name, sizeof name, "i16 %dx%dx%d bone, no engine", nx, ny, nz);
            run_case(NULL, &ct, &c);
            /* The CT inside host memory pinned through the engine (uploaded straight from it), as voxlabel batch
             * decodes CTs into its pinned blocks: at an offset, the block larger than the CT. */
            const size_t bytes = (size_t)vl_volume_voxels(&ct) * vl_dtype_size(ct.dtype), offset = 4096;
            vl_device gpu;
            vl_device_default(&gpu);
            gpu.kind = VL_DEVICE_GPU;
            char *block = malloc(offset + bytes + 8192);
            CHECK(block && vl_series_engine_pin(engine, &gpu, block, offset + bytes + 8192) == VL_OK,
                  "cannot pin host memory: %s", vl_last_error());
            if (block) {
                vl_volume inside = ct;
                inside.data = block + offset;
                memcpy(inside.data, ct.data, bytes);
                snprintf(name, sizeof name, "i16 %dx%dx%d bone, CT in pinned memory", nx, ny, nz);
                run_case(engine, &inside, &c);
                vl_series_engine_unpin(engine, block);
                free(block);
            }
        }
        vl_volume_free(&ct);
    }
    /* Many components: noise kept at 30 % gives N past u8 (and past u16 on the larger volume). */
    const int big = quick ? 0 : 1;
    vl_volume noise;
    if (make_noise(big ? 256 : 64, big ? 256 : 48, big ? 40 : 10, &noise)) {
        series_case c = {name, 700, INFINITY, 6, VL_ORDER_MATLAB, VL_STATS_BASIC, 1, 0};
        snprintf(name, sizeof name, "noise %lldx%lldx%lld 30 %% conn 6", (long long)noise.nx, (long long)noise.ny,
                 (long long)noise.nz);
        run_case(engine, &noise, &c);
        c.order = VL_ORDER_SIZE;
        c.level = VL_STATS_FULL;
        snprintf(name, sizeof name, "noise %lldx%lldx%lld 30 %% conn 6 size order, full", (long long)noise.nx,
                 (long long)noise.ny, (long long)noise.nz);
        run_case(engine, &noise, &c);
        vl_volume_free(&noise);
    }
    vl_series_engine_free(engine);
    return test_finish("series_gpu");
}
