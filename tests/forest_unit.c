/* The forest stage without oracles: same seed -> same forest (and another seed -> another), tiled prediction
 * equal to whole-volume prediction bit for bit (R4: tiles 16, 64, 128, 256 against one tile over the whole
 * volume), the model file's round trip and its refusals, and the scribble checks (geometry, missing class). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filters/eigen_symmetric.h"
#include "test_check.h"
#include "voxlabel/forest.h"
#include "voxlabel/phantom.h"

static void make_scribbles(const vl_volume *ct, vl_volume *scribbles)
{
    vl_volume_create(scribbles, ct->nx, ct->ny, ct->nz, VL_U8);
    scribbles->geometry = ct->geometry;
    uint8_t *s = scribbles->data;
    for (int64_t i = 0; i < vl_volume_voxels(ct); i += 53) {
        const double hu = vl_volume_value(ct, i);
        s[i] = hu < -500 ? 1 : hu < 200 ? 2 : 3;
    }
}

static int forests_equal(const vl_forest *a, const vl_forest *b)
{
    if (a->tree_count != b->tree_count || a->class_count != b->class_count)
        return 0;
    const int64_t nodes = a->tree_node_start[a->tree_count], leaves = a->tree_leaf_start[a->tree_count];
    return nodes == b->tree_node_start[b->tree_count] && leaves == b->tree_leaf_start[b->tree_count] &&
           memcmp(a->nodes, b->nodes, sizeof(vl_forest_node) * (size_t)nodes) == 0 &&
           memcmp(a->leaf_values, b->leaf_values, sizeof(float) * (size_t)(leaves * a->class_count)) == 0;
}

static void predictions_equal(const vl_forest *forest, const vl_volume *ct, const char *what)
{
    vl_forest_options options;
    vl_forest_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    options.tile = 4096;
    vl_volume whole[3], whole_map, tiled[3], tiled_map;
    CHECK(vl_forest_predict(forest, ct, &options, whole, &whole_map, NULL) == VL_OK, "%s: whole-volume prediction",
          what);
    const int tiles[] = {16, 64, 128, 256};
    for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
        options.tile = tiles[t];
        if (vl_forest_predict(forest, ct, &options, tiled, &tiled_map, NULL) != VL_OK) {
            CHECK(0, "%s: tile %d prediction", what, tiles[t]);
            continue;
        }
        const size_t bytes = (size_t)vl_volume_voxels(ct) * sizeof(float);
        for (int c = 0; c < forest->class_count; c++) {
            CHECK(memcmp(whole[c].data, tiled[c].data, bytes) == 0, "%s: tile %d, class %d probabilities differ",
                  what, tiles[t], c + 1);
            vl_volume_free(&tiled[c]);
        }
        CHECK(memcmp(whole_map.data, tiled_map.data, (size_t)vl_volume_voxels(ct)) == 0,
              "%s: tile %d class map differs", what, tiles[t]);
        vl_volume_free(&tiled_map);
    }
    /* the class map is the argmax of the probabilities, ties to the lower class */
    int64_t wrong = 0;
    for (int64_t i = 0; i < vl_volume_voxels(ct); i++) {
        int best = 0;
        for (int c = 1; c < forest->class_count; c++)
            if (((float *)whole[c].data)[i] > ((float *)whole[best].data)[i])
                best = c;
        wrong += ((uint8_t *)whole_map.data)[i] != best + 1;
    }
    CHECK(wrong == 0, "%s: %lld voxels' class is not their argmax", what, (long long)wrong);
    for (int c = 0; c < forest->class_count; c++)
        vl_volume_free(&whole[c]);
    vl_volume_free(&whole_map);
}

/* The 3x3 eigenvalue solver that the CPU and GPU share, on matrices with known eigenvalues: repeated, zero, rank 1,
 * nearly degenerate; descending and within a few float32 ulps of the norm. */
