/* Preview pieces: DICOM VOI LINEAR on every int16 for the usual windows (and W = 1, 2), ITK-SNAP colours
 * with wrap-around after 130 labels, exact blending at alpha 0, 0.5, 1, and the square-pixel view sizes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/preview.h"

/* PS3.3 C.11.2.1.2.1 written from the standard's three cases, output range 0..255. */
static int voi_linear_reference(double x, double c, double w)
{
    if (x <= c - 0.5 - (w - 1) / 2)
        return 0;
    if (x > c - 0.5 + (w - 1) / 2)
        return 255;
    double y = ((x - (c - 0.5)) / (w - 1) + 0.5) * 255.0;
    return (int)floor(y + 0.5);
}

int main(void)
{
    const double windows[][2] = {{40, 400}, {-600, 1500}, {300, 2000}, {0, 1}, {0, 2}, {40, 80}};
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
        int x = -32768; /* the first int16 where the two differ, if any */
        while (x <= 32767 && vl_window_linear(x, windows[k][0], windows[k][1]) ==
                                 voi_linear_reference(x, windows[k][0], windows[k][1]))
            x++;
        CHECK(x > 32767, "window %g/%g at %d: %d, want %d", windows[k][0], windows[k][1], x,
              vl_window_linear(x, windows[k][0], windows[k][1]), voi_linear_reference(x, windows[k][0], windows[k][1]));
    }
    /* W = 1 is a step at c - 0.5. */
    CHECK(vl_window_linear(-0.5, 0, 1) == 0 && vl_window_linear(-0.49, 0, 1) == 255, "W = 1 is not a step at c - 0.5");

    uint8_t rgb[3], again[3];
    const struct { uint32_t label, color; } known[] = {
        {1, 0xFF0000}, {2, 0x00FF00}, {3, 0x0000FF}, {7, 0xFFEFD5}, {130, 0xA0522D}, {131, 0xFF0000}, {300, 0xEE82EE}};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        vl_label_color_itksnap(known[k].label, rgb);
        uint32_t got = (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2];
        CHECK(got == known[k].color, "colour of label %u: %06X, want %06X", known[k].label, got, known[k].color);
    }
    for (uint32_t label = 1; label <= 300; label++) {
        vl_label_color_itksnap(label, rgb);
        vl_label_color_itksnap(label + 130, again);
        CHECK(memcmp(rgb, again, 3) == 0, "label %u and label %u have different colours", label, label + 130);
    }

    const double alphas[] = {0.0, 0.5, 1.0};
    for (int a = 0; a < 3; a++)
        for (int grey = 0; grey < 256; grey += 5) {
            uint8_t pixel[3] = {(uint8_t)grey, (uint8_t)grey, (uint8_t)grey};
            uint32_t label = 2; /* pure green */
            vl_preview_blend(pixel, &label, 1, 1, alphas[a], 0);
            int want_g = alphas[a] == 0 ? grey : alphas[a] == 1 ? 255 : (grey + 255 + 1) / 2;
            int want_r = alphas[a] == 0 ? grey : alphas[a] == 1 ? 0 : (grey + 1) / 2;
            CHECK(pixel[1] == want_g && pixel[0] == want_r, "blend alpha %.1f grey %d: %d,%d, want %d,%d", alphas[a],
                  grey, pixel[0], pixel[1], want_r, want_g);
        }

    vl_volume ct;
    CHECK(vl_volume_create(&ct, 40, 30, 12, VL_I16) == VL_OK, "cannot allocate the CT");
    ct.geometry.spacing[0] = ct.geometry.spacing[1] = 1.0;
    ct.geometry.spacing[2] = 2.5;
    vl_preview_options options;
    vl_preview_options_default(&options);
    vl_image view = {0};
    const int64_t want[3][2] = {{30, 30}, {40, 30}, {40, 30}}; /* sagittal 30x(12*2.5), coronal 40x30, axial 40x30 */
    for (int axis = 0; axis < 3; axis++) {
        const vl_status status = vl_preview_render(&ct, NULL, axis, 0, &options, &view);
        CHECK(status == VL_OK && view.width == want[axis][0] && view.height == want[axis][1],
              "view of axis %d: %lldx%lld, want %lldx%lld", axis, (long long)view.width, (long long)view.height,
              (long long)want[axis][0], (long long)want[axis][1]);
        vl_image_free(&view);
    }
    vl_volume_free(&ct);
    return test_finish("image2d_preview");
}
