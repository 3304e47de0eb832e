/* Test tool of the forest stage for the Python oracles (scipy filters, scikit-learn forests):
 *   forest_tool features IMAGE DIMS OUT.f32 [X0 Y0 Z0 X1 Y1 Z1]
 *       every channel of the default bank (DIMS 2 or 3) on the box (default the whole image), float32,
 *       channel after channel, x fastest; channel names on stdout, one a line
 *   forest_tool train X.f32 Y.u8 SAMPLES FEATURES DIMS MODEL.vlrf TREES SEED DEVICE
 *       a forest from featurised samples (classes 1..C in Y), saved as MODEL
 *   forest_tool predict MODEL X.f32 SAMPLES OUT.f32
 *       per-class probabilities of featurised samples (CPU) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/forest.h"
#include "voxlabel/io.h"

static void *read_all(const char *path, size_t bytes)
{
    FILE *in = fopen(path, "rb");
    void *data = malloc(bytes + 1);
    if (!in || !data || fread(data, 1, bytes, in) != bytes) {
        fprintf(stderr, "%s: cannot read %zu bytes\n", path, bytes);
        exit(1);
    }
    fclose(in);
    return data;
}

static void write_all(const char *path, const void *data, size_t bytes)
{
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(data, 1, bytes, out) != bytes || fclose(out) != 0) {
        fprintf(stderr, "%s: cannot write\n", path);
        exit(1);
    }
}

static int features(int argc, char **argv)
{
    vl_volume image;
    vl_read_options read;
    vl_read_options_default(&read);
    if (vl_read_volume(argv[2], &read, &image) != VL_OK) {
        fprintf(stderr, "%s\n", vl_last_error());
        return 1;
    }
    vl_filter_bank bank;
    vl_filter_bank_default(&bank, atoi(argv[3]));
    vl_box box = {{0, 0, 0}, {image.nx, image.ny, image.nz}};
    if (argc >= 11)
        for (int a = 0; a < 3; a++) {
            box.lo[a] = atoll(argv[5 + a]);
            box.hi[a] = atoll(argv[8 + a]);
        }
    const int channels = vl_filter_bank_channels(&bank);
    const size_t voxels = (size_t)((box.hi[0] - box.lo[0]) * (box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]));
    float *out = malloc(sizeof(float) * voxels * (size_t)channels);
    if (!out || vl_filters_compute(&image, &bank, &box, out, 0) != VL_OK) {
        fprintf(stderr, "features: %s\n", vl_last_error());
        return 1;
    }
    write_all(argv[4], out, sizeof(float) * voxels * (size_t)channels);
    for (int c = 0; c < channels; c++) {
        char name[64];
        vl_filter_bank_channel_name(&bank, c, name, sizeof name);
        printf("%s\n", name);
    }
    free(out);
    vl_volume_free(&image);
    return 0;
}

static int train(char **argv)
{
    const int64_t n = atoll(argv[4]);
    const int F = atoi(argv[5]);
    float *x = read_all(argv[2], sizeof(float) * (size_t)n * (size_t)F);
    uint8_t *y = read_all(argv[3], (size_t)n);
    int classes = 0;
    for (int64_t i = 0; i < n; i++)
        classes = y[i] > classes ? y[i] : classes;
    vl_filter_bank bank;
    vl_filter_bank_default(&bank, atoi(argv[6]));
    vl_forest_options options;
    vl_forest_options_default(&options);
    options.trees = atoi(argv[8]);
    options.seed = strtoull(argv[9], NULL, 10);
    if (vl_device_parse(argv[10], &options.device) != VL_OK)
        return 2;
    vl_forest forest;
    vl_device_outcome outcome;
    if (vl_forest_train_samples(x, y, n, F, classes, &bank, &options, &forest, &outcome) != VL_OK ||
        vl_forest_save(&forest, argv[7], 1) != VL_OK) {
        fprintf(stderr, "train: %s\n", vl_last_error());
        return outcome.used == VL_DEVICE_GPU || options.device.kind != VL_DEVICE_GPU ? 1 : TEST_SKIP_CODE;
    }
    printf("oob %.6f nodes %lld device %s\n", forest.oob_accuracy, (long long)forest.tree_node_start[forest.tree_count],
           vl_device_kind_name(outcome.used));
    vl_forest_free(&forest);
    free(x);
    free(y);
    return 0;
}

static int predict(char **argv)
{
    vl_forest forest;
    if (vl_forest_load(argv[2], &forest) != VL_OK) {
        fprintf(stderr, "predict: %s\n", vl_last_error());
        return 1;
    }
    const int64_t n = atoll(argv[4]);
    float *x = read_all(argv[3], sizeof(float) * (size_t)n * (size_t)forest.feature_count);
    float *p = malloc(sizeof(float) * (size_t)n * (size_t)forest.class_count);
    vl_forest_predict_samples(&forest, x, n, p);
    write_all(argv[5], p, sizeof(float) * (size_t)n * (size_t)forest.class_count);
    vl_forest_free(&forest);
    free(x);
    free(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "features") == 0)
        return features(argc, argv);
    if (argc == 11 && strcmp(argv[1], "train") == 0)
        return train(argv);
    if (argc == 6 && strcmp(argv[1], "predict") == 0)
        return predict(argv);
    fprintf(stderr, "usage: see the comment at the top of forest_tool.c\n");
    return 2;
}
