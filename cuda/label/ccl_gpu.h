/* Internal: the CUDA labeller on device buffers, for vl_label_volume_gpu (cuda/label/ccl_gpu.cu), the GPU
 * tests and bench/. Plain C so that C programs can call it. */
#ifndef VL_CCL_GPU_H
#define VL_CCL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/label.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_gpu_label_run {
    uint32_t count;                  /* N: labels are 1..N */
    unsigned long long *sizes;       /* device array of N voxel counts; free with vl_gpu_label_run_free */
    float union_ms;                  /* union-find: the component forest is complete */
    float total_ms;                  /* union-find + relabel to 1..N in the order + sizes */
    size_t scratch_bytes;            /* device bytes used beyond the mask and the labels */
    void *stream;                    /* the cudaStream_t the run was queued on; sizes are freed on it */
} vl_gpu_label_run;

/* Largest volume the device labeller takes: nodes (voxel pairs) must number below 2^32. */
int vl_gpu_label_shape_ok(int64_t nx, int64_t ny, int64_t nz);

/* Labels the nonzero voxels of the device mask (nx*ny*nz bytes, x fastest) into the device labels
 * (nx*ny*nz u32), exactly like vl_label_volume_cpu. Runs on `stream` (a cudaStream_t, NULL = default)
 * of the current device and returns when done. With `timed`, fills union_ms and total_ms from CUDA
 * events. The mask is read only. VL_ERR_MEMORY / VL_ERR_DEVICE on CUDA failures. */
vl_status vl_gpu_label_device(const uint8_t *mask, uint32_t *labels, int64_t nx, int64_t ny, int64_t nz,
                              int connectivity, vl_label_order order, void *stream, int timed,
                              vl_gpu_label_run *run);

/* Frees run->sizes, ordered on the run's stream (no device-wide synchronisation). */
void vl_gpu_label_run_free(vl_gpu_label_run *run);

#ifdef __cplusplus
}
#endif
#endif
