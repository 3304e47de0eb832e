/* GPU multilabel labeller == CPU reference, exactly (labels, count, sizes, classes):
 *   random [--quick]   >= 240 random class maps (--quick: 60 small ones, for compute-sanitizer): 2 to 200
 *                      classes, odd shapes, blobs that touch, noise, u8/u16/u32/i16, every connectivity and
 *                      order; every fourth again in z-slabs of a random depth (the slab faces must join only
 *                      equal classes)
 *   large              512x512x400 class maps of 20 and 117 classes (the bench's size), every order
 *   huge               a 2048x2048x1025 class map (2^32 + 2^22 voxels, over the node limit of one launch):
 *                      z-slabs on the GPU against the CPU, as for masks
 *   raw FILE NX NY NZ  a real-CT u8 mask (gpu_label_dicom --export) cut into 4 classes along a coarse 3D
 *                      checker of 32x32x4-voxel cells, so that real shapes meet other classes everywhere
 * Exits 77 (skipped) when no usable GPU is present. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "label/ccl_multilabel_gpu.h"
#include "label_compare.h"
#include "voxlabel/label.h"
#include "test_check.h"

static void set_value(vl_volume *v, int64_t i, uint32_t value)
{
    switch (v->dtype) {
    case VL_U8: ((uint8_t *)v->data)[i] = (uint8_t)value; break;
    case VL_I16:
    case VL_U16: ((uint16_t *)v->data)[i] = (uint16_t)value; break;
    default: ((uint32_t *)v->data)[i] = value; break;
    }
}

/* Blobs: a coarse random grid of classes (cells of 1 to 8 voxels a side), with noise and background. */
static void fill_class_map(vl_volume *map, uint32_t class_count, double noise)
{
    const uint32_t top = map->dtype == VL_U8 ? 255 : map->dtype == VL_U32 ? 4000000000u : 32767;
    uint32_t *values = malloc((size_t)class_count * sizeof *values);
    for (uint32_t k = 0; k < class_count; k++)
        values[k] = 1 + (uint32_t)(test_random() % top);
    const int64_t cell = 1 + (int64_t)(test_random() % 8);
    const int64_t cx = (map->nx + cell - 1) / cell, cy = (map->ny + cell - 1) / cell;
    const int64_t cz = (map->nz + cell - 1) / cell;
    uint32_t *grid = malloc((size_t)(cx * cy * cz) * sizeof *grid);
    for (int64_t i = 0; i < cx * cy * cz; i++)
        grid[i] = test_random() % 5 == 0 ? 0 : values[test_random() % class_count];
    const uint64_t noise_threshold = (uint64_t)(noise * 18446744073709551615.0);
    for (int64_t z = 0, i = 0; z < map->nz; z++)
        for (int64_t y = 0; y < map->ny; y++)
            for (int64_t x = 0; x < map->nx; x++, i++) {
                uint32_t value = grid[x / cell + cx * (y / cell + cy * (z / cell))];
                if (test_random() < noise_threshold)
                    value = test_random() % 3 == 0 ? 0 : values[test_random() % class_count];
                set_value(map, i, value);
            }
    free(grid);
    free(values);
}

