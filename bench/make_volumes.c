/* Writes the fixed CPU benchmark masks of docs/design.md §10 as raw u8 (x fastest):
 *   noise50.raw, noise20.raw  512^3 Bernoulli(0.5), Bernoulli(0.2) (xorshift, fixed seeds)
 *   ct.raw                    the CT-like phantom, 512x512x400, thresholded at HU >= THRESHOLD
 * usage: make_volumes OUTDIR [THRESHOLD_HU]   (default 100: vessels, bone, contrast and noise specks) */
#include <stdio.h>
#include <stdlib.h>

#include "voxlabel/threshold.h"
#include "voxlabel/phantom.h"

static int write_raw(const char *directory, const char *name, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(data, 1, bytes, file) != bytes || fclose(file) != 0) {
        fprintf(stderr, "make_volumes: cannot write %s\n", path);
        return 0;
    }
    return 1;
}

static int write_noise(const char *directory, const char *name, double density, uint64_t seed)
{
    const size_t n = (size_t)512 * 512 * 512;
    uint8_t *mask = malloc(n);
    if (!mask)
        return 0;
    const uint64_t threshold = (uint64_t)(density * 18446744073709551615.0);
    for (size_t i = 0; i < n; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        mask[i] = seed < threshold;
    }
    int ok = write_raw(directory, name, mask, n);
    free(mask);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: make_volumes OUTDIR [THRESHOLD_HU]\n");
        return 2;
    }
    const double threshold = argc == 3 ? atof(argv[2]) : 100.0;
    vl_phantom_options options;
    vl_phantom_options_default(&options);
    options.nx = 512, options.ny = 512, options.nz = 400;
    options.pixel_spacing_mm = 0.7;
    options.slice_spacing_mm = 1.0;
    vl_volume hu, mask;
    if (vl_phantom_generate(&options, &hu) != VL_OK || vl_threshold(&hu, threshold, 1e9, &mask) != VL_OK) {
        fprintf(stderr, "make_volumes: %s\n", vl_last_error());
        return 1;
    }
    int ok = write_raw(argv[1], "ct.raw", mask.data, (size_t)vl_volume_voxels(&mask)) &&
             write_noise(argv[1], "noise50.raw", 0.5, 0x9E3779B97F4A7C15ull) &&
             write_noise(argv[1], "noise20.raw", 0.2, 0xD1B54A32D192ED03ull);
    vl_volume_free(&hu);
    vl_volume_free(&mask);
    return ok ? 0 : 1;
}
