/* voxlabel: a synthetic chest/abdomen CT phantom in HU.
 *
 * The phantom is the built-in demo input, the source of the DICOM series that the tests write and read
 * back, and the CT-like benchmark volume (docs/design.md §10). It is deterministic for a seed and cheap to
 * make: row spans and one PRNG draw per voxel, so its cost is linear in the voxel count.
 *
 * Content (HU): air -1000 outside an elliptical body; a fat layer (-100) around soft tissue (40); two
 * lungs (-850) with branching pulmonary vessels (150) and small nodules (40, 5-10 mm); a liver (60) below
 * them; a contrast-filled aorta (300) that branches into the renal and iliac arteries; vertebral bodies
 * (cortical shell 1000, cancellous 300) separated by discs (80) with spinous processes; ribs (700); a
 * sternum (600). Gaussian-like noise (sigma about 20 HU) is added everywhere, and values are clamped to
 * -1024..3071 (what a 12-bit CT stores). */
#ifndef VOXLABEL_PHANTOM_H
#define VOXLABEL_PHANTOM_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_phantom_options {
    int64_t nx, ny, nz;       /* voxels: columns, rows, slices */
    double pixel_spacing_mm;  /* in-plane spacing, x and y */
    double slice_spacing_mm;  /* distance between slices */
    uint64_t seed;            /* noise seed; the anatomy does not depend on it */
} vl_phantom_options;

/* 256x256x120, 0.8 mm pixels, 1.25 mm slices, seed 1. */
void vl_phantom_options_default(vl_phantom_options *options);

/* Creates `hu` (I16) with LPS geometry of an axial scan: direction identity, the image centred on the
 * scanner axis (x = y = 0 at the centre of the field of view) and z increasing towards the head.
 * Anatomy scales with the field of view; nodules and vessels keep their sizes in mm.
 * VL_ERR_ARGUMENT for non-positive sizes or spacings. */
vl_status vl_phantom_generate(const vl_phantom_options *options, vl_volume *hu);

#ifdef __cplusplus
}
#endif
#endif