static int compare(const vl_volume *map, int connectivity, vl_label_order order, int64_t slab_depth, const char *what)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = order;
    vl_volume cpu_labels, gpu_labels;
    vl_label_result cpu, gpu;
    if (vl_label_multilabel_cpu(map, &cpu_labels, &options, &cpu) != VL_OK) {
        REPORT_FAILURE("%s: cpu labelling failed: %s", what, vl_last_error());
        return 0;
    }
    options.device.kind = VL_DEVICE_GPU;
    options.device.gpu_memory = slab_depth ? vl_gpu_multilabel_bytes(map->nx, map->ny, slab_depth, map->dtype) : 0;
    if (vl_label_multilabel(map, &gpu_labels, &options, &gpu) != VL_OK) {
        REPORT_FAILURE("%s: gpu labelling failed: %s", what, vl_last_error());
        vl_volume_free(&cpu_labels);
        vl_label_result_free(&cpu);
        return 0;
    }
    int ok = vl_test_same_labelling(&cpu_labels, &cpu, "cpu", &gpu_labels, &gpu, "gpu", what);
    if (gpu.outcome.used != VL_DEVICE_GPU) {
        REPORT_FAILURE("%s: ran on %s", what, gpu.device_name);
        ok = 0;
    }
    /* Slabs of the memory budget's depth, and never more than 2^32 - 2 voxels (the node numbering). */
    const int64_t node_depth = (int64_t)(0xFFFFFFFEull / (uint64_t)(map->nx * map->ny));
    int64_t depth = slab_depth ? slab_depth : map->nz;
    depth = depth < node_depth ? depth : node_depth;
    const int64_t slabs = (map->nz + depth - 1) / depth;
    if (gpu.slabs != slabs) {
        REPORT_FAILURE("%s: %lld z-slabs, expected %lld", what, (long long)gpu.slabs, (long long)slabs);
        ok = 0;
    }
    vl_volume_free(&cpu_labels);
    vl_volume_free(&gpu_labels);
    vl_label_result_free(&cpu);
    vl_label_result_free(&gpu);
    return ok;
}

static void random_maps(int quick)
{
    static const int connectivities[] = {6, 18, 26, 4, 8};
    static const vl_label_order orders[] = {VL_ORDER_MATLAB, VL_ORDER_MATLAB_XY, VL_ORDER_SIZE, VL_ORDER_SIZE_RASTER};
    static const vl_dtype dtypes[] = {VL_U8, VL_U16, VL_U32, VL_I16};
    const int cases = quick ? 60 : 240;
    int identical = 0, compared = 0;
    for (int c = 0; c < cases; c++) {
        const int64_t limit = quick ? 24 : c % 10 == 0 ? 160 : 70;
        const int64_t nx = 1 + (int64_t)(test_random() % (uint64_t)limit),
                      ny = 1 + (int64_t)(test_random() % (uint64_t)limit),
                      nz = 1 + (int64_t)(test_random() % (uint64_t)limit);
        const uint32_t class_count = 2 + (uint32_t)(test_random() % 199);
        const vl_dtype dtype = dtypes[c % 4];
        vl_volume map;
        if (vl_volume_create(&map, nx, ny, nz, dtype) != VL_OK) {
            CHECK(0, "cannot allocate a class map");
            return;
        }
        const double noise = (double)(test_random() % 100) / 100.0;
        fill_class_map(&map, class_count, noise);
        const int connectivity = connectivities[c % 5];
        const vl_label_order order = orders[c / 5 % 4];
        char what[240];
        snprintf(what, sizeof what, "map %d %lldx%lldx%lld %s, %u classes, noise %.2f, conn %d, order %s", c,
                 (long long)nx, (long long)ny, (long long)nz, vl_dtype_name(dtype), class_count, noise, connectivity,
                 vl_label_order_name(order));
        compared++;
        identical += compare(&map, connectivity, order, 0, what);
        if (c % 4 == 0 && nz > 1) {
            const int64_t depth = 1 + (int64_t)(test_random() % (uint64_t)(nz - 1));
            char slabbed[300];
            snprintf(slabbed, sizeof slabbed, "%s, z-slabs of %lld", what, (long long)depth);
            compared++;
            identical += compare(&map, connectivity, order, depth, slabbed);
        }
        vl_volume_free(&map);
    }
    CHECK(identical == compared, "%d of %d class maps differ between GPU and CPU", compared - identical, compared);
    printf("gpu_multilabel random: %d of %d class maps identical\n", identical, compared);
}

