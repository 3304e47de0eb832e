/* Preview annotations: slice number, orientation letters, scale bar and legend, in a 5x7 bitmap font. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preview_annotate.h"
#include "voxlabel/preview.h"

/* 5x7 glyphs, one byte a row, bit 4 the leftmost column; only what the annotations print. */
typedef struct glyph {
    char c;
    uint8_t rows[7];
} glyph;

static const glyph font[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}}, {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}}, {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}}, {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'x', {0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11}}, {'y', {0x00, 0x00, 0x11, 0x11, 0x0F, 0x01, 0x0E}},
    {'z', {0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F}}, {'m', {0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11}},
    {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}}, {'/', {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}}, {' ', {0, 0, 0, 0, 0, 0, 0}},
};

enum { GLYPH_W = 5, GLYPH_H = 7, ADVANCE = 6, LEGEND_ROWS_MAX = 8 };

static const uint8_t *glyph_rows(char c)
{
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].c == c)
            return font[i].rows;
    return font[sizeof font / sizeof font[0] - 1].rows;
}

static void put(vl_image *image, int64_t x, int64_t y, const uint8_t rgb[3])
{
    if (x < 0 || y < 0 || x >= image->width || y >= image->height)
        return;
    memcpy((uint8_t *)image->data + 3 * (y * image->width + x), rgb, 3);
}

static void fill_rect(vl_image *image, int64_t x0, int64_t y0, int64_t w, int64_t h, const uint8_t rgb[3])
{
    for (int64_t y = y0; y < y0 + h; y++)
        for (int64_t x = x0; x < x0 + w; x++)
            put(image, x, y, rgb);
}

static int64_t text_width(const char *text, int scale)
{
    int64_t n = (int64_t)strlen(text);
    return n ? (n * ADVANCE - 1) * scale : 0;
}

/* White text with a one-(scaled-)pixel black halo, top-left corner at (x0, y0). */
void vl_preview_draw_text(vl_image *image, int64_t x0, int64_t y0, const char *text, int scale)
{
    static const uint8_t black[3] = {0, 0, 0}, white[3] = {255, 255, 255};
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; text[k]; k++) {
            const uint8_t *rows = glyph_rows(text[k]);
            const int64_t gx = x0 + (int64_t)k * ADVANCE * scale;
            for (int r = 0; r < GLYPH_H; r++)
                for (int c = 0; c < GLYPH_W; c++) {
                    if (!(rows[r] >> (GLYPH_W - 1 - c) & 1))
                        continue;
                    const int64_t px = gx + c * scale, py = y0 + r * scale;
                    if (pass == 0)
                        fill_rect(image, px - scale, py - scale, 3 * scale, 3 * scale, black);
                    else
                        fill_rect(image, px, py, scale, scale, white);
                }
        }
}

char vl_preview_direction_letter(const double lps[3])
{
    static const char positive[3] = {'L', 'P', 'S'}, negative[3] = {'R', 'A', 'I'};
    int best = 0;
    for (int a = 1; a < 3; a++)
        if (fabs(lps[a]) > fabs(lps[best]))
            best = a;
    return lps[best] >= 0 ? positive[best] : negative[best];
}

double vl_preview_scale_bar_mm(double max_mm)
{
    if (!(max_mm >= 1))
        return 0;
    double decade = pow(10.0, floor(log10(max_mm)));
    const double steps[3] = {5, 2, 1};
    for (int s = 0; s < 3; s++)
        if (steps[s] * decade <= max_mm)
            return steps[s] * decade;
    return decade;
}

static void axis_direction(const vl_geometry *g, int axis, double sign, double out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = sign * g->direction[3 * r + axis];
}

static void draw_orientation(vl_image *image, const vl_geometry *geometry, const vl_preview_frame *frame, int scale)
{
    double right[3], down[3], left[3], up[3];
    axis_direction(geometry, frame->h_axis, 1, right);
    axis_direction(geometry, frame->v_axis, frame->flip_v ? -1 : 1, down);
    for (int r = 0; r < 3; r++)
        left[r] = -right[r], up[r] = -down[r];
    const int64_t margin = 3 * scale, w = image->width, h = image->height, gw = GLYPH_W * scale, gh = GLYPH_H * scale;
    char text[2] = {0, 0};
    text[0] = vl_preview_direction_letter(left);
    vl_preview_draw_text(image, margin, (h - gh) / 2, text, scale);
    text[0] = vl_preview_direction_letter(right);
    vl_preview_draw_text(image, w - margin - gw, (h - gh) / 2, text, scale);
    text[0] = vl_preview_direction_letter(up);
    vl_preview_draw_text(image, (w - gw) / 2, margin, text, scale);
    text[0] = vl_preview_direction_letter(down);
    vl_preview_draw_text(image, (w - gw) / 2, h - margin - gh, text, scale);
}

