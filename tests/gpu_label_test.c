/* GPU labeller == CPU reference, exactly (labels, count, sizes), on:
 *   random  [--quick]             >= 240 random volumes: odd shapes, densities, blobs, diagonal lines,
 *                                 checkerboards, non-binary masks, each pattern under every connectivity and
 *                                 order (--quick: 60 small ones, for compute-sanitizer); a third of them
 *                                 again in z-slabs of a random depth
 *   design                        DESIGN §10 volumes: 512^3 Bernoulli 0.5 / 0.2, CT-like phantom 512x512x400
 *   raw FILE NX NY NZ             a u8 mask file (real CT thresholded by gpu_label_dicom --export)
 * Exits 77 (skipped) when no usable GPU is present. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_compare.h"
#include "label/label_gpu.h"
#include "voxlabel/threshold.h"
#include "voxlabel/label.h"
#include "test_check.h"

#if __has_include("voxlabel/phantom.h")
#include "voxlabel/phantom.h"
#define VL_TEST_HAVE_PHANTOM 1
#endif

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double uniform(void) { return (double)(next_random() >> 11) / 9007199254740992.0; }

static int64_t random_between(int64_t lo, int64_t hi) { return lo + (int64_t)(next_random() % (uint64_t)(hi - lo + 1)); }

static void fill_bernoulli(vl_volume *mask, double density, int any_nonzero)
{
    uint8_t *m = mask->data;
    for (int64_t i = 0; i < vl_volume_voxels(mask); i++)
        m[i] = uniform() < density ? (any_nonzero ? (uint8_t)random_between(1, 255) : 1) : 0;
}

/* Random balls: big components with holes and touching pairs. */
static void fill_blobs(vl_volume *mask)
{
    uint8_t *m = mask->data;
    memset(m, 0, (size_t)vl_volume_voxels(mask));
    int balls = (int)random_between(1, 12);
    for (int k = 0; k < balls; k++) {
        double cx = uniform() * mask->nx, cy = uniform() * mask->ny, cz = uniform() * mask->nz;
        double r = 1 + uniform() * 0.4 * (double)(mask->nx + mask->ny + mask->nz) / 3;
        for (int64_t z = 0; z < mask->nz; z++)
            for (int64_t y = 0; y < mask->ny; y++)
                for (int64_t x = 0; x < mask->nx; x++) {
                    double dx = x - cx, dy = y - cy, dz = z - cz;
                    if (dx * dx + dy * dy + dz * dz <= r * r)
                        m[x + mask->nx * (y + mask->ny * z)] = uniform() < 0.9;
                }
    }
}

/* Random 26-connected diagonal walks: components that only hold together through edges and corners,
 * crossing tile faces in every direction. */
static void fill_walks(vl_volume *mask)
{
    uint8_t *m = mask->data;
    memset(m, 0, (size_t)vl_volume_voxels(mask));
    int walks = (int)random_between(1, 20);
    for (int k = 0; k < walks; k++) {
        int64_t x = random_between(0, mask->nx - 1), y = random_between(0, mask->ny - 1),
                z = random_between(0, mask->nz - 1);
        int64_t steps = random_between(1, 4 * (mask->nx + mask->ny + mask->nz));
        for (int64_t s = 0; s < steps; s++) {
            m[x + mask->nx * (y + mask->ny * z)] = 1;
            x += random_between(-1, 1);
            y += random_between(-1, 1);
            z += random_between(-1, 1);
            x = x < 0 ? 0 : x >= mask->nx ? mask->nx - 1 : x;
            y = y < 0 ? 0 : y >= mask->ny ? mask->ny - 1 : y;
            z = z < 0 ? 0 : z >= mask->nz ? mask->nz - 1 : z;
        }
    }
}

/* A checkerboard with a random phase, a voxel in ten left out: under 6 and 4 every 2x2 block of a slice
 * meets its diagonal only at a corner, so each is split in two pieces (the blocks of ccl_block_grid.cuh). */
static void fill_checker(vl_volume *mask)
{
    uint8_t *m = mask->data;
    const int64_t phase = random_between(0, 1);
    for (int64_t z = 0; z < mask->nz; z++)
        for (int64_t y = 0; y < mask->ny; y++)
            for (int64_t x = 0; x < mask->nx; x++)
                m[x + mask->nx * (y + mask->ny * z)] = ((x + y + z + phase) & 1) && uniform() < 0.9;
}

static const int connectivities[] = {6, 18, 26, 4, 8};

