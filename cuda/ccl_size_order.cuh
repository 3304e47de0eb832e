/* `size` order on the device (cuda/ccl_size_order.cu). */
#ifndef VL_CCL_SIZE_ORDER_CUH
#define VL_CCL_SIZE_ORDER_CUH

#include <cuda_runtime.h>

#include "ccl_kernels.cuh"

namespace vlccl {

/* Device scratch that order_by_size needs for `count` components. */
size_t size_order_scratch_bytes(uint32_t count, int64_t voxels);

/* Renumbers labels (1..count, matlab order, with their sizes) by descending size, ties by the
 * current label; permutes `sizes` to match. */
cudaError_t order_by_size(uint32_t *labels, int64_t voxels, unsigned long long *sizes, uint32_t count,
                          void *scratch, cudaStream_t stream);

} // namespace vlccl

#endif
