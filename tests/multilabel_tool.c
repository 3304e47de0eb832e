/* Test tool for the Python oracles (tests/multilabel_cc3d.py): labels a raw class map with the library's
 * multilabel labeller and writes the labels, the component table and optionally the cleaned class map.
 *   multilabel_tool IN.raw NX NY NZ u8|u16|u32|i16 CONN ORDER DEVICE OUT_PREFIX [MIN_SIZE LARGEST_PER_CLASS]
 * writes OUT_PREFIX.labels (u32, x fastest), OUT_PREFIX.csv (label,class,size) and, with the filter
 * arguments, OUT_PREFIX.cleaned (the cleaned class map, the input's type). Exit 0 on success, 1 when the
 * library refuses (its error on stderr), 2 on bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/label.h"

static int write_file(const char *prefix, const char *suffix, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", prefix, suffix);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "multilabel_tool: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 10 && argc != 12) {
        fprintf(stderr, "usage: multilabel_tool IN.raw NX NY NZ TYPE CONN ORDER DEVICE OUT_PREFIX [MIN_SIZE LARGEST]\n");
        return 2;
    }
    const int64_t nx = atoll(argv[2]), ny = atoll(argv[3]), nz = atoll(argv[4]);
    const char *type = argv[5];
    const vl_dtype dtype = !strcmp(type, "u8") ? VL_U8 : !strcmp(type, "u16") ? VL_U16 : !strcmp(type, "u32") ? VL_U32
                         : !strcmp(type, "i16") ? VL_I16 : VL_F32;
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = atoi(argv[6]);
    if (vl_label_order_parse(argv[7], &options.order) != VL_OK || vl_device_parse(argv[8], &options.device) != VL_OK) {
        fprintf(stderr, "multilabel_tool: %s\n", vl_last_error());
        return 2;
    }
    vl_volume map;
    if (vl_volume_create(&map, nx, ny, nz, dtype) != VL_OK)
        return 2;
    FILE *in = fopen(argv[1], "rb");
    const size_t bytes = (size_t)vl_volume_voxels(&map) * vl_dtype_size(dtype);
    if (!in || fread(map.data, 1, bytes, in) != bytes) {
        fprintf(stderr, "multilabel_tool: cannot read %zu bytes from %s\n", bytes, argv[1]);
        return 2;
    }
    fclose(in);
    vl_volume labels;
    vl_label_result result;
    if (vl_label_multilabel(&map, &labels, &options, &result) != VL_OK) {
        fprintf(stderr, "multilabel_tool: %s\n", vl_last_error());
        return 1;
    }
    int failed = 0;
    if (argc == 12) {
        vl_volume cleaned;
        if (vl_label_filter_per_class(&labels, &result, strtoull(argv[10], NULL, 10),
                                      (uint32_t)strtoul(argv[11], NULL, 10)) != VL_OK ||
            vl_class_map_clean(&map, &labels, VL_FILL_BACKGROUND, options.connectivity, &cleaned) != VL_OK) {
            fprintf(stderr, "multilabel_tool: %s\n", vl_last_error());
            return 1;
        }
        failed |= write_file(argv[9], ".cleaned", cleaned.data, bytes);
        vl_volume_free(&cleaned);
    }
    failed |= write_file(argv[9], ".labels", labels.data, (size_t)vl_volume_voxels(&labels) * sizeof(uint32_t));
    char path[4096];
    snprintf(path, sizeof path, "%s.csv", argv[9]);
    FILE *csv = fopen(path, "w");
    if (!csv)
        return 1;
    fprintf(csv, "label,class,size\n");
    for (uint32_t k = 0; k < result.count; k++)
        fprintf(csv, "%u,%u,%llu\n", k + 1, result.classes[k], (unsigned long long)result.sizes[k]);
    failed |= fclose(csv) != 0;
    printf("%u components on %s\n", result.count, result.device_name);
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    vl_volume_free(&map);
    return failed;
}
