/* voxlabel: connected-component labelling with MATLAB bwlabeln numbering.
 *
 * Components of the nonzero voxels of a mask get labels 1..N in ascending order of a per-component
 * key, the minimum over the component's voxels of (DESIGN §4):
 *   VL_ORDER_MATLAB     z*nx*ny + x*ny + y   (bwlabeln on V(y+1,x+1,z+1), volumes stacked from dicomread)
 *   VL_ORDER_MATLAB_XY  z*nx*ny + y*nx + x   (bwlabeln on V(x+1,y+1,z+1); scipy, cc3d and ITK raster order)
 *   VL_ORDER_SIZE       descending voxel count, ties by the MATLAB key (ITK RelabelComponentImageFilter)
 * Connectivity 6, 18, 26 is 3D; 4 and 8 label every z-slice on its own (numbering stays global, as
 * Octave's bwlabeln(BW, 8) does on a 3D array). */
#ifndef VOXLABEL_LABEL_H
#define VOXLABEL_LABEL_H

#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_label_order {
    VL_ORDER_MATLAB = 0,
    VL_ORDER_MATLAB_XY,
    VL_ORDER_SIZE
} vl_label_order;

typedef enum vl_device_kind {
    VL_DEVICE_AUTO = 0,  /* a GPU when one is usable, else the CPU */
    VL_DEVICE_CPU,
    VL_DEVICE_GPU
} vl_device_kind;

typedef struct vl_label_options {
    int connectivity;        /* 6, 18, 26 (default) or 4, 8 */
    vl_label_order order;    /* default VL_ORDER_MATLAB */
    int threads;             /* CPU threads; 0 = all online cores */
    vl_device_kind device;   /* default VL_DEVICE_AUTO */
    int gpu_index;           /* CUDA device ordinal for VL_DEVICE_GPU / AUTO */
    uint64_t gpu_memory;     /* device bytes the GPU labeller plans with; 0 = what the device has free.
                              * A volume that does not fit is labelled in z-slabs (same result). */
    vl_progress progress;
} vl_label_options;

typedef struct vl_label_result {
    uint32_t count;              /* N: labels are 1..N */
    uint64_t *sizes;             /* sizes[k-1] = voxels of label k; malloc'd, free with vl_label_result_free */
    vl_device_kind device_used;  /* VL_DEVICE_CPU or VL_DEVICE_GPU */
    char device_name[128];       /* "cpu (2 threads)", "NVIDIA H200 (gpu:0)", "NVIDIA H200 (gpu:0), 3 z-slabs" */
    int64_t slabs;               /* z-slabs the GPU labelled (1 = the whole volume at once); 0 on the CPU */
    char fallback_reason[256];   /* why AUTO fell back to the CPU, "" otherwise */
    int gpu_failed;              /* AUTO fell back because a usable GPU failed (out of memory, CUDA error) */
} vl_label_result;

void vl_label_options_default(vl_label_options *options);
const char *vl_label_order_name(vl_label_order order);
/* Parses "matlab", "matlab-xy" or "size". */
vl_status vl_label_order_parse(const char *text, vl_label_order *order);
int vl_connectivity_is_valid(int connectivity);

/* Labels the nonzero voxels of `mask` (U8) into `labels` (created here as U32, same geometry). */
vl_status vl_label_volume(const vl_volume *mask, vl_volume *labels,
                          const vl_label_options *options, vl_label_result *result);

/* The CPU reference labeller, which vl_label_volume uses for VL_DEVICE_CPU. */
vl_status vl_label_volume_cpu(const vl_volume *mask, vl_volume *labels,
                              const vl_label_options *options, vl_label_result *result);

/* Keeps components with at least `min_size` voxels (0 = all) and then the `largest` biggest
 * (0 = all; ties go to the lower label), renumbering the survivors 1..M in their existing
 * relative order (so the labelling order holds) and updating result->sizes and result->count. */
vl_status vl_label_filter(vl_volume *labels, vl_label_result *result, uint64_t min_size,
                          uint32_t largest);

void vl_label_result_free(vl_label_result *result);

#ifdef __cplusplus
}
#endif
#endif
