/* Test helper for the Python oracles of the 2D stages:
 *   image2d_tool hsv MODE OUT.raw          HSV of all 2^24 RGB triples (index r<<16 | g<<8 | b), CPU
 *   image2d_tool morph OP SE R PER_SLICE NX NY NZ IN.raw OUT.raw cpu|gpu
 *                                           morphology of a U8 raw volume (x fastest) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/color.h"
#include "voxlabel/morphology.h"
#include "test_check.h"

static int write_file(const char *path, const void *data, size_t bytes)
{
    FILE *file = fopen(path, "wb");
    int ok = file && fwrite(data, 1, bytes, file) == bytes;
    if (file)
        ok &= fclose(file) == 0;
    CHECK(ok, "cannot write %zu bytes to %s", bytes, path);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "hsv") == 0) {
        vl_color_mode mode;
        if (vl_color_mode_parse(argv[2], &mode) != VL_OK)
            return 2;
        size_t n = (size_t)1 << 24;
        uint8_t *rgb = malloc(3 * n), *hsv = malloc(3 * n);
        CHECK(rgb && hsv, "out of memory");
        if (!rgb || !hsv)
            return 1;
        for (size_t i = 0; i < n; i++)
            rgb[3 * i] = (uint8_t)(i >> 16), rgb[3 * i + 1] = (uint8_t)(i >> 8), rgb[3 * i + 2] = (uint8_t)i;
        const vl_status status = vl_rgb_to_hsv(rgb, hsv, (int64_t)n, mode, &(vl_device){.kind = VL_DEVICE_CPU});
        CHECK(status == VL_OK, "vl_rgb_to_hsv %s", argv[2]);
        if (status != VL_OK)
            return 1;
        return write_file(argv[3], hsv, 3 * n);
    }
    if (argc == 12 && strcmp(argv[1], "morph") == 0) {
        vl_morphology_op op;
        vl_structuring_element se;
        if (vl_morphology_op_parse(argv[2], &op) != VL_OK || vl_structuring_element_parse(argv[3], &se) != VL_OK)
            return 2;
        vl_volume mask;
        const vl_status created = vl_volume_create(&mask, atoll(argv[6]), atoll(argv[7]), atoll(argv[8]), VL_U8);
        CHECK(created == VL_OK, "cannot allocate a %sx%sx%s mask", argv[6], argv[7], argv[8]);
        if (created != VL_OK)
            return 1;
        size_t bytes = (size_t)vl_volume_voxels(&mask);
        FILE *in = fopen(argv[9], "rb");
        const int read = in && fread(mask.data, 1, bytes, in) == bytes;
        if (in)
            fclose(in);
        CHECK(read, "cannot read %zu bytes from %s", bytes, argv[9]);
        if (!read)
            return 1;
        vl_status status = vl_morphology_apply(&mask, op, se, atoi(argv[4]), atoi(argv[5]),
                                               &(vl_device){.kind = strcmp(argv[11], "gpu") == 0 ? VL_DEVICE_GPU
                                                                                               : VL_DEVICE_CPU},
                                               NULL);
        if (status == VL_ERR_DEVICE && strcmp(argv[11], "gpu") == 0)
            TEST_SKIP("no usable GPU: %s", vl_last_error());
        CHECK(status == VL_OK, "morphology %s %s r=%s", argv[2], argv[3], argv[4]);
        if (status != VL_OK)
            return 1;
        return write_file(argv[10], mask.data, bytes);
    }
    fprintf(stderr, "usage: see the comment at the top of image2d_tool.c\n");
    return 2;
}
