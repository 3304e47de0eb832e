/* Internal, CUDA sources only: the filter bank on the device, pass for pass the CPU reference
 * (src/filters/filters_cpu.c): the same taps, the same reflect border, every pass's sum the same chain of fused
 * multiply-adds (__fmaf_rn, fmaf on the CPU), the per-voxel steps and eigenvalues from src/filters/filter_voxel.h
 * (no transcendental function), so the device's channels equal the CPU's bit for bit. The image lives on the
 * device as float32; a slab's channels are computed into a float32 buffer that prediction consumes at once. */
#ifndef VL_FILTERS_GPU_CUH
#define VL_FILTERS_GPU_CUH
#include <cuda_runtime.h>

#include "filters/filters_internal.h"

typedef struct vl_gpu_filters vl_gpu_filters;

/* Uploads the image (as float32) and the bank's taps for its spacing. */
vl_status vl_gpu_filters_create(const vl_volume *image, const vl_filter_bank *bank, vl_gpu_filters **filters);
void vl_gpu_filters_destroy(vl_gpu_filters *filters);
/* Only the channels with wanted[c] != 0 need be right from now on (one flag per channel): a sigma none of whose
 * channels is wanted is skipped, and so are the DoG's smoothing and the structure tensor where none of their
 * channels is wanted, and unwanted offset features; the other channels of a computed sigma are still written
 * (unwanted ones may hold any value). */
void vl_gpu_filters_select(vl_gpu_filters *filters, const uint8_t *wanted);
/* Every channel on `box` into channels_device (float32, channel after channel, x fastest over the box). Each
 * sigma's passes run on groups of at least `pass_planes` z planes (and at least 4 of its z radii; 0: the whole
 * box at once); the channels are the same bits whatever the grouping. */
vl_status vl_gpu_filters_box(vl_gpu_filters *filters, const vl_box *box, float *channels_device, cudaStream_t stream,
                             int pass_planes);

#endif
