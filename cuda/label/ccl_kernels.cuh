/* Launchers of the labeller's phases (ccl_blocks.cu, ccl_relabel.cu, ccl_size_order.cu), driven by
 * ccl_gpu.cu. All are asynchronous on `stream` and return the launch error. */
#ifndef VL_CCL_KERNELS_CUH
#define VL_CCL_KERNELS_CUH

#include <cuda_runtime.h>

#include "ccl_common.cuh"

namespace vlccl {

/* Scratch of the block union-find: the blocks with foreground, in launch order, while they fit in
 * `capacity` (sparse volumes); *count is how many there were. Phase 1 sets `listed` (host) to that
 * count when the list held them all, else to kEmpty. */
struct BlockList {
    uint32_t *entries;
    uint32_t *count;
    uint32_t capacity;
    uint32_t listed;
};

/* Phase 1 (ccl_blocks.cu): the forest: every piece's parent cell (ccl_block_grid.cuh) := a parent of its
 * representative. */
cudaError_t union_find_blocks(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, BlockList &list,
                              const Grid &g, cudaStream_t stream);

/* Phase 2 (ccl_relabel.cu): every piece's representative := its root; root_bits (one bit per node,
 * zeroed by the caller) := the roots; segment_roots[s] (zeroed by the caller) := the roots in counting
 * segment s. Visits only the listed blocks when phase 1 listed them all. */
cudaError_t flatten_roots(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, uint32_t *root_bits,
                          uint32_t *segment_roots, const BlockList &list, const Grid &g, cudaStream_t stream);

/* Phase 3: a root's label is 1 + (roots before it in node order), from the scanned per-segment root
 * counts and root_bits. One pass over the units writes every voxel: new_label[label-1] (or the label
 * itself where new_label is null), 0 for background, and with `sizes` (zeroed by the caller) adds every
 * unit's voxels to sizes[label-1]. */
cudaError_t write_labels(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, const uint32_t *root_bits,
                         const uint32_t *segment_offset, unsigned long long *sizes, const uint32_t *new_label,
                         const Grid &g, cudaStream_t stream);

/* The sizes alone (sizes zeroed by the caller), before order_by_size: the `size` order writes the voxels
 * afterwards, through the table. Visits only the listed blocks when phase 1 listed them all. */
cudaError_t count_sizes(int connectivity, bool xy, const uint8_t *mask, uint32_t *labels, const uint32_t *root_bits,
                        const uint32_t *segment_offset, unsigned long long *sizes, const BlockList &list,
                        const Grid &g, cudaStream_t stream);

} // namespace vlccl

#endif
