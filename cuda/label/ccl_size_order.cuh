/* `size` and `size-raster` orders on the device (cuda/label/ccl_size_order.cu). */
#ifndef VL_CCL_SIZE_ORDER_CUH
#define VL_CCL_SIZE_ORDER_CUH

#include <cuda_runtime.h>

#include "ccl_kernels.cuh"

namespace vlccl {

/* Device scratch that order_by_size needs for `count` components. */
size_t size_order_scratch_bytes(uint32_t count, int64_t voxels);

/* For labels 1..count in matlab order with their sizes: *new_label (in scratch) := each label's number
 * in descending size order, ties by the current label; `sizes` is permuted to match. The labels
 * themselves are written afterwards, through the table (write_labels). */
cudaError_t order_by_size(unsigned long long *sizes, uint32_t count, int64_t voxels, void *scratch,
                          const uint32_t **new_label, cudaStream_t stream);

} // namespace vlccl

#endif
