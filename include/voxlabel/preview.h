/* voxlabel: PNG previews of labels over CT slices or colour frames.
 *
 * Grey levels come from the DICOM VOI LUT function LINEAR (PS3.3 C.11.2.1.2.1) with a window centre and
 * width, labels from ITK-SNAP's default label colour table (label k >= 1 takes entry (k-1) mod 130),
 * blended per channel as round((1 - alpha) * grey + alpha * colour), or drawn as outlines (label pixels
 * with a 4-neighbour of another label) at full colour. A blended view also gets its label edges at full
 * colour, so that labels stay legible over bright anatomy. Views are rendered with square physical pixels:
 * the axis with the coarser spacing is stretched by nearest-neighbour sampling. Each view is annotated
 * (docs/preview.md): slice number, patient orientation letters, a scale bar and a legend of its labels. */
#ifndef VOXLABEL_PREVIEW_H
#define VOXLABEL_PREVIEW_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/image2d.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_preview_options {
    double window_center, window_width; /* HU; default soft tissue 40/400 */
    double alpha;                       /* label opacity 0..1, default 0.5 */
    int outline;                        /* 1: outlines only */
    int montage_slices;                 /* N slices in a montage, default 12 */
    int montage_columns;                /* 0: about sqrt(N) */
    int force;                          /* replace an existing PNG */
    int annotate;                       /* default 1: slice number, orientation letters, scale bar, legend */
} vl_preview_options;

void vl_preview_options_default(vl_preview_options *options);
/* Named windows (centre/width): soft-tissue 40/400, lung -600/1500, bone 300/2000, brain 40/80,
 * liver 30/150, mediastinum 50/350. */
vl_status vl_preview_window_preset(const char *name, double *center, double *width);

/* DICOM VOI LUT LINEAR to 0..255, rounded once (floor(y + 0.5)); width >= 1. */
uint8_t vl_window_linear(double value, double center, double width);
/* ITK-SNAP's default colour of `label` (label 0 is black, drawn transparent). */
void vl_label_color_itksnap(uint32_t label, uint8_t rgb[3]);

/* Blends `labels` (width*height, 0 = none) over an RGB image in place. */
void vl_preview_blend(uint8_t *rgb, const uint32_t *labels, int64_t width, int64_t height, double alpha,
                      int outline);

/* Renders one slice of the volume: axis 2 = axial (z = index), 1 = coronal (y = index), 0 = sagittal
 * (x = index). `labels` may be NULL; it must otherwise match the CT's size (any integer dtype). */
vl_status vl_preview_render(const vl_volume *ct, const vl_volume *labels, int axis, int64_t index,
                            const vl_preview_options *options, vl_image *out);

/* One axial slice as a PNG. */
vl_status vl_preview_write_slice(const char *path, const vl_volume *ct, const vl_volume *labels, int64_t z,
                                 const vl_preview_options *options);
/* N axial slices evenly spread over the slices that hold labels (all slices without labels), in a grid. */
vl_status vl_preview_write_montage(const char *path, const vl_volume *ct, const vl_volume *labels,
                                   const vl_preview_options *options);
/* Axial, coronal and sagittal views side by side through the centroid of the largest label (the volume's
 * centre without labels). */
vl_status vl_preview_write_orthogonal(const char *path, const vl_volume *ct, const vl_volume *labels,
                                      const vl_preview_options *options);

#ifdef __cplusplus
}
#endif
#endif
