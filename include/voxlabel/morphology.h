/* voxlabel: binary morphology on U8 masks, 2D (per slice) or 3D, on the CPU or the GPU.
 *
 * A voxel is foreground when nonzero; results are 0/1. Everything outside the volume is background
 * (so erosion eats into the border and dilation adds nothing from outside), as cv::erode/dilate with
 * BORDER_CONSTANT 0 and scipy.ndimage.binary_erosion/dilation with border_value 0.
 *
 * Structuring elements of radius r (centred, symmetric; 2D ones lie in the slice plane):
 *   BOX     all offsets with |dx|,|dy|(,|dz|) <= r                 (cv::MORPH_RECT of size 2r+1)
 *   CROSS   offsets along one axis with |d| <= r                    (cv::MORPH_CROSS of size 2r+1)
 *   BALL    offsets with dx^2 + dy^2 (+ dz^2) <= r^2
 *   THESIS  the thesis's own pair, radius ignored: erosion by the cross of arm 2 (5x5 MORPH_CROSS),
 *           dilation by the 4-neighbour cross (3x3 MORPH_CROSS); always 2D.
 * Opening is erosion then dilation, closing dilation then erosion (with THESIS: each by its own cross). */
#ifndef VOXLABEL_MORPHOLOGY_H
#define VOXLABEL_MORPHOLOGY_H

#include "voxlabel/error.h"
#include "voxlabel/device.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_morphology_op {
    VL_MORPH_ERODE = 0,
    VL_MORPH_DILATE,
    VL_MORPH_OPEN,
    VL_MORPH_CLOSE
} vl_morphology_op;

typedef enum vl_structuring_element {
    VL_SE_BOX = 0,
    VL_SE_CROSS,
    VL_SE_BALL,
    VL_SE_THESIS
} vl_structuring_element;

const char *vl_morphology_op_name(vl_morphology_op op);            /* "erode", "dilate", "open", "close" */
vl_status vl_morphology_op_parse(const char *text, vl_morphology_op *op);
const char *vl_structuring_element_name(vl_structuring_element se); /* "box", "cross", "ball", "thesis" */
vl_status vl_structuring_element_parse(const char *text, vl_structuring_element *se);

/* Applies `op` in place to a U8 mask. per_slice != 0 (or nz == 1) uses the 2D element in every z-slice;
 * otherwise the 3D element. radius 0 leaves the mask unchanged (except normalising nonzero to 1) for
 * BOX/CROSS/BALL. `device` NULL means AUTO on GPU 0; `outcome` (may be NULL) says where it ran. */
vl_status vl_morphology_apply(vl_volume *mask, vl_morphology_op op, vl_structuring_element se, int radius,
                              int per_slice, const vl_device *device, vl_device_outcome *outcome);

#ifdef __cplusplus
}
#endif
#endif
