/* voxlabel: connected-component labelling with MATLAB bwlabeln numbering.
 *
 * Components of the nonzero voxels of a mask get labels 1..N in ascending order of a per-component
 * key, the minimum over the component's voxels of (docs/design.md §4):
 *   VL_ORDER_MATLAB     z*nx*ny + x*ny + y   (bwlabeln on V(y+1,x+1,z+1), volumes stacked from dicomread)
 *   VL_ORDER_MATLAB_XY  z*nx*ny + y*nx + x   (bwlabeln on V(x+1,y+1,z+1); scipy, cc3d and ITK raster order)
 *   VL_ORDER_SIZE       descending voxel count, ties by the MATLAB key
 *   VL_ORDER_SIZE_RASTER descending voxel count, ties by the matlab-xy (raster) key: exactly the numbering of
 *                       ITK's ConnectedComponentImageFilter + RelabelComponentImageFilter on V(x,y,z)
 * Connectivity 6, 18, 26 is 3D; 4 and 8 label every z-slice on its own (numbering stays global, as
 * Octave's bwlabeln(BW, 8) does on a 3D array). */
#ifndef VOXLABEL_LABEL_H
#define VOXLABEL_LABEL_H

#include "voxlabel/device.h"
#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_label_order {
    VL_ORDER_MATLAB = 0,
    VL_ORDER_MATLAB_XY,
    VL_ORDER_SIZE,
    VL_ORDER_SIZE_RASTER
} vl_label_order;

typedef struct vl_label_options {
    int connectivity;        /* 6, 18, 26 (default) or 4, 8 */
    vl_label_order order;    /* default VL_ORDER_MATLAB */
    int threads;             /* CPU threads; 0 = all online cores */
    vl_device device;        /* default AUTO on GPU 0. A volume that does not fit device.gpu_memory (or
                              * the device's free memory) is labelled in z-slabs, with the same result. */
    vl_progress progress;
} vl_label_options;

typedef struct vl_label_result {
    uint32_t count;              /* N: labels are 1..N */
    uint64_t *sizes;             /* sizes[k-1] = voxels of label k; malloc'd, free with vl_label_result_free */
    vl_device_outcome outcome;   /* where it ran, and why AUTO fell back to the CPU if it did */
    char device_name[128];       /* "cpu (2 threads)", "NVIDIA H200 (gpu:0)", "NVIDIA H200 (gpu:0), 3 z-slabs" */
    int64_t slabs;               /* z-slabs the GPU labelled (1 = the whole volume at once); 0 on the CPU */
    uint32_t *classes;           /* multilabel only (else NULL): classes[k-1] = class value of label k */
} vl_label_result;

void vl_label_options_default(vl_label_options *options);
const char *vl_label_order_name(vl_label_order order);
/* Parses "matlab", "matlab-xy", "size" or "size-raster". */
vl_status vl_label_order_parse(const char *text, vl_label_order *order);
/* 1 for the raster family (matlab-xy, size-raster): keys and ties in x-fastest order, and a MAT file
 * written or read as V(x,y,z); 0 for the column-major family (matlab, size). */
int vl_label_order_is_raster(vl_label_order order);
/* 1 for the orders by descending size (size, size-raster). */
int vl_label_order_by_size(vl_label_order order);
int vl_connectivity_is_valid(int connectivity);

/* Labels the nonzero voxels of `mask` (U8) into `labels` (created here as U32, same geometry). */
vl_status vl_label_volume(const vl_volume *mask, vl_volume *labels,
                          const vl_label_options *options, vl_label_result *result);

/* The CPU reference labeller, which vl_label_volume uses for VL_DEVICE_CPU. */
vl_status vl_label_volume_cpu(const vl_volume *mask, vl_volume *labels,
                              const vl_label_options *options, vl_label_result *result);

/* Multilabel labelling of a class map (docs/multilabel.md): `classes` is u8, u16 or u32 (or i16 without
 * negative values), 0 = background. Two voxels join only when they are neighbours under the
 * connectivity and hold the same class; the components of all classes are numbered 1..N together, by
 * the same minimum-key rule and orders as vl_label_volume, and result->classes gives each one's class.
 * A float class map or a negative class is refused (VL_ERR_ARGUMENT) before any output is made. */
vl_status vl_label_multilabel(const vl_volume *classes, vl_volume *labels, const vl_label_options *options,
                              vl_label_result *result);

/* The CPU reference of vl_label_multilabel. */
vl_status vl_label_multilabel_cpu(const vl_volume *classes, vl_volume *labels, const vl_label_options *options,
                                  vl_label_result *result);

/* VL_OK when `classes` can be labelled by vl_label_multilabel: an unsigned integer type, or i16 with no
 * negative voxel; the error names the first negative voxel. */
vl_status vl_class_map_check(const vl_volume *classes);

/* Keeps components with at least `min_size` voxels (0 = all) and then the `largest` biggest
 * (0 = all; ties go to the lower label), renumbering the survivors 1..M in their existing
 * relative order (so the labelling order holds) and updating result->sizes and result->count. */
vl_status vl_label_filter(vl_volume *labels, vl_label_result *result, uint64_t min_size,
                          uint32_t largest);

/* Per-class clean-up of a multilabel result (result->classes set): keeps the components with at least
 * `min_size` voxels (0 = all) and then, within each class, the `largest_per_class` biggest (0 = all; ties
 * to the lower label); the survivors are renumbered 1..M in their existing relative order, with their
 * sizes and classes. */
vl_status vl_label_filter_per_class(vl_volume *labels, vl_label_result *result, uint64_t min_size,
                                    uint32_t largest_per_class);

/* How a cleaned class map fills the voxels of removed components. */
typedef enum vl_class_fill {
    VL_FILL_BACKGROUND = 0, /* removed voxels become 0 */
    VL_FILL_NEIGHBOUR       /* a removed component takes the class of the surviving voxels it touches most
                             * (face neighbours; ties to the lower class), else 0 */
} vl_class_fill;

/* The cleaned class map: `cleaned` (created here, the dtype and geometry of `classes`) holds the class of
 * every voxel that a surviving component of `labels` covers; voxels of `classes` that no surviving
 * label covers are removed islands (components under `connectivity`), filled by `fill`. */
vl_status vl_class_map_clean(const vl_volume *classes, const vl_volume *labels, vl_class_fill fill, int connectivity,
                             vl_volume *cleaned);

void vl_label_result_free(vl_label_result *result);

/* Per-slice 2D labels of a stack: every z-slice labelled on its own with connectivity 4 or 8, labels
 * 1..count[z] in each slice, numbered in MATLAB bwlabeln order within the slice (ascending x*ny + y of
 * each component's first pixel, i.e. column-major). */
typedef struct vl_slice_labels {
    vl_volume labels;      /* U32, same size and geometry as the mask */
    uint32_t *count;       /* count[z]: components in slice z */
    uint32_t *first;       /* first[z]: the global label (vl_label_volume, conn 4/8) of label 1 of slice z */
    vl_device_outcome outcome; /* where the stack was labelled */
} vl_slice_labels;

/* Labels every slice of a U8 mask through vl_label_volume (one call for the whole stack, on the GPU when
 * `device` selects it; NULL means AUTO on GPU 0): per-slice label = global label - first[z] + 1. */
vl_status vl_label_slices(const vl_volume *mask, int connectivity, const vl_device *device,
                          vl_slice_labels *result);
void vl_slice_labels_free(vl_slice_labels *labels);

#ifdef __cplusplus
}
#endif
#endif