static void draw_scale_bar(vl_image *image, const vl_preview_frame *frame, int scale)
{
    if (!(frame->pixel_mm > 0))
        return;
    const double mm = vl_preview_scale_bar_mm((double)image->width * frame->pixel_mm / 4);
    const int64_t length = (int64_t)llround(mm / frame->pixel_mm);
    if (mm <= 0 || length < 4)
        return;
    static const uint8_t black[3] = {0, 0, 0}, white[3] = {255, 255, 255};
    const int64_t margin = 3 * scale, thickness = 2 * scale;
    const int64_t x1 = image->width - margin, x0 = x1 - length, y0 = image->height - margin - thickness;
    fill_rect(image, x0 - scale, y0 - scale, length + 2 * scale, thickness + 2 * scale, black);
    fill_rect(image, x0, y0, length, thickness, white);
    char text[32];
    snprintf(text, sizeof text, "%g mm", mm);
    vl_preview_draw_text(image, x1 - text_width(text, scale), y0 - 2 * scale - GLYPH_H * scale, text, scale);
}

typedef struct legend_entry {
    uint32_t label;
    int64_t pixels;
} legend_entry;

static int by_pixels(const void *a, const void *b)
{
    const legend_entry *x = a, *y = b;
    if (x->pixels != y->pixels)
        return x->pixels < y->pixels ? 1 : -1;
    return (x->label > y->label) - (x->label < y->label);
}

static int by_value(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Up to LEGEND_ROWS_MAX of the labels in the view, most pixels first (ties by label), as colour swatches with
 * their numbers down the top-right corner; "+N" for the rest. */
static void draw_legend(vl_image *image, const uint32_t *labels, int scale)
{
    const int64_t pixels = image->width * image->height;
    uint32_t *sorted = malloc(sizeof *sorted * (size_t)pixels);
    if (!sorted) /* the legend is an extra: without memory the view goes without it */
        return;
    memcpy(sorted, labels, sizeof *sorted * (size_t)pixels);
    qsort(sorted, (size_t)pixels, sizeof *sorted, by_value);
    int64_t distinct = 0;
    for (int64_t i = 0; i < pixels; i++)
        distinct += sorted[i] && (i == 0 || sorted[i] != sorted[i - 1]);
    legend_entry *entries = malloc(sizeof *entries * (size_t)(distinct ? distinct : 1));
    if (!entries) {
        free(sorted);
        return;
    }
    distinct = 0;
    for (int64_t i = 0; i < pixels;) {
        int64_t j = i;
        while (j < pixels && sorted[j] == sorted[i])
            j++;
        if (sorted[i])
            entries[distinct++] = (legend_entry){sorted[i], j - i};
        i = j;
    }
    free(sorted);
    qsort(entries, (size_t)distinct, sizeof *entries, by_pixels);
    static const uint8_t black[3] = {0, 0, 0};
    const int64_t margin = 3 * scale, row = (GLYPH_H + 4) * scale, swatch = GLYPH_H * scale;
    int64_t rows_fit = (image->height / 2 - 2 * margin) / row - 1; /* below the top letter, above the middle */
    if (rows_fit > LEGEND_ROWS_MAX)
        rows_fit = LEGEND_ROWS_MAX;
    int64_t rows = distinct < rows_fit ? distinct : rows_fit;
    if (distinct > rows && rows > 0)
        rows--; /* room for the "+N" line */
    int64_t y = margin + row; /* below the top orientation letter */
    for (int64_t k = 0; k < rows; k++, y += row) {
        char text[16];
        snprintf(text, sizeof text, "%u", entries[k].label);
        const int64_t x_text = image->width - margin - text_width(text, scale);
        const int64_t x_swatch = x_text - 2 * scale - swatch;
        uint8_t color[3];
        vl_label_color_itksnap(entries[k].label, color);
        fill_rect(image, x_swatch - scale, y - scale, swatch + 2 * scale, swatch + 2 * scale, black);
        fill_rect(image, x_swatch, y, swatch, swatch, color);
        vl_preview_draw_text(image, x_text, y, text, scale);
    }
    if (distinct > rows && rows_fit > 0) {
        char text[24];
        snprintf(text, sizeof text, "+%lld", (long long)(distinct - rows));
        vl_preview_draw_text(image, image->width - margin - text_width(text, scale), y, text, scale);
    }
    free(entries);
}

void vl_preview_annotate(vl_image *image, const uint32_t *labels, const vl_geometry *geometry,
                         const vl_preview_frame *frame)
{
    if (image->width < 96 || image->height < 64)
        return;
    const int scale = image->width >= 512 && image->height >= 256 ? 2 : 1;
    char text[48];
    snprintf(text, sizeof text, "%c %lld/%lld", "xyz"[frame->axis], (long long)frame->index + 1,
             (long long)frame->count);
    vl_preview_draw_text(image, 3 * scale, 3 * scale, text, scale);
    draw_orientation(image, geometry, frame, scale);
    draw_scale_bar(image, frame, scale);
    if (labels)
        draw_legend(image, labels, scale);
}