static void large_maps(void)
{
    static const uint32_t class_counts[] = {20, 117};
    for (int k = 0; k < 2; k++) {
        vl_volume map;
        if (vl_volume_create(&map, 512, 512, 400, VL_U8) != VL_OK) {
            CHECK(0, "cannot allocate a 512x512x400 class map");
            return;
        }
        fill_class_map(&map, class_counts[k], 0.01);
        for (int o = 0; o < 4; o++) {
            const vl_label_order order = (vl_label_order)o;
            char what[160];
            snprintf(what, sizeof what, "512x512x400, %u classes, conn 26, order %s", class_counts[k],
                     vl_label_order_name(order));
            const int ok = compare(&map, 26, order, 0, what);
            CHECK(ok, "%s differs", what);
            if (ok)
                printf("ok %s\n", what);
        }
        char what[160];
        snprintf(what, sizeof what, "512x512x400, %u classes, conn 6, z-slabs of 64", class_counts[k]);
        CHECK(compare(&map, 6, VL_ORDER_MATLAB, 64, what), "%s differs", what);
        vl_volume_free(&map);
    }
}

static void huge_map(void)
{
    vl_volume map;
    if (vl_volume_create_uninitialised(&map, 2048, 2048, 1025, VL_U8) != VL_OK) {
        CHECK(0, "cannot allocate a 2048x2048x1025 class map");
        return;
    }
    /* Seven classes in 64-voxel cells, cut by empty planes every 97 voxels along x and every 61 along z. */
    uint8_t *m = map.data;
    for (int64_t z = 0; z < map.nz; z++)
        for (int64_t y = 0; y < map.ny; y++)
            for (int64_t x = 0; x < map.nx; x++)
                m[x + map.nx * (y + map.ny * z)] =
                    x % 97 == 0 || z % 61 == 0 ? 0 : (uint8_t)(1 + (x / 64 + y / 64 + z / 64) % 7);
    const int ok = compare(&map, 26, VL_ORDER_MATLAB, 0, "2048x2048x1025 class map, conn 26, order matlab");
    CHECK(ok, "the 2^32 + 2^22-voxel class map differs between GPU and CPU");
    if (ok)
        printf("ok 2048x2048x1025 class map (over 2^32 voxels), conn 26, in z-slabs\n");
    vl_volume_free(&map);
}

static void real_mask(const char *path, int64_t nx, int64_t ny, int64_t nz)
{
    vl_volume map;
    if (vl_volume_create(&map, nx, ny, nz, VL_U8) != VL_OK) {
        CHECK(0, "cannot allocate %lldx%lldx%lld", (long long)nx, (long long)ny, (long long)nz);
        return;
    }
    FILE *in = fopen(path, "rb");
    const size_t voxels = (size_t)vl_volume_voxels(&map);
    const int read_ok = in && fread(map.data, 1, voxels, in) == voxels;
    if (in)
        fclose(in);
    CHECK(read_ok, "cannot read %zu bytes from %s", voxels, path);
    uint8_t *m = map.data;
    for (int64_t z = 0, i = 0; read_ok && z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++, i++)
                m[i] = m[i] ? (uint8_t)(1 + (x / 32 + y / 32 + z / 4) % 4) : 0;
    static const int connectivities[] = {6, 18, 26};
    for (int c = 0; read_ok && c < 3; c++)
        for (int o = 0; o < 4; o++) {
            char what[300];
            snprintf(what, sizeof what, "real %s as 4 classes, conn %d, order %s", path, connectivities[c],
                     vl_label_order_name((vl_label_order)o));
            const int ok = compare(&map, connectivities[c], (vl_label_order)o, 0, what);
            CHECK(ok, "%s differs", what);
            if (ok)
                printf("ok %s\n", what);
        }
    vl_volume_free(&map);
}

int main(int argc, char **argv)
{
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    const char *mode = argc > 1 ? argv[1] : "random";
    test_random_state = 0x6A09E667F3BCC909ull;
    if (strcmp(mode, "random") == 0)
        random_maps(argc > 2 && strcmp(argv[2], "--quick") == 0);
    else if (strcmp(mode, "large") == 0)
        large_maps();
    else if (strcmp(mode, "huge") == 0)
        huge_map();
    else if (strcmp(mode, "raw") == 0 && argc == 6)
        real_mask(argv[2], atoll(argv[3]), atoll(argv[4]), atoll(argv[5]));
    else {
        fprintf(stderr, "usage: gpu_multilabel_test random [--quick] | large | huge | raw FILE NX NY NZ\n");
        return 2;
    }
    return test_finish("gpu_multilabel_test");
}
