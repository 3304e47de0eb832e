/* Preview rendering: VOI windowing, ITK-SNAP label colours, blending, and one view of a volume. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "preview_annotate.h"
#include "voxlabel/error.h"
#include "voxlabel/preview.h"

/* ITK-SNAP's default colour list (Logic/Common/ColorLabelTable.cxx): label k >= 1 uses entry (k-1) mod 130. */
static const uint32_t itksnap_colors[130] = {
    0xFF0000, 0x00FF00, 0x0000FF, 0xFFFF00, 0x00FFFF, 0xFF00FF, 0xFFEFD5, 0x0000CD, 0xCD853F, 0xD2B48C,
    0x66CDAA, 0x000080, 0x008B8B, 0x2E8B57, 0xFFE4E1, 0x6A5ACD, 0xDDA0DD, 0xE9967A, 0xA52A2A, 0xFFFAFA,
    0x9370DB, 0xDA70D6, 0x4B0082, 0xFFB6C1, 0x3CB371, 0xFFEBCD, 0xFFE4C4, 0xDAA520, 0x008080, 0xBC8F8F,
    0xFF69B4, 0xFFDAB9, 0xDEB887, 0x7FFF00, 0x8B4513, 0x7CFC00, 0xFFFFE0, 0x4682B4, 0x006400, 0xEE82EE,
    0xEEE8AA, 0xF0FFF0, 0xF5DEB3, 0xB8860B, 0x20B2AA, 0xFF1493, 0x191970, 0x708090, 0x228B22, 0xF8F8FF,
    0xF5FFFA, 0xFFA07A, 0x90EE90, 0xADFF2F, 0x4169E1, 0xFF6347, 0xFAF0E6, 0x800000, 0x32CD32, 0xF4A460,
    0xFFFFF0, 0x7B68EE, 0xFFA500, 0xADD8E6, 0xFFC0CB, 0x7FFFD4, 0xFF8C00, 0x8FBC8F, 0xDC143C, 0xFDF5E6,
    0xFFFAF0, 0x00CED1, 0x00FF7F, 0x800080, 0xFFFACD, 0xFA8072, 0x9400D3, 0xB22222, 0xFF7F50, 0x87CEEB,
    0x6495ED, 0xF0E68C, 0xFAEBD7, 0xFFF5EE, 0x6B8E23, 0x87CEFA, 0x00008B, 0x8B008B, 0xF5F5DC, 0xBA55D3,
    0xFFE4B5, 0xFFDEAD, 0x00BFFF, 0xD2691E, 0xFFF8DC, 0x2F4F4F, 0x483D8B, 0xAFEEEE, 0x808000, 0xB0E0E6,
    0xFFF0F5, 0x8B0000, 0xF0FFFF, 0xFFD700, 0xD8BFD8, 0x778899, 0xDB7093, 0x48D1CC, 0xFF00FF, 0xC71585,
    0x9ACD32, 0xBDB76B, 0xF0F8FF, 0xE6E6FA, 0x00FA9A, 0x556B2F, 0x40E0D0, 0x9932CC, 0xCD5C5C, 0xFAFAD2,
    0x5F9EA0, 0x008000, 0xFF4500, 0xE0FFFF, 0xB0C4DE, 0x8A2BE2, 0x1E90FF, 0xF08080, 0x98FB98, 0xA0522D,
};

void vl_preview_options_default(vl_preview_options *options)
{
    memset(options, 0, sizeof *options);
    options->window_center = 40;
    options->window_width = 400;
    options->alpha = 0.5;
    options->montage_slices = 12;
    options->annotate = 1;
}

vl_status vl_preview_window_preset(const char *name, double *center, double *width)
{
    static const struct { const char *name; double center, width; } presets[] = {
        {"soft-tissue", 40, 400}, {"lung", -600, 1500}, {"bone", 300, 2000},
        {"brain", 40, 80},        {"liver", 30, 150},   {"mediastinum", 50, 350},
    };
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(name, presets[i].name) == 0) {
            *center = presets[i].center;
            *width = presets[i].width;
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT,
                   "--window: '%s' is not C:W nor one of soft-tissue, lung, bone, brain, liver, mediastinum", name);
}

uint8_t vl_window_linear(double value, double center, double width)
{
    double c = center - 0.5, w = width - 1;
    if (value <= c - w / 2)
        return 0;
    if (value > c + w / 2)
        return 255;
    return (uint8_t)floor(((value - c) / w + 0.5) * 255.0 + 0.5);
}

void vl_label_color_itksnap(uint32_t label, uint8_t rgb[3])
{
    uint32_t color = label ? itksnap_colors[(label - 1) % 130] : 0;
    rgb[0] = (uint8_t)(color >> 16);
    rgb[1] = (uint8_t)(color >> 8);
    rgb[2] = (uint8_t)color;
}

