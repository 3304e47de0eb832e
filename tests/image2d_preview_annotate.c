/* Preview annotations (issue 16 C17): orientation letters from the direction matrix, the scale bar's length,
 * and on rendered views: full-colour label edges over a bright background, the slice number, the letter at
 * each edge (drawn where the layout puts it, glyph for glyph), the scale bar's pixel length from the
 * spacing, and a legend holding the swatch of every label in the view; annotate = 0 leaves the view bare. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "image2d/preview_annotate.h"
#include "test_check.h"
#include "voxlabel/preview.h"

static const uint8_t *pixel(const vl_image *image, int64_t x, int64_t y)
{
    return (const uint8_t *)image->data + 3 * (y * image->width + x);
}

static int same_pixel(const uint8_t *p, const uint8_t rgb[3])
{
    return p[0] == rgb[0] && p[1] == rgb[1] && p[2] == rgb[2];
}

/* Does the box [x0, x0 + w) x [y0, y0 + h) of `a` equal that of `b`? */
static int same_box(const vl_image *a, const vl_image *b, int64_t x0, int64_t y0, int64_t w, int64_t h)
{
    for (int64_t y = y0; y < y0 + h; y++)
        for (int64_t x = x0; x < x0 + w; x++)
            if (memcmp(pixel(a, x, y), pixel(b, x, y), 3) != 0)
                return 0;
    return 1;
}

static int box_has_colour(const vl_image *image, int64_t x0, int64_t y0, int64_t w, int64_t h, const uint8_t rgb[3])
{
    for (int64_t y = y0; y < y0 + h; y++)
        for (int64_t x = x0; x < x0 + w; x++)
            if (same_pixel(pixel(image, x, y), rgb))
                return 1;
    return 0;
}

/* The letter `c` drawn on a copy of `bare` at (x, y) equals `annotated` around it. */
static int letter_at(const vl_image *annotated, const vl_image *bare, int64_t x, int64_t y, char c)
{
    vl_image copy;
    vl_image_create(&copy, bare->width, bare->height, 3, 8);
    memcpy(copy.data, bare->data, (size_t)(3 * bare->width * bare->height));
    char text[2] = {c, 0};
    vl_preview_draw_text(&copy, x, y, text, 1);
    int same = same_box(annotated, &copy, x - 1, y - 1, 7, 9);
    vl_image_free(&copy);
    return same;
}

