/* Writes random masks and voxlabel's labels for the Octave bwlabeln oracle (tests/label_oracle.m).
 * usage: label_oracle_gen OUTDIR SEED COUNT
 * For every volume NAME: NAME.mask (u8, x fastest) and NAME.c<conn>.<order> (u32 labels) for conn 6/18/26 in
 * orders matlab and matlab-xy, plus conn 4/8 for one-slice volumes; manifest.txt lists "NAME NX NY NZ". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_check.h"
#include "voxlabel/label.h"

static int write_file(const char *directory, const char *name, const char *suffix, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", directory, name, suffix);
    FILE *file = fopen(path, "wb");
    int ok = file && fwrite(data, 1, bytes, file) == bytes;
    if (file)
        ok &= fclose(file) == 0;
    CHECK(ok, "cannot write %s", path);
    return ok;
}

static int write_labels(const char *directory, const char *name, const vl_volume *mask, int connectivity,
                        vl_label_order order)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    options.connectivity = connectivity;
    options.order = order;
    vl_volume labels;
    vl_label_result result;
    const vl_status status = vl_label_volume(mask, &labels, &options, &result);
    CHECK(status == VL_OK, "%s conn %d: labelling failed", name, connectivity);
    if (status != VL_OK)
        return 0;
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".c%d.%s", connectivity, order == VL_ORDER_MATLAB ? "matlab" : "xy");
    int ok = write_file(directory, name, suffix, labels.data, (size_t)vl_volume_voxels(&labels) * 4);
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: label_oracle_gen OUTDIR SEED COUNT\n");
        return 2;
    }
    const char *directory = argv[1];
    test_random_state = strtoull(argv[2], NULL, 10) | 1;
    int count = atoi(argv[3]);
    static const int64_t fixed_shapes[][3] = {{1, 23, 1}, {23, 1, 1}, {1, 1, 23}, {7, 13, 5}, {13, 7, 5}, {2, 2, 2},
                                              {64, 48, 20}, {100, 3, 3}, {31, 37, 1}, {40, 30, 1}, {9, 9, 9}, {128, 96, 64}};
    const int fixed = (int)(sizeof fixed_shapes / sizeof fixed_shapes[0]);
    char manifest_path[4096];
    snprintf(manifest_path, sizeof manifest_path, "%s/manifest.txt", directory);
    FILE *manifest = fopen(manifest_path, "w");
    CHECK(manifest != NULL, "cannot write %s", manifest_path);
    if (!manifest)
        return 1;
    for (int v = 0; v < count; v++) {
        int64_t nx, ny, nz;
        if (v < fixed) {
            nx = fixed_shapes[v][0], ny = fixed_shapes[v][1], nz = fixed_shapes[v][2];
        } else {
            nx = 1 + (int64_t)(test_random() % 40), ny = 1 + (int64_t)(test_random() % 40),
            nz = 1 + (int64_t)(test_random() % 24);
        }
        vl_volume mask;
        const vl_status created = vl_volume_create(&mask, nx, ny, nz, VL_U8);
        CHECK(created == VL_OK, "cannot allocate a %lldx%lldx%lld mask", (long long)nx, (long long)ny, (long long)nz);
        if (created != VL_OK)
            return 1;
        uint8_t *data = mask.data;
        /* The first two volumes past the fixed shapes are empty and full; the rest span densities 0.05..0.6. */
        double density = v == fixed ? 0.0 : v == fixed + 1 ? 1.0 : 0.05 + 0.55 * (double)(test_random() % 1000) / 999.0;
        uint64_t threshold = density >= 1.0 ? UINT64_MAX : (uint64_t)(density * 18446744073709551615.0);
        for (int64_t i = 0; i < vl_volume_voxels(&mask); i++)
            data[i] = density > 0 && test_random() <= threshold;
        char name[32];
        snprintf(name, sizeof name, "v%03d", v);
        fprintf(manifest, "%s %" PRId64 " %" PRId64 " %" PRId64 "\n", name, nx, ny, nz);
        int ok = write_file(directory, name, ".mask", data, (size_t)vl_volume_voxels(&mask));
        static const int three_d[] = {6, 18, 26};
        for (int c = 0; c < 3 && ok; c++)
            ok = write_labels(directory, name, &mask, three_d[c], VL_ORDER_MATLAB) &&
                 write_labels(directory, name, &mask, three_d[c], VL_ORDER_MATLAB_XY);
        if (nz == 1)
            for (int c = 4; c <= 8 && ok; c += 4)
                ok = write_labels(directory, name, &mask, c, VL_ORDER_MATLAB);
        vl_volume_free(&mask);
        if (!ok)
            return 1;
    }
    CHECK(fclose(manifest) == 0, "cannot write %s", manifest_path);
    return failures != 0;
}