static int run_random(int quick)
{
    static const int64_t fixed[][3] = {
        {1, 1, 1},   {2, 2, 2},   {1, 17, 1},  {17, 1, 1},  {1, 1, 17},  {7, 13, 5},   {64, 48, 20},
        {100, 3, 3}, {3, 100, 3}, {3, 3, 100}, {33, 9, 9},  {65, 17, 17}, {31, 63, 17}, {130, 70, 9},
        {32, 8, 8},  {64, 16, 16}, {1, 300, 2}, {257, 1, 3}, {9, 9, 200}, {2, 129, 33},
        /* deeper than 65535 thread blocks of z (conn 6, 18, 26) */
        {2, 3, 600001}, {3, 2, 300001}, {2, 2, 140001}};
    const int fixed_count = (int)(sizeof fixed / sizeof fixed[0]);
    const int cases = quick ? 60 : 240;
    int differing = 0, slab_cases = 0, slab_differing = 0;
    for (int c = 0; c < cases; c++) {
        int64_t nx, ny, nz;
        if (c < fixed_count) {
            nx = fixed[c][0], ny = fixed[c][1], nz = fixed[c][2];
        } else if (quick) {
            nx = random_between(1, 40), ny = random_between(1, 40), nz = random_between(1, 12);
        } else if (c % 7 == 0) {
            nx = random_between(100, 200), ny = random_between(60, 140), nz = random_between(20, 40);
        } else {
            nx = random_between(1, 90), ny = random_between(1, 90), nz = random_between(1, 40);
        }
        vl_volume mask;
        const vl_status created = vl_volume_create(&mask, nx, ny, nz, VL_U8);
        CHECK(created == VL_OK, "cannot allocate a %lldx%lldx%lld mask", (long long)nx, (long long)ny, (long long)nz);
        if (created != VL_OK)
            return test_finish("gpu_label_test random");
        static const double densities[] = {0.0, 0.03, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 0.95, 1.0};
        const double density = densities[next_random() % (sizeof densities / sizeof densities[0])];
        const char *pattern = "bernoulli";
        switch (c / 5 % 6) {
        case 3: fill_blobs(&mask); pattern = "blobs"; break;
        case 4: fill_walks(&mask); pattern = "walks"; break;
        case 5: fill_checker(&mask); pattern = "checker"; break;
        case 2: fill_bernoulli(&mask, density, 1); pattern = "bernoulli-any-nonzero"; break;
        default: fill_bernoulli(&mask, density, 0); break;
        }
        const int connectivity = connectivities[c % 5];
        /* Each 120 cases hold every (connectivity, pattern, order) once; the 60 quick ones every
         * (connectivity, order) pair. */
        const vl_label_order order = vl_gpu_test_orders[(c / 5 + c / 30) % 4];
        char what[160];
        snprintf(what, sizeof what, "case %d %lldx%lldx%lld %s p=%.2f conn %d order %s", c, (long long)nx,
                 (long long)ny, (long long)nz, pattern, density, connectivity, vl_label_order_name(order));
        const int same = vl_gpu_test_compare(&mask, connectivity, order, 0, what);
        differing += !same;
        CHECK(same, "%s: GPU != CPU", what);
        /* A third of the volumes again in z-slabs (at most 64, so the deepest volumes stay quick). */
        if (c % 3 == 0 && nz > 1) {
            const int64_t depth = random_between((nz + 63) / 64, nz - 1);
            char slabbed[220];
            snprintf(slabbed, sizeof slabbed, "%s, z-slabs of %lld slices", what, (long long)depth);
            slab_cases++;
            const int same_in_slabs = vl_gpu_test_compare(&mask, connectivity, order, depth, slabbed);
            slab_differing += !same_in_slabs;
            CHECK(same_in_slabs, "%s: GPU != CPU", slabbed);
        }
        vl_volume_free(&mask);
    }
    printf("random: %d of %d volumes identical on GPU and CPU\n", cases - differing, cases);
    printf("random: %d of %d volumes labelled in z-slabs identical on GPU and CPU\n", slab_cases - slab_differing,
           slab_cases);
    return test_finish("gpu_label_test random");
}

/* Design volumes also in z-slabs of 97 slices, conn 6, size order: faces cut by giant components and by
 * many small ones, and the size order sorted after the merge. */
static void compare_in_slabs(const vl_volume *mask, const char *name)
{
    CHECK(vl_gpu_test_compare_in_slabs(mask, name, 6, VL_ORDER_SIZE, 97) == 0, "%s in z-slabs of 97: GPU != CPU", name);
}

/* Every connectivity in conns and every order, GPU against CPU. */
static void compare_all(const vl_volume *mask, const char *name, const int *conns, int conn_count)
{
    const int differing = vl_gpu_test_compare_all(mask, name, conns, conn_count);
    CHECK(differing == 0, "%s: %d (connectivity, order) cases GPU != CPU", name, differing);
}

