/* z-slab labelling (src/label/label_slabs.c) == the CPU reference on the whole volume, exactly: labels, N and
 * sizes, for every connectivity and order and slab depths from 1 slice up, with the CPU labeller labelling
 * each slab. Also: a slab labeller that runs out of memory above some depth makes the driver halve the
 * depth and still get the same answer; a failing slab leaves nothing allocated. The same for class maps
 * (multilabel, u8 and u16), where the faces between slabs must join only equal classes. */
#include <stdlib.h>
#include <string.h>

#include "label_compare.h"
#include "label/label_slabs.h"
#include "voxlabel/error.h"
#include "test_check.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

typedef struct cpu_slabs {
    int connectivity;
    int multilabel;
    int64_t deepest_that_fits; /* 0: every depth fits */
    int64_t calls;
    vl_status fail_on_call;    /* nonzero: the third call fails with this */
} cpu_slabs;

static vl_status label_slab_on_cpu(void *context, const vl_volume *slab_mask, uint32_t *slab_labels,
                                   vl_label_order order, uint32_t *count, uint64_t **sizes, uint32_t **classes)
{
    cpu_slabs *cpu = context;
    if (++cpu->calls == 3 && cpu->fail_on_call)
        return vl_fail(cpu->fail_on_call, "test: slab labeller failing on purpose");
    if (cpu->deepest_that_fits && slab_mask->nz > cpu->deepest_that_fits)
        return vl_fail(VL_ERR_MEMORY, "test: %lld slices do not fit", (long long)slab_mask->nz);
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = cpu->connectivity;
    options.order = order;
    options.threads = 1;
    vl_volume labels;
    vl_label_result result;
    vl_status status = classes ? vl_label_multilabel_cpu(slab_mask, &labels, &options, &result)
                               : vl_label_volume_cpu(slab_mask, &labels, &options, &result);
    if (status != VL_OK)
        return status;
    memcpy(slab_labels, labels.data, (size_t)vl_volume_voxels(slab_mask) * sizeof *slab_labels);
    *count = result.count;
    *sizes = result.sizes;
    if (classes)
        *classes = result.classes;
    vl_volume_free(&labels);
    return VL_OK;
}

/* 1 when slab labelling at `depth` gives exactly the whole-volume answer. */
static int same_as_whole(const vl_volume *mask, int multilabel, int connectivity, vl_label_order order, int64_t depth,
                         int64_t deepest_that_fits, const char *what)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = order;
    vl_volume whole, slabbed;
    vl_label_result expected, got;
    const vl_status labelled = multilabel ? vl_label_multilabel_cpu(mask, &whole, &options, &expected)
                                          : vl_label_volume_cpu(mask, &whole, &options, &expected);
    CHECK(labelled == VL_OK, "%s: whole-volume labelling failed", what);
    if (labelled != VL_OK)
        return 0;
    cpu_slabs cpu = {connectivity, multilabel, deepest_that_fits, 0, VL_OK};
    int64_t slabs = 0;
    vl_status status = vl_label_in_slabs(mask, multilabel, &slabbed, &options, depth, label_slab_on_cpu, &cpu, &got, &slabs);
    int ok = status == VL_OK;
    CHECK(ok, "%s: slab labelling failed", what);
    if (ok) {
        const int64_t limit = deepest_that_fits && deepest_that_fits < depth ? deepest_that_fits : depth;
        const int64_t expected_slabs = (mask->nz + limit - 1) / limit;
        CHECK(slabs >= expected_slabs, "%s: %lld slabs, expected at least %lld", what, (long long)slabs,
              (long long)expected_slabs);
        ok = vl_test_same_labelling(&whole, &expected, "whole volume", &slabbed, &got, "z-slabs", what);
        CHECK(ok, "%s: z-slabs differ from the whole volume", what);
        vl_volume_free(&slabbed);
        vl_label_result_free(&got);
    }
    vl_volume_free(&whole);
    vl_label_result_free(&expected);
    return ok;
}

static void fill(vl_volume *mask, int pattern)
{
    uint8_t *m = mask->data;
    const int64_t nx = mask->nx, ny = mask->ny;
    const double density = (double)(next_random() % 100) / 100.0;
    for (int64_t i = 0; i < vl_volume_voxels(mask); i++) {
        const int64_t x = i % nx, y = i / nx % ny, z = i / (nx * ny);
        switch (pattern) {
        case 0: m[i] = (double)(next_random() % 1000) < 1000.0 * density; break;
        case 1: m[i] = (x + y + z) % 2 == 0; break;                   /* meets across faces at corners only */
        case 2: m[i] = (x == (z * 3 + y) % nx) || y == nx / 2; break;   /* sheets and lines through every slab */
        default: m[i] = (next_random() % 4) ? 0 : (uint8_t)(1 + next_random() % 255); break;
        }
    }
}

