/* GPU == CPU for MOG2 (label gpu; exit 77 without a usable device): the foreground masks of a synthetic
 * sequence (noise, a drifting gradient, moving blocks, sudden changes that exercise pruning and mode
 * replacement) are identical, for OpenCV's defaults, for few mixtures and for a fixed learning rate, on a
 * frame size that is not a multiple of the block size. `background_gpu quick`: 40 frames, defaults only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/background.h"

static void make_frames(vl_volume *frames)
{
    uint8_t *data = frames->data;
    for (int64_t z = 0; z < frames->nz; z++)
        for (int64_t y = 0; y < frames->ny; y++)
            for (int64_t x = 0; x < frames->nx; x++) {
                int value = (int)(60 + (x + y) / 4 + z / 10) + (int)(test_random() % 13) - 6;
                int bx = (int)((z * 3) % frames->nx), by = (int)((z * 2) % frames->ny);
                if (x >= bx && x < bx + 12 && y >= by && y < by + 9)
                    value = 220;
                if (z % 37 == 20 && x < frames->nx / 3)
                    value = (int)(test_random() % 256);
                data[x + frames->nx * (y + frames->ny * z)] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
            }
}

static void compare(const vl_volume *frames, const vl_mog2_params *params, const char *name)
{
    vl_background_options cpu, gpu;
    vl_background_options_default(&cpu);
    cpu.mog2 = *params;
    gpu = cpu;
    cpu.device.kind = VL_DEVICE_CPU;
    gpu.device.kind = VL_DEVICE_GPU;
    vl_volume want, got;
    CHECK(vl_background_mog2(frames, &want, &cpu, NULL) == VL_OK, "%s: CPU", name);
    vl_status status = vl_background_mog2(frames, &got, &gpu, NULL);
    CHECK(status == VL_OK, "%s: GPU", name);
    if (status != VL_OK)
        return;
    int64_t n = vl_volume_voxels(frames), differ = 0, foreground = 0;
    for (int64_t i = 0; i < n; i++) {
        differ += ((uint8_t *)want.data)[i] != ((uint8_t *)got.data)[i];
        foreground += ((uint8_t *)want.data)[i];
    }
    CHECK(differ == 0, "%s: %lld of %lld mask pixels differ between GPU and CPU", name, (long long)differ, (long long)n);
    printf("%s: %lld pixels, %lld foreground, %lld differ\n", name, (long long)n, (long long)foreground, (long long)differ);
    vl_volume_free(&want);
    vl_volume_free(&got);
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && strcmp(argv[1], "quick") == 0; /* for compute-sanitizer: 40 frames, defaults */
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    test_random_state = 0x5eed5eedull;
    vl_volume frames;
    CHECK_TRUE(vl_volume_create(&frames, 333, 201, quick ? 40 : 200, VL_U8) == VL_OK);
    make_frames(&frames);
    vl_mog2_params params;
    vl_mog2_params_default(&params);
    compare(&frames, &params, "defaults");
    if (quick) {
        vl_volume_free(&frames);
        return test_finish("background_gpu");
    }
    params.nmixtures = 2;
    params.history = 50;
    compare(&frames, &params, "2 mixtures, history 50");
    vl_mog2_params_default(&params);
    params.learning_rate = 0.02;
    compare(&frames, &params, "learning rate 0.02");
    vl_volume_free(&frames);
    return test_finish("background_gpu");
}
