/* voxlabel: labels as a DICOM Segmentation (SEG) object that references the source CT series.
 *
 * One binary segment per component (label value), frames only where a component is present, per-frame
 * ImagePositionPatient and derivation references to the CT slice it was labelled on, and a Common Instance
 * Reference to the whole series, so viewers (3D Slicer, OHIF) place it on the CT. DCMTK 3.6.7 has no Label
 * Map Segmentation, so thousands of components mean thousands of segments: there is a limit
 * (max_segments), beyond which the writer refuses with a message rather than writing a huge object. */
#ifndef VOXLABEL_SEG_H
#define VOXLABEL_SEG_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_seg_options {
    int force;                  /* replace an existing output file */
    uint32_t max_segments;      /* default 256; at most 65535 (SEG segment numbers are 16-bit) */
    const char *series_uid;     /* source series to reference; NULL: the one whose slices match the labels */
    const char *series_description; /* NULL: "voxlabel components" */
    const char *segments_from;  /* a SEG whose segment k describes label value k (a class map of it): its label,
                                 * category, type and colour are kept; NULL: "component <label>", Tissue */
    vl_progress progress;
} vl_seg_options;

void vl_seg_options_default(vl_seg_options *options);

/* Writes `labels` (U8, U16, U32 or non-negative I16; 0 = background) as a binary SEG at `path`. The source CT slices are
 * found in `source_directory` (searched recursively) by matching each label slice's position and
 * orientation to a CT image of the same size (tolerance: 1% of the slice step). Segment k is label value
 * k's component, in ascending label order, named "component <label>" (or as segment k of
 * options->segments_from, when that SEG has one).
 * Errors: VL_ERR_ARGUMENT for more components than max_segments, VL_ERR_INPUT when a slice has no matching
 * CT image, VL_ERR_OUTPUT when the file cannot be written (nothing is left behind). */
vl_status vl_write_dicom_seg(const char *path, const vl_volume *labels, const char *source_directory,
                             const vl_seg_options *options);

#ifdef __cplusplus
}
#endif
#endif
