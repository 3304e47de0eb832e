/* Test tool for MOG2, driven by background_oracle_mog2.py and the device run:
 *   background_tool FRAMES W H N cpu|gpu OUT
 * reads N frames of W x H bytes, runs vl_background_mog2 with OpenCV's defaults and writes the N
 * foreground masks (0/255, as OpenCV writes them) to OUT; exit 77 for gpu without a usable device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/background.h"

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: background_tool FRAMES W H N cpu|gpu OUT\n");
        return 2;
    }
    int64_t w = atoll(argv[2]), h = atoll(argv[3]), n = atoll(argv[4]);
    int gpu = strcmp(argv[5], "gpu") == 0;
    if (gpu) {
        char why[256];
        if (!vl_device_gpu_usable(0, why, sizeof why))
            TEST_SKIP("no usable GPU: %s", why);
    }
    vl_volume frames, foreground;
    CHECK_TRUE(vl_volume_create(&frames, w, h, n, VL_U8) == VL_OK);
    FILE *in = fopen(argv[1], "rb");
    CHECK(in && fread(frames.data, 1, (size_t)(w * h * n), in) == (size_t)(w * h * n), "%s: short read", argv[1]);
    if (in)
        fclose(in);
    vl_background_options options;
    vl_background_options_default(&options);
    options.device.kind = gpu ? VL_DEVICE_GPU : VL_DEVICE_CPU;
    vl_device_outcome outcome;
    vl_status status = vl_background_mog2(&frames, &foreground, &options, &outcome);
    CHECK(status == VL_OK, "vl_background_mog2 failed");
    if (status == VL_OK) {
        uint8_t *mask = foreground.data;
        for (int64_t i = 0; i < w * h * n; i++)
            mask[i] = mask[i] ? 255 : 0;
        FILE *out = fopen(argv[6], "wb");
        CHECK(out && fwrite(mask, 1, (size_t)(w * h * n), out) == (size_t)(w * h * n) && fclose(out) == 0,
              "%s: cannot write", argv[6]);
        vl_volume_free(&foreground);
    }
    vl_volume_free(&frames);
    return failures ? 1 : 0;
}
