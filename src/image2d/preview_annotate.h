/* Internal: what a preview view carries besides the pixels (docs/preview.md): the slice number, the patient
 * orientation letters at its four edges, a scale bar and a legend of the labels it shows, drawn in white with a
 * black halo so that they read over any grey level. */
#ifndef VL_PREVIEW_ANNOTATE_H
#define VL_PREVIEW_ANNOTATE_H

#include <stdint.h>

#include "voxlabel/image2d.h"
#include "voxlabel/volume.h"

/* How a view maps the volume: screen x runs along volume axis h_axis, screen y along v_axis (upwards, i.e.
 * towards decreasing row, when flip_v); `pixel_mm` is the physical size of one output pixel. */
typedef struct vl_preview_frame {
    int axis, h_axis, v_axis, flip_v;
    int64_t index, count;  /* the slice shown along `axis`, and how many there are */
    double pixel_mm;
} vl_preview_frame;

/* The letter of the patient direction an LPS unit vector points to most (L R P A S I), for screen edges. */
char vl_preview_direction_letter(const double lps[3]);
/* The scale bar's length: the largest of 1, 2, 5 x 10^k mm that is at most `max_mm`. */
double vl_preview_scale_bar_mm(double max_mm);

/* White text in the annotations' 5x7 font (each glyph pixel `scale` x `scale`) with a black halo of one
 * scaled pixel; its top-left glyph pixel at (x0, y0). */
void vl_preview_draw_text(vl_image *image, int64_t x0, int64_t y0, const char *text, int scale);

/* Annotates `image` (RGB8, the rendered view) in place; `labels` holds the view's label per pixel (NULL: no
 * legend). Views too small to hold the text (under 96 x 64 pixels) are left as they are. */
void vl_preview_annotate(vl_image *image, const uint32_t *labels, const vl_geometry *geometry,
                         const vl_preview_frame *frame);

#endif
