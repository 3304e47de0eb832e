/* voxlabel: a DICOM Segmentation (SEG) read as a class map, for multilabel labelling (docs/multilabel.md).
 *
 * Every segment's frames are placed on the grid the frames define (their ImageOrientationPatient, the
 * PixelSpacing and the frames' ImagePositionPatient along the slice normal), and a voxel gets the number of
 * the segment that covers it. Two segments covering one voxel are an error: a class map holds one class per
 * voxel. Binary SEGs only; fractional ones and the LABELMAP form (which DCMTK 3.6.7 cannot read) are refused. */
#ifndef VOXLABEL_SEG_READ_H
#define VOXLABEL_SEG_READ_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_seg_class_map {
    vl_volume classes;          /* u8 (up to 255 segments) or u16; class = segment number, 0 = none */
    uint32_t segment_count;
    char (*names)[65];          /* names[s - 1]: SegmentLabel of segment s (malloc'd) */
    char referenced_series_uid[65]; /* the series the SEG references, "" when it names none */
} vl_seg_class_map;

/* 1 when `path` is a DICOM file whose SOP class is Segmentation Storage (binary/fractional or label map). */
int vl_dicom_file_is_seg(const char *path);

/* Reads the SEG at `path` into `map`. VL_ERR_INPUT for a SEG that cannot be read, is not binary, has frames
 * off one regular grid, or has overlapping segments (the message names both segments and a voxel). */
vl_status vl_read_dicom_seg(const char *path, vl_seg_class_map *map);

/* Places the SEG's class map on the grid of `reference` (the CT it was drawn on, e.g. read from a DICOM
 * series): the same in-plane size, orientation and spacing, and every SEG slice at one slice position of the
 * reference; slices without frames stay 0. On success map->classes is replaced by the placed map (the
 * reference's size and geometry). VL_ERR_INPUT, naming what differs, when the frames are not on that grid. */
vl_status vl_seg_class_map_place(vl_seg_class_map *map, const vl_volume *reference);

void vl_seg_class_map_free(vl_seg_class_map *map);

#ifdef __cplusplus
}
#endif
#endif