static void eigen3_known(void)
{
    static const struct {
        double m[6]; /* xx, xy, xz, yy, yz, zz */
        double expected[3];
    } cases[] = {
        {{1, 0, 0, -2, 0, 3}, {3, 1, -2}},
        {{0, 0, 0, 0, 0, 0}, {0, 0, 0}},
        {{2, 1, 1, 2, 1, 2}, {4, 1, 1}},
        {{1, 2, 2, 4, 4, 4}, {9, 0, 0}},
        {{1, 1e-9, 0, 1, 0, 1}, {1 + 1e-9, 1, 1 - 1e-9}},
        {{2, -1, 0, 2, -1, 2}, {2 + 1.4142135623730951, 2, 2 - 1.4142135623730951}},
        {{-5e7, 3e-3, 0, 1e-4, 0, 2e-4}, {2e-4, 1e-4, -5e7}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const double *m = cases[k].m, *x = cases[k].expected;
        float e[3];
        vl_eigen3((float)m[0], (float)m[1], (float)m[2], (float)m[3], (float)m[4], (float)m[5], e);
        const double norm = fmax(fabs(x[0]), fabs(x[2]));
        for (int i = 0; i < 3; i++)
            CHECK(fabs(e[i] - x[i]) <= 1e-6 * norm, "eigen3 case %zu: eigenvalue %d is %.9g, expected %.17g", k, i,
                  (double)e[i], x[i]);
        CHECK(e[0] >= e[1] && e[1] >= e[2], "eigen3 case %zu: not descending", k);
    }
}

int main(int argc, char **argv)
{
    eigen3_known();
    const char *work = argc > 1 ? argv[1] : ".";
    vl_phantom_options phantom;
    vl_phantom_options_default(&phantom);
    phantom.nx = 96, phantom.ny = 80, phantom.nz = 20;
    phantom.pixel_spacing_mm = 2.0, phantom.slice_spacing_mm = 3.0;
    vl_volume ct, scribbles;
    CHECK(vl_phantom_generate(&phantom, &ct) == VL_OK, "phantom");
    make_scribbles(&ct, &scribbles);

    vl_forest_options options;
    vl_forest_options_default(&options);
    options.trees = 12;
    options.device.kind = VL_DEVICE_CPU;
    for (int dims = 2; dims <= 3; dims++) {
        vl_filter_bank bank;
        vl_filter_bank_default(&bank, dims);
        if (dims == 3)
            vl_filter_bank_add_offsets(&bank, 4, 8.0, ct.geometry.spacing, 7);
        vl_forest a, b, c;
        options.seed = 5;
        CHECK(vl_forest_train(&ct, &scribbles, &bank, &options, &a, NULL) == VL_OK, "%dD train", dims);
        options.threads = 1;
        CHECK(vl_forest_train(&ct, &scribbles, &bank, &options, &b, NULL) == VL_OK, "%dD train again", dims);
        options.threads = 0;
        options.seed = 6;
        CHECK(vl_forest_train(&ct, &scribbles, &bank, &options, &c, NULL) == VL_OK, "%dD train seed 6", dims);
        CHECK(forests_equal(&a, &b), "%dD: the same seed (1 and all threads) grows the same forest", dims);
        CHECK(!forests_equal(&a, &c), "%dD: another seed grows another forest", dims);
        CHECK(a.oob_accuracy > 0.95, "%dD: out-of-bag accuracy %.4f", dims, a.oob_accuracy);
        float sum = 0;
        for (int f = 0; f < a.feature_count; f++)
            sum += a.importances[f];
        CHECK_NEAR(sum, 1.0, 1e-5);
        predictions_equal(&a, &ct, dims == 2 ? "2D" : "3D with offsets");

        char path[4096];
        snprintf(path, sizeof path, "%s/forest_unit_%dd.vlrf", work, dims);
        CHECK(vl_forest_save(&a, path, 1) == VL_OK, "save");
        CHECK(vl_forest_save(&a, path, 0) == VL_ERR_OUTPUT, "an existing model is not replaced without force");
        vl_forest loaded;
        CHECK(vl_forest_load(path, &loaded) == VL_OK, "load");
        CHECK(forests_equal(&a, &loaded) && vl_filter_bank_equal(&a.bank, &loaded.bank) &&
                  loaded.oob_accuracy == a.oob_accuracy,
              "%dD: the model file round-trips", dims);
        vl_forest_free(&loaded);
        /* truncated and corrupted copies are refused with a reason */
        FILE *in = fopen(path, "rb");
        static unsigned char bytes[1 << 22];
        const size_t size = fread(bytes, 1, sizeof bytes, in);
        fclose(in);
        char bad[4096];
        snprintf(bad, sizeof bad, "%s/forest_unit_bad.vlrf", work);
        const size_t cuts[] = {3, 40, size / 2, size - 1};
        for (size_t k = 0; k < 4; k++) {
            FILE *out = fopen(bad, "wb");
            fwrite(bytes, 1, cuts[k], out);
            fclose(out);
            CHECK(vl_forest_load(bad, &loaded) == VL_ERR_INPUT, "a model cut at %zu bytes is refused", cuts[k]);
        }
        bytes[4] = 1; /* a format 1 model (float64 features) asks to be trained again */
        FILE *old = fopen(bad, "wb");
        fwrite(bytes, 1, size, old);
        fclose(old);
        CHECK(vl_forest_load(bad, &loaded) == VL_ERR_INPUT && strstr(vl_last_error(), "float64") &&
                  strstr(vl_last_error(), "train the model again"),
              "a format 1 model is refused with the reason and the remedy: %s", vl_last_error());
        bytes[4] = VL_FOREST_FORMAT_VERSION;
        bytes[size - 40] ^= 0x7f; /* inside the last tree's leaves or nodes */
        bytes[8] = 9;             /* dims */
        FILE *out = fopen(bad, "wb");
        fwrite(bytes, 1, size, out);
        fclose(out);
        CHECK(vl_forest_load(bad, &loaded) == VL_ERR_INPUT, "a model with dims 9 is refused");
        vl_forest_free(&a);
        vl_forest_free(&b);
        vl_forest_free(&c);
    }

    /* scribble checks */
    vl_filter_bank bank;
    vl_filter_bank_default(&bank, 3);
    vl_forest forest;
    vl_volume other;
    vl_volume_create(&other, ct.nx, ct.ny, ct.nz - 1, VL_U8);
    CHECK(vl_forest_train(&ct, &other, &bank, &options, &forest, NULL) == VL_ERR_INPUT &&
              strstr(vl_last_error(), "voxels"),
          "scribbles of another size are refused");
    vl_volume_free(&other);
    vl_volume_create(&other, ct.nx, ct.ny, ct.nz, VL_U8);
    other.geometry = ct.geometry;
    other.geometry.spacing[2] = 5.0;
    ((uint8_t *)other.data)[0] = 1, ((uint8_t *)other.data)[1] = 2;
    CHECK(vl_forest_train(&ct, &other, &bank, &options, &forest, NULL) == VL_ERR_INPUT &&
              strstr(vl_last_error(), "spacing"),
          "scribbles of another spacing are refused");
    other.geometry = ct.geometry;
    ((uint8_t *)other.data)[1] = 3;
    CHECK(vl_forest_train(&ct, &other, &bank, &options, &forest, NULL) == VL_ERR_INPUT &&
              strstr(vl_last_error(), "class 2 has no scribbles"),
          "a class without scribbles is named");
    ((uint8_t *)other.data)[1] = 1;
    CHECK(vl_forest_train(&ct, &other, &bank, &options, &forest, NULL) == VL_ERR_INPUT &&
              strstr(vl_last_error(), "only class 1"),
          "one class is not enough");
    vl_volume_free(&other);
    vl_volume_free(&scribbles);
    vl_volume_free(&ct);
    return test_finish("forest_unit");
}