static int run_design(void)
{
    static const int conns[] = {6, 18, 26};
    vl_volume mask;
    const double densities[] = {0.5, 0.2};
    const uint64_t seeds[] = {0x9E3779B97F4A7C15ull, 0xD1B54A32D192ED03ull};
    for (int v = 0; v < 2; v++) {
        const vl_status created = vl_volume_create(&mask, 512, 512, 512, VL_U8);
        CHECK(created == VL_OK, "cannot allocate a 512^3 mask");
        if (created != VL_OK)
            return test_finish("gpu_label_test design");
        rng_state = seeds[v];
        uint8_t *m = mask.data;
        const uint64_t threshold = (uint64_t)(densities[v] * 18446744073709551615.0);
        for (int64_t i = 0; i < vl_volume_voxels(&mask); i++)
            m[i] = next_random() < threshold;
        char name[64];
        snprintf(name, sizeof name, "512^3 Bernoulli(%.1f)", densities[v]);
        compare_all(&mask, name, conns, 3);
        compare_in_slabs(&mask, name);
        vl_volume_free(&mask);
    }
#ifdef VL_TEST_HAVE_PHANTOM
    vl_phantom_options options;
    vl_phantom_options_default(&options);
    options.nx = 512, options.ny = 512, options.nz = 400;
    options.pixel_spacing_mm = 0.7;
    options.slice_spacing_mm = 1.0;
    vl_volume hu;
    const int ready = vl_phantom_generate(&options, &hu) == VL_OK && vl_threshold(&hu, 100, 1e9, &mask) == VL_OK;
    CHECK(ready, "phantom: generating or thresholding failed");
    if (!ready)
        return test_finish("gpu_label_test design");
    compare_all(&mask, "CT-like phantom 512x512x400 >= 100 HU", conns, 3);
    compare_in_slabs(&mask, "CT-like phantom 512x512x400 >= 100 HU");
    vl_volume_free(&mask);
    vl_volume_free(&hu);
#else
    printf("note: no phantom generator in this build: CT-like volume not checked\n");
#endif
    return test_finish("gpu_label_test design");
}

/* A mask stored as raw u8 (x fastest), e.g. a thresholded real CT series written by gpu_label_dicom --export. */
static int run_raw(const char *path, int64_t nx, int64_t ny, int64_t nz)
{
    static const int conns[] = {6, 18, 26, 8};
    vl_volume mask;
    const int created = nx >= 1 && ny >= 1 && nz >= 1 && vl_volume_create(&mask, nx, ny, nz, VL_U8) == VL_OK;
    CHECK(created, "%s: bad dimensions %lldx%lldx%lld", path, (long long)nx, (long long)ny, (long long)nz);
    if (!created)
        return test_finish("gpu_label_test raw");
    FILE *file = fopen(path, "rb");
    size_t got = file ? fread(mask.data, 1, (size_t)vl_volume_voxels(&mask), file) : 0;
    if (file)
        fclose(file);
    CHECK(got == (size_t)vl_volume_voxels(&mask), "%s: cannot read %lld voxels", path, (long long)vl_volume_voxels(&mask));
    if (got != (size_t)vl_volume_voxels(&mask)) {
        vl_volume_free(&mask);
        return test_finish("gpu_label_test raw");
    }
    char name[700];
    snprintf(name, sizeof name, "%s (%lldx%lldx%lld)", path, (long long)nx, (long long)ny, (long long)nz);
    compare_all(&mask, name, conns, 4);
    if (nz > 1)
        CHECK(vl_gpu_test_compare_in_slabs(&mask, name, 26, VL_ORDER_MATLAB, (nz + 2) / 3) == 0,
              "%s in z-slabs of %lld: GPU != CPU", name, (long long)((nz + 2) / 3));
    vl_volume_free(&mask);
    return test_finish("gpu_label_test raw");
}

int main(int argc, char **argv)
{
    char why[256] = "";
    if (argc < 2) {
        fprintf(stderr, "usage: gpu_label_test random [--quick] | design | raw FILE NX NY NZ\n");
        return 2;
    }
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    if (strcmp(argv[1], "random") == 0)
        return run_random(argc > 2 && strcmp(argv[2], "--quick") == 0);
    if (strcmp(argv[1], "design") == 0)
        return run_design();
    if (strcmp(argv[1], "raw") == 0 && argc == 6)
        return run_raw(argv[2], atoll(argv[3]), atoll(argv[4]), atoll(argv[5]));
    fprintf(stderr, "gpu_label_test: unknown mode '%s'\n", argv[1]);
    return 2;
}
