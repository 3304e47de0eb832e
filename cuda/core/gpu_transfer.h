/* Large copies between pageable host memory and the device, through pinned staging buffers that are
 * allocated once and reused (docs/design.md §5). Same contract as cudaMemcpy (synchronous); small copies,
 * or any failure to set the staging up, take plain cudaMemcpy. */
#ifndef VL_GPU_TRANSFER_H
#define VL_GPU_TRANSFER_H

#include <cuda_runtime.h>
#include <stddef.h>

cudaError_t vl_gpu_upload(void *device, const void *host, size_t bytes);
cudaError_t vl_gpu_download(void *host, const void *device, size_t bytes);

#endif
