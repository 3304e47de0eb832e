/* CPU labeller against fixed Octave bwlabeln references in test-data/bwlabeln (no Octave needed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/label.h"

static void *read_all(const char *path, size_t bytes)
{
    FILE *file = fopen(path, "rb");
    void *data = malloc(bytes);
    if (!file || fread(data, 1, bytes, file) != bytes) {
        fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, path);
        exit(1);
    }
    fclose(file);
    return data;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: label_fixed TEST_DATA_DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.txt", argv[1]);
    FILE *manifest = fopen(path, "r");
    if (!manifest) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    char name[64];
    long long nx, ny, nz;
    int compared = 0, failures = 0;
    while (fscanf(manifest, "%63s %lld %lld %lld", name, &nx, &ny, &nz) == 4) {
        const size_t n = (size_t)(nx * ny * nz);
        snprintf(path, sizeof path, "%s/%s.mask", argv[1], name);
        vl_volume mask = {.nx = nx, .ny = ny, .nz = nz, .dtype = VL_U8, .data = read_all(path, n)};
        vl_geometry_identity(&mask.geometry);
        for (int conn = 6; conn <= 26; conn += conn == 6 ? 12 : 8) {
            snprintf(path, sizeof path, "%s/%s.octave.c%d", argv[1], name, conn);
            uint32_t *expected = read_all(path, n * 4);
            vl_label_options options;
            vl_label_options_default(&options);
            options.device.kind = VL_DEVICE_CPU;
            options.connectivity = conn;
            vl_volume labels;
            vl_label_result result;
            if (vl_label_volume(&mask, &labels, &options, &result) != VL_OK) {
                fprintf(stderr, "%s: %s\n", name, vl_last_error());
                return 1;
            }
            compared++;
            if (memcmp(labels.data, expected, n * 4) != 0) {
                failures++;
                fprintf(stderr, "FAIL %s conn %d differs from Octave bwlabeln\n", name, conn);
            }
            vl_volume_free(&labels);
            vl_label_result_free(&result);
            free(expected);
        }
        free(mask.data);
    }
    fclose(manifest);
    printf("%d label volumes compared with Octave references, %d differ\n", compared, failures);
    return failures || compared == 0;
}
