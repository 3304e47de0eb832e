/* voxlabel: labelling a mask that already lives in CUDA device memory (CuPy, PyTorch, any DLPack producer),
 * without a host round trip, on the caller's stream. Same numbering as vl_label_volume (label.h). */
#ifndef VOXLABEL_LABEL_DEVICE_H
#define VOXLABEL_LABEL_DEVICE_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/label.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Labels the nonzero bytes of `mask` (nx*ny*nz u8, x fastest, device memory of CUDA device `gpu_index`) into
 * `labels` (nx*ny*nz u32 on the same device), with labels 1..*count in `order`. The work is queued on
 * `stream` (a cudaStream_t; NULL = the legacy default stream) and the call returns when it is done; the
 * calling thread's current device is left as it was. Both pointers are checked to be device memory of
 * `gpu_index` (VL_ERR_ARGUMENT otherwise). VL_ERR_DEVICE in a build without CUDA or beyond the GPU
 * labeller's limits (fewer than 2^32 voxel pairs); VL_ERR_MEMORY when the scratch space does not fit. */
vl_status vl_label_device_array(const uint8_t *mask, uint32_t *labels, int64_t nx, int64_t ny, int64_t nz,
                                int connectivity, vl_label_order order, int gpu_index, void *stream,
                                uint32_t *count);

#ifdef __cplusplus
}
#endif
#endif