void vl_preview_blend(uint8_t *rgb, const uint32_t *labels, int64_t width, int64_t height, double alpha, int outline)
{
    for (int64_t y = 0; y < height; y++)
        for (int64_t x = 0; x < width; x++) {
            uint32_t label = labels[y * width + x];
            if (!label)
                continue;
            if (outline) {
                int inside = x > 0 && x + 1 < width && y > 0 && y + 1 < height &&
                             labels[y * width + x - 1] == label && labels[y * width + x + 1] == label &&
                             labels[(y - 1) * width + x] == label && labels[(y + 1) * width + x] == label;
                if (inside)
                    continue;
            }
            uint8_t color[3];
            vl_label_color_itksnap(label, color);
            double a = outline ? 1.0 : alpha;
            uint8_t *pixel = rgb + 3 * (y * width + x);
            for (int c = 0; c < 3; c++)
                pixel[c] = (uint8_t)floor((1 - a) * pixel[c] + a * color[c] + 0.5);
        }
}

/* The view's pixel grid: horizontal axis h, vertical axis v (flipped for z so that the last slice, the
 * superior one for axial series sorted along +z LPS, is at the top), output size after stretching. */
typedef struct view {
    int h_axis, v_axis, flip_v;
    int64_t h_count, v_count, width, height;
} view;

static view view_for(const vl_volume *ct, int axis)
{
    const int64_t sizes[3] = {ct->nx, ct->ny, ct->nz};
    view v;
    v.h_axis = axis == 0 ? 1 : 0;
    v.v_axis = axis == 2 ? 1 : 2;
    v.flip_v = v.v_axis == 2;
    v.h_count = sizes[v.h_axis];
    v.v_count = sizes[v.v_axis];
    double sh = fabs(ct->geometry.spacing[v.h_axis]), sv = fabs(ct->geometry.spacing[v.v_axis]);
    if (!(sh > 0) || !(sv > 0))
        sh = sv = 1;
    double finer = sh < sv ? sh : sv;
    v.width = (int64_t)llround((double)v.h_count * sh / finer);
    v.height = (int64_t)llround((double)v.v_count * sv / finer);
    v.width = v.width > 4096 ? 4096 : v.width < 1 ? 1 : v.width;
    v.height = v.height > 4096 ? 4096 : v.height < 1 ? 1 : v.height;
    return v;
}

vl_status vl_preview_render(const vl_volume *ct, const vl_volume *labels, int axis, int64_t index,
                            const vl_preview_options *options, vl_image *out)
{
    memset(out, 0, sizeof *out);
    const int64_t sizes[3] = {ct->nx, ct->ny, ct->nz};
    if (axis < 0 || axis > 2 || index < 0 || index >= sizes[axis])
        return vl_fail(VL_ERR_ARGUMENT, "preview: slice %lld is outside 0..%lld", (long long)index,
                       (long long)sizes[axis] - 1);
    if (labels && (labels->nx != ct->nx || labels->ny != ct->ny || labels->nz != ct->nz))
        return vl_fail(VL_ERR_INPUT, "preview: labels are %lldx%lldx%lld but the CT is %lldx%lldx%lld",
                       (long long)labels->nx, (long long)labels->ny, (long long)labels->nz, (long long)ct->nx,
                       (long long)ct->ny, (long long)ct->nz);
    if (!(options->window_width >= 1))
        return vl_fail(VL_ERR_ARGUMENT, "preview: window width must be at least 1");
    view v = view_for(ct, axis);
    vl_status status = vl_image_create(out, v.width, v.height, 3, 8);
    if (status != VL_OK)
        return status;
    uint32_t *label_pixels = labels ? malloc(sizeof *label_pixels * (size_t)(v.width * v.height)) : NULL;
    if (labels && !label_pixels) {
        vl_image_free(out);
        return vl_fail(VL_ERR_MEMORY, "preview: out of memory");
    }
    uint8_t *rgb = out->data;
    for (int64_t row = 0; row < v.height; row++) {
        int64_t j = row * v.v_count / v.height;
        if (v.flip_v)
            j = v.v_count - 1 - j;
        for (int64_t column = 0; column < v.width; column++) {
            int64_t i = column * v.h_count / v.width;
            int64_t coordinate[3];
            coordinate[axis] = index;
            coordinate[v.h_axis] = i;
            coordinate[v.v_axis] = j;
            int64_t voxel = coordinate[0] + ct->nx * (coordinate[1] + ct->ny * coordinate[2]);
            uint8_t grey = vl_window_linear(vl_volume_value(ct, voxel), options->window_center, options->window_width);
            uint8_t *pixel = rgb + 3 * (row * v.width + column);
            pixel[0] = pixel[1] = pixel[2] = grey;
            if (label_pixels)
                label_pixels[row * v.width + column] = (uint32_t)vl_volume_value(labels, voxel);
        }
    }
    if (label_pixels) {
        vl_preview_blend(rgb, label_pixels, v.width, v.height, options->alpha, options->outline);
        if (!options->outline) /* full-colour edges: legible where the fill fades into bright bone */
            vl_preview_blend(rgb, label_pixels, v.width, v.height, 1.0, 1);
    }
    if (options->annotate) {
        const int64_t sizes[3] = {ct->nx, ct->ny, ct->nz};
        vl_preview_frame frame = {axis, v.h_axis, v.v_axis, v.flip_v, index, sizes[axis],
                                  (double)v.h_count * fabs(ct->geometry.spacing[v.h_axis]) / (double)v.width};
        vl_preview_annotate(out, label_pixels, &ct->geometry, &frame);
    }
    free(label_pixels);
    return VL_OK;
}