int main(void)
{
    static const int connectivities[] = {6, 18, 26, 4, 8};
    static const vl_label_order orders[] = {VL_ORDER_MATLAB, VL_ORDER_MATLAB_XY, VL_ORDER_SIZE, VL_ORDER_SIZE_RASTER};
    int cases = 0, identical = 0;
    for (int c = 0; c < 150; c++) {
        const int64_t nx = 1 + (int64_t)(next_random() % 24), ny = 1 + (int64_t)(next_random() % 24),
                      nz = 1 + (int64_t)(next_random() % 30);
        vl_volume mask;
        const vl_status created = vl_volume_create(&mask, nx, ny, nz, VL_U8);
        CHECK(created == VL_OK, "cannot allocate a mask");
        if (created != VL_OK)
            return test_finish("label_slabs");
        fill(&mask, c % 4);
        const int connectivity = connectivities[c % 5];
        const vl_label_order order = orders[c / 5 % 4];
        const int64_t depth = 1 + (int64_t)(next_random() % (uint64_t)nz);
        char what[160];
        snprintf(what, sizeof what, "case %d %lldx%lldx%lld pattern %d conn %d order %s depth %lld", c, (long long)nx,
                 (long long)ny, (long long)nz, c % 4, connectivity, vl_label_order_name(order), (long long)depth);
        cases++;
        identical += same_as_whole(&mask, 0, connectivity, order, depth, 0, what);
        /* Out of memory above a random depth: the driver halves until the slabs fit. */
        if (c % 3 == 0 && nz > 1) {
            snprintf(what, sizeof what, "case %d conn %d order %s, slabs of more than %lld slices run out of memory",
                     c, connectivity, vl_label_order_name(order), (long long)(1 + nz / 3));
            cases++;
            identical += same_as_whole(&mask, 0, connectivity, order, nz, 1 + nz / 3, what);
        }
        vl_volume_free(&mask);
    }

    /* Class maps: few classes in blobs that touch, so that faces between slabs meet other classes. */
    for (int c = 0; c < 120; c++) {
        const int64_t nx = 1 + (int64_t)(next_random() % 20), ny = 1 + (int64_t)(next_random() % 20),
                      nz = 2 + (int64_t)(next_random() % 24);
        const vl_dtype dtype = c % 2 ? VL_U16 : VL_U8;
        vl_volume classes;
        if (vl_volume_create(&classes, nx, ny, nz, dtype) != VL_OK)
            return test_finish("label_slabs");
        const uint32_t class_count = 2 + (uint32_t)(next_random() % 6);
        for (int64_t i = 0; i < vl_volume_voxels(&classes); i++) {
            const uint32_t value = next_random() % 5 ? (uint32_t)(1 + next_random() % class_count) * (c % 2 ? 1000 : 1) : 0;
            if (dtype == VL_U8)
                ((uint8_t *)classes.data)[i] = (uint8_t)value;
            else
                ((uint16_t *)classes.data)[i] = (uint16_t)value;
        }
        const int connectivity = connectivities[c % 5];
        const vl_label_order order = orders[c / 5 % 4];
        const int64_t depth = 1 + (int64_t)(next_random() % (uint64_t)(nz - 1));
        char what[160];
        snprintf(what, sizeof what, "class map %d %lldx%lldx%lld %s, %u classes, conn %d order %s depth %lld", c,
                 (long long)nx, (long long)ny, (long long)nz, vl_dtype_name(dtype), class_count, connectivity,
                 vl_label_order_name(order), (long long)depth);
        cases++;
        identical += same_as_whole(&classes, 1, connectivity, order, depth, c % 3 ? 0 : 1 + nz / 3, what);
        vl_volume_free(&classes);
    }

    /* A slab that fails for another reason fails the whole call, with nothing left allocated. */
    vl_volume mask, labels;
    vl_label_result result;
    vl_label_options options;
    vl_label_options_default(&options);
    if (vl_volume_create(&mask, 9, 7, 12, VL_U8) == VL_OK) {
        fill(&mask, 0);
        cpu_slabs failing = {26, 0, 0, 0, VL_ERR_DEVICE};
        int64_t slabs = 0;
        vl_status status = vl_label_in_slabs(&mask, 0, &labels, &options, 2, label_slab_on_cpu, &failing, &result, &slabs);
        CHECK(status == VL_ERR_DEVICE, "a failing slab gave status %d, expected VL_ERR_DEVICE", (int)status);
        CHECK(labels.data == NULL && result.sizes == NULL && result.count == 0,
              "a failed slab labelling left labels or sizes behind");
        vl_volume_free(&mask);
    }
    printf("label_slabs: %d of %d slab labellings identical to the whole volume\n", identical, cases);
    return test_finish("label_slabs");
}
