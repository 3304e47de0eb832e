/* CPU labeller against fixed Octave bwlabeln references in test-data/bwlabeln (no Octave needed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/label.h"

/* The whole file, or NULL (counted as a failure) when it is missing or short. */
static void *read_all(const char *path, size_t bytes)
{
    FILE *file = fopen(path, "rb");
    void *data = malloc(bytes);
    const int ok = file && data && fread(data, 1, bytes, file) == bytes;
    if (file)
        fclose(file);
    CHECK(ok, "cannot read %zu bytes from %s", bytes, path);
    if (!ok) {
        free(data);
        return NULL;
    }
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
    CHECK(manifest != NULL, "cannot open %s", path);
    if (!manifest)
        return test_finish("label_fixed");
    char name[64];
    long long nx, ny, nz;
    int compared = 0, differing = 0;
    while (fscanf(manifest, "%63s %lld %lld %lld", name, &nx, &ny, &nz) == 4) {
        const size_t n = (size_t)(nx * ny * nz);
        snprintf(path, sizeof path, "%s/%s.mask", argv[1], name);
        vl_volume mask = {.nx = nx, .ny = ny, .nz = nz, .dtype = VL_U8, .data = read_all(path, n)};
        if (!mask.data)
            continue;
        vl_geometry_identity(&mask.geometry);
        for (int conn = 6; conn <= 26; conn += conn == 6 ? 12 : 8) {
            snprintf(path, sizeof path, "%s/%s.octave.c%d", argv[1], name, conn);
            uint32_t *expected = read_all(path, n * 4);
            if (!expected)
                continue;
            vl_label_options options;
            vl_label_options_default(&options);
            options.device.kind = VL_DEVICE_CPU;
            options.connectivity = conn;
            vl_volume labels;
            vl_label_result result;
            const vl_status status = vl_label_volume(&mask, &labels, &options, &result);
            CHECK(status == VL_OK, "%s conn %d: labelling failed", name, conn);
            if (status == VL_OK) {
                compared++;
                const int same = memcmp(labels.data, expected, n * 4) == 0;
                differing += !same;
                CHECK(same, "%s conn %d differs from Octave bwlabeln", name, conn);
                vl_volume_free(&labels);
                vl_label_result_free(&result);
            }
            free(expected);
        }
        free(mask.data);
    }
    fclose(manifest);
    printf("label_fixed: %d label volumes compared with Octave references, %d differ\n", compared, differing);
    CHECK(compared > 0, "no label volume compared (empty manifest?)");
    return test_finish("label_fixed");
}