int main(void)
{
    const double left[3] = {-1, 0, 0}, anterior[3] = {0.1, -0.9, 0.2}, superior[3] = {0.3, 0.2, 0.93};
    CHECK(vl_preview_direction_letter(left) == 'R' && vl_preview_direction_letter(anterior) == 'A' &&
              vl_preview_direction_letter(superior) == 'S',
          "direction letters");
    CHECK(vl_preview_scale_bar_mm(37) == 20 && vl_preview_scale_bar_mm(100) == 100 &&
              vl_preview_scale_bar_mm(99) == 50 && vl_preview_scale_bar_mm(4.9) == 2 && vl_preview_scale_bar_mm(0.5) == 0,
          "scale bar lengths: %g %g %g %g", vl_preview_scale_bar_mm(37), vl_preview_scale_bar_mm(100),
          vl_preview_scale_bar_mm(99), vl_preview_scale_bar_mm(4.9));

    /* 256 x 200 x 10 bright CT (1000 HU: white in the soft-tissue window), 0.5 mm pixels, identity axes; label 3
     * a 60 x 40 block in slice 4, label 7 a 10 x 10 block beside it. */
    vl_volume ct, labels;
    CHECK(vl_volume_create(&ct, 256, 200, 10, VL_I16) == VL_OK && vl_volume_create(&labels, 256, 200, 10, VL_U8) == VL_OK,
          "allocation");
    ct.geometry.spacing[0] = ct.geometry.spacing[1] = 0.5;
    ct.geometry.spacing[2] = 2;
    for (int64_t i = 0; i < vl_volume_voxels(&ct); i++)
        ((int16_t *)ct.data)[i] = 1000;
    uint8_t *l = labels.data;
    for (int64_t y = 80; y < 120; y++)
        for (int64_t x = 60; x < 120; x++)
            l[x + 256 * (y + 200 * 4)] = 3;
    for (int64_t y = 90; y < 100; y++)
        for (int64_t x = 140; x < 150; x++)
            l[x + 256 * (y + 200 * 4)] = 7;
    vl_preview_options options;
    vl_preview_options_default(&options);
    CHECK(options.annotate == 1, "annotations are on by default");
    vl_image view, bare;
    CHECK(vl_preview_render(&ct, &labels, 2, 4, &options, &view) == VL_OK, "render");
    options.annotate = 0;
    CHECK(vl_preview_render(&ct, &labels, 2, 4, &options, &bare) == VL_OK, "render without annotations");

    uint8_t blue[3], violet[3];
    vl_label_color_itksnap(3, blue);
    vl_label_color_itksnap(7, violet);
    const uint8_t white[3] = {255, 255, 255};
    /* Label edges at full colour over the white bone; the inside blended half way. */
    CHECK(same_pixel(pixel(&bare, 60, 100), blue) && same_pixel(pixel(&bare, 119, 100), blue),
          "label edge is not full colour: %d,%d,%d", pixel(&bare, 60, 100)[0], pixel(&bare, 60, 100)[1],
          pixel(&bare, 60, 100)[2]);
    const uint8_t *inside = pixel(&bare, 90, 100);
    CHECK(inside[0] == 128 && inside[2] == 255, "label inside blended: %d,%d,%d", inside[0], inside[1], inside[2]);
    CHECK(!box_has_colour(&bare, 200, 0, 56, 100, blue), "the bare view has no legend");

    /* Slice number "z 5/10" at the top-left, letters R (left), L (right), A (top), P (bottom). */
    vl_image expected;
    vl_image_create(&expected, bare.width, bare.height, 3, 8);
    memcpy(expected.data, bare.data, (size_t)(3 * bare.width * bare.height));
    vl_preview_draw_text(&expected, 3, 3, "z 5/10", 1);
    CHECK(same_box(&view, &expected, 0, 0, 45, 14), "slice number 'z 5/10' not at the top-left");
    vl_image_free(&expected);
    const int64_t w = view.width, h = view.height;
    CHECK(letter_at(&view, &bare, 3, (h - 7) / 2, 'R'), "left edge is not R");
    CHECK(letter_at(&view, &bare, w - 3 - 5, (h - 7) / 2, 'L'), "right edge is not L");
    CHECK(letter_at(&view, &bare, (w - 5) / 2, 3, 'A'), "top edge is not A");
    CHECK(letter_at(&view, &bare, (w - 5) / 2, h - 3 - 7, 'P'), "bottom edge is not P");

    /* Scale bar: 256 px x 0.5 mm = 128 mm wide, a quarter is 32 -> 20 mm = 40 px, white, ending 3 px from the
     * right edge, 2 px thick, 3 px above the bottom, in a black halo. */
    int64_t run = 0;
    for (int64_t x = w - 4; x >= 0 && same_pixel(pixel(&view, x, h - 4), white); x--)
        run++;
    CHECK(run == 40, "scale bar is %lld px, want 40 (20 mm at 0.5 mm)", (long long)run);
    CHECK(pixel(&view, w - 4 - 40, h - 4)[0] == 0, "scale bar has no halo");

    /* Legend: both labels' swatches in the top-right corner, the larger first. */
    CHECK(box_has_colour(&view, w - 40, 0, 40, h / 2, blue) && box_has_colour(&view, w - 40, 0, 40, h / 2, violet),
          "legend lacks a label's swatch");
    int64_t blue_row = -1, violet_row = -1;
    for (int64_t y = 0; y < h / 2; y++) {
        if (blue_row < 0 && box_has_colour(&view, w - 40, y, 40, 1, blue))
            blue_row = y;
        if (violet_row < 0 && box_has_colour(&view, w - 40, y, 40, 1, violet))
            violet_row = y;
    }
    CHECK(blue_row >= 0 && blue_row < violet_row, "legend order: label 3 (2400 px) above label 7 (100 px)");

    /* A view too small for text is left bare. */
    vl_volume small;
    vl_volume_create(&small, 40, 30, 2, VL_I16);
    vl_image small_view, small_bare;
    options.annotate = 1;
    vl_preview_render(&small, NULL, 2, 0, &options, &small_view);
    options.annotate = 0;
    vl_preview_render(&small, NULL, 2, 0, &options, &small_bare);
    CHECK(same_box(&small_view, &small_bare, 0, 0, small_view.width, small_view.height), "a 40x30 view was annotated");
    vl_image_free(&small_view);
    vl_image_free(&small_bare);
    vl_volume_free(&small);
    vl_image_free(&view);
    vl_image_free(&bare);
    vl_volume_free(&ct);
    vl_volume_free(&labels);
    return test_finish("image2d_preview_annotate");
}
